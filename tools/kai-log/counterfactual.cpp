#include "tools/kai-log/counterfactual.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "actors/scheduler/core/behaviour_version.hpp"
#include "actors/scheduler/core/cycle.hpp"
#include "actors/scheduler/core/pod_status.hpp"
#include "actors/scheduler/core/usage_history.hpp"
#include "events/projection.hpp"
#include "k8s/model/well_known_names.hpp"
#include "storage/restore.hpp"
#include "tools/kai-log/logged_configs.hpp"
#include "tools/kai-log/recorded_history.hpp"

namespace kai::kailog {

const char* to_string(PodEnd e) {
  switch (e) {
    case PodEnd::kCompleted: return "completed";
    case PodEnd::kDeletedByUser: return "deleted";
    case PodEnd::kEvicted: return "evicted";
    case PodEnd::kRunningAtEnd: return "running at end";
    case PodEnd::kNeverBound: return "never bound";
  }
  return "unknown";
}

namespace {

bool is_gpu_group_label(const std::string& key) {
  const std::string prefix = model::kGpuGroupLabel;
  return key == prefix || key.rfind(prefix + "/", 0) == 0;
}

bool is_finished_phase(const std::string& phase) { return phase == "Succeeded" || phase == "Failed"; }

/// One of this scheduler's pods in the simulated cluster.
///
/// A pod *follows* the recording while every decision the simulation made about it is the one the
/// recording made in the same cycle: its state is then the recording's (its object as the log shows
/// it, the recording's binds and evictions in flight), which is what makes an unchanged configuration
/// decide exactly as recorded. From the first cycle the two disagree about it, the simulation keeps
/// its own state: binds take effect at once, evictions after the recording's median latency.
struct SimPod {
  model::Pod object;      ///< Its last recorded version (spec, labels; placement overridden below).
  bool follows = true;
  // Placement, finished or not: the recording's while following, the simulation's after.
  bool bound = false;
  std::string node;
  std::vector<std::string> gpu_groups;
  int64_t bind_ms = 0;
  uint64_t bind_cycle = 0;
  bool finished = false;
  std::string final_phase;
  int64_t finish_ms = 0;
  // The simulation's own eviction (not following): terminating until `leaves_ms`.
  bool evicted = false;
  int64_t evicted_ms = 0;
  uint64_t evict_cycle = 0;
  int64_t leaves_ms = 0;
  bool deleted = false;  ///< Its user (or a controller) deleted it, as recorded.
  int64_t deleted_ms = 0;
  bool pending_at_start = false;
  std::string queue;
  double gpus = 0;
  bool gpus_allocated = false;  ///< `gpus` was measured allocated (fraction placed), not estimated.

  bool alive() const { return !evicted && !deleted; }
};

class Counterfactual {
 public:
  Counterfactual(const storage::EventLog& log, const CounterfactualOptions& options, std::ostream& err)
      : log_(log), options_(options), err_(err) {}

  model::Result<CounterfactualResult> run() {
    auto history = read_recorded_history(log_, err_);
    if (!history) return history.status();
    history_ = std::move(history).value();
    for (const auto& c : history_.configs) configs_.record(c);
    eviction_latency_ms_ = history_.eviction_latency_ms();
    for (const auto& c : history_.cycles) {
      if (options_.from_ms && c.start.now_ms < *options_.from_ms) continue;
      if (options_.to_ms && c.start.now_ms > *options_.to_ms) continue;
      cycles_.push_back(c);
    }
    if (cycles_.empty()) return model::Status::error("no recorded cycle falls in the window");
    progress_ = options_.progress || (options_.progress_if_long && cycles_.size() >= kLongWindowCycles);
    if (options_.config_text) {
      auto parsed = session_options(*options_.config_text, "");
      if (!parsed) return model::Status::error("--config: " + parsed.message());
    }
    result_.from_ms = options_.from_ms.value_or(cycles_.front().start.now_ms);
    result_.to_ms = options_.to_ms.value_or(cycles_.back().start.now_ms);

    const uint64_t start = cycles_.front().start.log_position;
    auto restored = storage::restore_state(log_, start);
    if (!restored) return model::Status::error("the window's start (record " + std::to_string(start) +
                                               ") cannot be restored: " + restored.message());
    state_ = std::move(restored.value().state);
    sim_records_ = state_.records;

    size_t next = 0;
    applied_ = start;
    auto st = log_.read(start + 1, UINT64_MAX, [&](uint64_t seq, const model::Result<events::Event>& e) {
      while (next < cycles_.size() && cycles_[next].start.log_position < seq) {
        wake_until(cycles_[next].start.now_ms);
        run_cycle(cycles_[next++], false);
      }
      if (next == cycles_.size()) return false;
      if (e) {
        wake_until(std::min(e->timestamp_us / 1000, cycles_[next].start.now_ms));
        (void)events::apply(state_, *e);  // unreadable records were named by the history pass
      }
      applied_ = seq;
      return true;
    });
    if (!st) return st;
    while (next < cycles_.size()) {
      wake_until(cycles_[next].start.now_ms);
      run_cycle(cycles_[next++], false);
    }
    wake_until(result_.to_ms + 1);
    if (progress_) err_ << "\n";
    finish();
    return std::move(result_);
  }

 private:
  const RecordedPod* recorded(const std::string& uid) const {
    auto it = history_.pods.find(uid);
    return it == history_.pods.end() ? nullptr : &it->second;
  }

  bool is_ours(const model::Pod& pod, const std::string& scheduler_name) const {
    return pod.scheduler_name == scheduler_name && pod.meta.namespace_ != model::kReservationNamespace;
  }

  /// The recording's decisions in flight at the current position, by pod UID (binds and evictions
  /// its cycles count as done until the watch or the binder says otherwise).
  std::map<std::string, const events::Decision*> recorded_in_flight() const {
    std::map<std::string, const events::Decision*> out;
    for (const auto& [seq, a] : state_.records.assumed) out[a.decision.pod_uid] = &a.decision;
    return out;
  }

  /// A following pod's placement and phase, as the recording has them now.
  void mirror(SimPod& s, const model::Pod& pod, const events::Decision* in_flight, const RecordedCycle& c) {
    const RecordedPod* h = recorded(pod.meta.uid);
    const bool bind_in_flight = in_flight != nullptr && in_flight->kind == events::DecisionKind::kBind;
    const bool bound = !pod.node_name.empty() || bind_in_flight;
    if (bound && !s.bound) {
      s.bind_ms = h != nullptr && h->bind_ms() ? *h->bind_ms() : c.start.now_ms;
      s.bind_cycle = h != nullptr ? h->bind_cycle : 0;
    }
    s.bound = bound;
    s.node = !pod.node_name.empty() ? pod.node_name : bind_in_flight ? in_flight->node : std::string();
    s.gpu_groups.clear();
    if (!pod.node_name.empty()) {
      for (const auto& [k, v] : pod.meta.labels)
        if (is_gpu_group_label(k)) s.gpu_groups.push_back(v);
    } else if (bind_in_flight) {
      s.gpu_groups = in_flight->gpu_groups;
    }
    if (is_finished_phase(pod.phase) && !s.finished) {
      s.finished = true;
      s.final_phase = pod.phase;
      s.finish_ms = h != nullptr && h->finished ? h->finished->ms : c.start.now_ms;
    }
  }

  /// Brings the simulated pods to the recording at the cycle's position: arrivals, new versions of
  /// their objects, following pods' state, deletions by their users.
  void sync_pods(const RecordedCycle& c) {
    const auto in_flight = recorded_in_flight();
    std::set<std::string> present;
    for (const auto& [key, pod] : state_.pods) {
      if (!is_ours(pod, c.start.scheduler_name)) continue;
      present.insert(pod.meta.uid);
      auto [it, added] = sim_.try_emplace(pod.meta.uid);
      SimPod& s = it->second;
      s.object = pod;
      auto flight = in_flight.find(pod.meta.uid);
      if (added) s.pending_at_start = pod.node_name.empty() && flight == in_flight.end();
      if (s.follows) mirror(s, pod, flight == in_flight.end() ? nullptr : flight->second, c);
    }
    for (auto& [uid, s] : sim_) {
      if (s.follows || !s.alive() || present.count(uid)) continue;
      const RecordedPod* h = recorded(uid);
      if (h != nullptr && h->evicted) continue;  // the recording's eviction: the simulation decides its own
      s.deleted = true;
      s.deleted_ms = h != nullptr && h->deleted ? h->deleted->ms : c.start.now_ms;
    }
    present_ = std::move(present);
  }

  /// How long a placed pod runs in the simulation, if that is known and not the recording's to tell:
  /// a pod that follows the recording finishes when the recording shows it, unless the recording
  /// never shows it finish and --default-runtime gives it an end.
  std::optional<int64_t> simulated_run_ms(const SimPod& s, const RecordedPod* h) const {
    if (s.follows) {
      if (h != nullptr && h->finished) return std::nullopt;
      return options_.default_runtime_ms;
    }
    auto run = h != nullptr ? h->run_ms() : std::nullopt;
    return run ? run : options_.default_runtime_ms;
  }

  /// Pods finish after their recorded (or default) run time from the simulated bind. A following
  /// pod that finishes so (by the default run time) parts ways with the recording.
  void complete_pods(const RecordedCycle& c) {
    for (auto& [uid, s] : sim_) {
      if (!s.bound || s.finished || !s.alive()) continue;
      const RecordedPod* h = recorded(uid);
      auto run = simulated_run_ms(s, h);
      if (run && s.bind_ms + *run <= c.start.now_ms) {
        s.follows = false;
        s.finished = true;
        s.finish_ms = s.bind_ms + *run;
        s.final_phase = h != nullptr && !h->final_phase.empty() ? h->final_phase : "Succeeded";
      }
    }
  }

  /// Whether a pod that no longer follows the recording is in the simulated cluster at the cycle:
  /// not deleted, and not evicted or still terminating after its eviction.
  static bool in_cluster(const SimPod& s, const RecordedCycle& c) {
    if (s.deleted) return false;
    return !s.evicted || c.start.now_ms < s.leaves_ms;
  }

  /// A pod that no longer follows the recording, as the simulation has it: the recorded object
  /// moved to the simulated node and phase.
  model::Pod simulated(const SimPod& s, const model::Pod& recorded_object) const {
    model::Pod p = recorded_object;
    p.node_name = s.bound ? s.node : std::string();
    for (auto it = p.meta.labels.begin(); it != p.meta.labels.end();) {
      it = is_gpu_group_label(it->first) ? p.meta.labels.erase(it) : std::next(it);
    }
    if (s.bound) {
      p.phase = s.finished ? s.final_phase : "Running";
      if (s.gpu_groups.size() == 1) {
        p.meta.labels[model::kGpuGroupLabel] = s.gpu_groups.front();
      } else {
        for (const auto& g : s.gpu_groups) p.meta.labels[std::string(model::kGpuGroupLabel) + "/" + g] = g;
      }
    } else {
      p.phase = "Pending";
    }
    const RecordedPod* h = recorded(s.object.meta.uid);
    if (h != nullptr && h->evicted) p.meta.deletion_timestamp.reset();  // the recording's eviction
    if (s.evicted) p.meta.deletion_timestamp = s.evicted_ms / 1000;     // the simulation's, terminating
    return p;
  }

  /// The cluster the cycle sees.
  model::ClusterObjects simulated_cluster(const RecordedCycle& c) {
    model::ClusterObjects objects = state_.to_objects();
    // (node, GPU group) of the simulated pods. A reservation pod outlives its last sharer by one
    // cycle: the cycle that finds its group unused deletes it (the daemon's clean-up).
    std::set<std::pair<std::string, std::string>> held_groups;
    for (const auto& [uid, s] : sim_) {
      const bool there = s.follows ? present_.count(uid) != 0 : in_cluster(s, c);
      if (!there || !s.bound || s.finished) continue;
      for (const auto& g : s.gpu_groups) {
        held_groups.emplace(s.node, g);
        if (!s.follows) simulated_groups_.emplace(s.node, g);
      }
    }
    std::set<std::pair<std::string, std::string>> reserved = held_groups;
    reserved.insert(held_before_.begin(), held_before_.end());
    held_before_ = std::move(held_groups);
    std::map<std::string, model::Pod> pods;  // by "namespace/name", the order to_objects() gives
    std::set<std::string> listed;
    included_others_.clear();
    for (auto& pod : objects.pods) {
      std::string key = pod.meta.namespace_ + "/" + pod.meta.name;
      if (pod.meta.namespace_ == model::kReservationNamespace) {
        // A group only following pods ever shared is the recording's: its reservation pod comes and
        // goes as recorded (the clean-up's own latency included).
        auto group = pod.meta.labels.find(model::kGpuGroupLabel);
        if (group == pod.meta.labels.end()) continue;
        const std::pair<std::string, std::string> node_group{pod.node_name, group->second};
        if (!simulated_groups_.count(node_group) || reserved.count(node_group)) {
          included_others_.insert(pod.meta.uid);
          pods.emplace(std::move(key), std::move(pod));
        }
        continue;
      }
      if (!is_ours(pod, c.start.scheduler_name)) {
        included_others_.insert(pod.meta.uid);
        pods.emplace(std::move(key), std::move(pod));
        continue;
      }
      listed.insert(pod.meta.uid);
      auto it = sim_.find(pod.meta.uid);
      if (it == sim_.end()) continue;
      if (it->second.follows) {
        pods.emplace(std::move(key), std::move(pod));
      } else if (in_cluster(it->second, c)) {
        pods.emplace(std::move(key), simulated(it->second, pod));
      }
    }
    for (const auto& [uid, s] : sim_) {
      if (s.follows || !in_cluster(s, c) || listed.count(uid)) continue;
      pods.emplace(s.object.meta.namespace_ + "/" + s.object.meta.name, simulated(s, s.object));
    }
    objects.pods.clear();
    objects.pods.reserve(pods.size());
    for (auto& [key, pod] : pods) objects.pods.push_back(std::move(pod));

    for (const auto& q : options_.queues) {
      auto it = std::find_if(objects.queues.begin(), objects.queues.end(),
                             [&](const model::Queue& o) { return o.meta.name == q.meta.name; });
      if (it == objects.queues.end()) {
        objects.queues.push_back(q);
      } else {
        model::Queue replaced = q;
        replaced.meta.uid = it->meta.uid;
        replaced.meta.creation_timestamp = it->meta.creation_timestamp;
        *it = std::move(replaced);
      }
    }
    // The job state the simulation wrote (last start, stale since), not the recording's.
    for (auto& pg : objects.pod_groups) {
      auto [it, added] = job_annotations_.try_emplace(pg.meta.uid);
      for (const char* key : {model::kLastStartAnnotation, model::kStaleSinceAnnotation}) {
        if (added) {
          auto a = pg.meta.annotations.find(key);
          if (a != pg.meta.annotations.end()) it->second[key] = a->second;
        }
        auto v = it->second.find(key);
        if (v != it->second.end()) {
          pg.meta.annotations[key] = v->second;
        } else {
          pg.meta.annotations.erase(key);
        }
      }
    }
    objects.bind_requests.clear();  // the recording's binder's; the simulation binds at once
    return objects;
  }

  /// The records the cycle reads: the simulation's own (job state, usage history), with the
  /// recording's decisions in flight and failed binds for the pods that follow it and for the
  /// other pods the cluster holds (reservation pods).
  void sync_records() {
    sim_records_.assumed.clear();
    for (const auto& [seq, a] : state_.records.assumed) {
      auto it = sim_.find(a.decision.pod_uid);
      if (it != sim_.end() ? it->second.follows : included_others_.count(a.decision.pod_uid) != 0)
        sim_records_.assumed.emplace(seq, a);
    }
    sim_records_.bind_failures.clear();
    for (const auto& [key, f] : state_.records.bind_failures) {
      auto it = sim_.find(f.pod_uid);
      if (it != sim_.end() && it->second.follows) sim_records_.bind_failures.emplace(key, f);
    }
  }

  const model::Result<core::SessionOptions>* cycle_options(const RecordedCycle& c) {
    const LoggedConfig* recorded = configs_.find(c.start.config_hash, log_);
    if (recorded == nullptr) return nullptr;
    if (!options_.config_text) return &recorded->options;
    auto [it, added] = overridden_.try_emplace(recorded->flags, model::Status::error(""));
    if (added) it->second = session_options(*options_.config_text, recorded->flags);
    return &it->second;
  }

  /// When the next pod finishes or leaves in the simulation only (not when the recording shows it):
  /// the recording's cycles, which ran when its own cluster changed, may not come then.
  std::optional<int64_t> next_wake_ms() const {
    std::optional<int64_t> wake;
    const auto consider = [&](int64_t ms) {
      if (ms > last_now_ms_ && ms <= result_.to_ms && (!wake || ms < *wake)) wake = ms;
    };
    for (const auto& [uid, s] : sim_) {
      if (s.evicted && !s.deleted) consider(s.leaves_ms);
      if (!s.bound || s.finished || !s.alive()) continue;
      if (auto run = simulated_run_ms(s, recorded(uid))) consider(s.bind_ms + *run);
    }
    return wake;
  }

  /// Runs a cycle at each simulated completion before `limit_ms`, as the daemon would when the pod's
  /// status changed: the last recorded cycle's configuration, the recording's state as it was then.
  void wake_until(int64_t limit_ms) {
    if (!last_recorded_) return;
    for (auto wake = next_wake_ms(); wake && *wake < limit_ms; wake = next_wake_ms()) {
      RecordedCycle c = *last_recorded_;
      c.start.now_ms = *wake;
      c.start.now = *wake / 1000;
      c.start.seed = last_recorded_->start.seed ^ (static_cast<uint64_t>(*wake) * 0x9E3779B97F4A7C15ULL);
      c.start.log_position = applied_;
      c.seq = applied_;
      run_cycle(c, true);
    }
  }

  void run_cycle(const RecordedCycle& c, bool added) {
    last_now_ms_ = c.start.now_ms;
    if (added) {
      ++result_.added_cycles;
    } else {
      ++result_.cycles;
      last_recorded_ = c;
    }
    if (!added && progress_ && (result_.cycles * 100 / cycles_.size() != (result_.cycles - 1) * 100 / cycles_.size()))
      err_ << "\rcounterfactual: cycle " << result_.cycles << "/" << cycles_.size() << " ("
           << result_.cycles * 100 / cycles_.size() << "%)" << std::flush;
    sync_pods(c);
    complete_pods(c);
    const auto* options = cycle_options(c);
    if (options == nullptr || !*options) {
      ++not_run_;
      if (not_run_ == 1)
        result_.notes.push_back("cycle " + std::to_string(c.start.cycle_id) + " not run: its configuration " +
                                (options == nullptr ? "is not in the log" : "does not parse: " + options->message()));
      return;
    }
    if (!options_.config_text) {
      const LoggedConfig* recorded = configs_.find(c.start.config_hash, log_);
      if (recorded->behaviour_version != core::kBehaviourVersion && ++older_behaviour_ == 1)
        result_.notes.push_back("cycles recorded by an older scheduling behaviour run with this build's");
    }
    const model::ClusterObjects objects = simulated_cluster(c);
    sync_records();
    core::CycleInput in;
    in.objects = model::ObjectRefs::of(objects);
    in.records = &sim_records_;
    in.options = options->value();
    in.options.now = c.start.now;
    in.options.now_ms = c.start.now_ms;
    in.options.seed = c.start.seed;
    in.options.scheduler_name = c.start.scheduler_name;
    in.cycle_id = c.start.cycle_id;
    in.usage_memo = &usage_memo_;
    in.reservation_cleanup = false;
    in.pod_group_writes = false;
    const core::CycleResult out = core::run_cycle(in);
    apply(*out.session, out.decisions, c, added);
    for (const auto& change : out.job_state_changes)
      (void)events::apply_record(sim_records_, events::Event{0, 0, events::kSchemaVersion, change});
    if (out.allocation)
      (void)events::apply_record(sim_records_, events::Event{0, 0, events::kSchemaVersion, *out.allocation});
    (void)events::apply_record(sim_records_, events::Event{c.seq, c.start.now_ms * 1000, events::kSchemaVersion, c.start});
  }

  /// The session's outcome: each pod's queue and GPUs are noted; pods whose decisions this cycle
  /// are not the recording's stop following it; the others' binds take effect at once and their
  /// victims leave after the recording's median eviction latency.
  void apply(const core::Session& ssn, const std::vector<events::Decision>& decisions, const RecordedCycle& c,
             bool added) {
    std::map<std::string, uint32_t> task_of;  // pod UID -> task
    for (uint32_t id = 0; id < ssn.tasks.size(); ++id) {
      const core::TaskInfo& t = ssn.tasks[id];
      if (t.ghost || t.pod == nullptr) continue;
      auto it = sim_.find(t.pod->meta.uid);
      if (it == sim_.end()) continue;
      task_of[t.pod->meta.uid] = id;
      SimPod& s = it->second;
      s.queue = ssn.jobs[t.job].queue_name;
      const bool holds = core::is_allocated_status(t.status) && t.status != core::PodStatus::kPipelined &&
                         t.status != core::PodStatus::kReleasing;
      if (holds) {
        s.gpus = ssn.allocated_quantities(t).gpu;
        s.gpus_allocated = true;
      } else if (!s.gpus_allocated) {
        const uint32_t one[] = {id};
        s.gpus = ssn.queue_request_of(one).gpu;
      }
    }
    std::map<std::string, std::vector<RecordedDecision>> mine;
    for (const auto& d : decisions) mine[d.pod_uid].push_back({c.start.cycle_id, d.kind, d.node});
    for (auto& [uid, s] : sim_) {
      if (!s.follows) continue;
      auto m = mine.find(uid);
      if (added) {  // an added cycle has no recorded decisions: deciding anything parts ways
        if (m != mine.end()) s.follows = false;
        continue;
      }
      std::vector<RecordedDecision> theirs;
      if (const RecordedPod* h = recorded(uid)) {
        for (const auto& d : h->decisions)
          if (d.cycle == c.start.cycle_id) theirs.push_back(d);
      }
      if (theirs != (m == mine.end() ? std::vector<RecordedDecision>{} : m->second)) s.follows = false;
    }
    // What the cycle decided, not what the pods' statuses say: a pod its user is deleting is
    // releasing too, and that is no eviction.
    for (const auto& d : decisions) {
      auto it = sim_.find(d.pod_uid);
      if (it == sim_.end() || it->second.follows) continue;
      SimPod& s = it->second;
      if (d.kind == events::DecisionKind::kBind && !s.bound) {
        s.bound = true;
        s.node = d.node;
        s.gpu_groups = d.gpu_groups;
        s.bind_ms = c.start.now_ms;
        s.bind_cycle = c.start.cycle_id;
      } else if (d.kind == events::DecisionKind::kEvict && s.bound && !s.finished && !s.evicted) {
        auto task = task_of.find(d.pod_uid);
        if (task != task_of.end() && ssn.moved_to(task->second) != nullptr) {
          // Moved by consolidation: recreated pending, to land where it was pipelined.
          s.bound = false;
          s.node.clear();
          s.gpu_groups.clear();
          continue;
        }
        s.evicted = true;
        s.evicted_ms = c.start.now_ms;
        s.evict_cycle = c.start.cycle_id;
        s.leaves_ms = c.start.now_ms + eviction_latency_ms_;
      }
    }
    for (const auto& [job_id, updates] : ssn.annotation_updates) {
      const model::PodGroup* pg = ssn.jobs[job_id].object;
      if (pg == nullptr) continue;
      auto& annotations = job_annotations_[pg->meta.uid];
      for (const auto& [key, value] : updates) {
        if (value) {
          annotations[key] = *value;
        } else {
          annotations.erase(key);
        }
      }
    }
  }

  /// Each pod's run in both worlds, clipped to the window.
  void finish() {
    const int64_t end = result_.to_ms;
    for (const auto& [uid, s] : sim_) {
      const RecordedPod* h = recorded(uid);
      PodComparison p;
      p.key = s.object.meta.namespace_ + "/" + s.object.meta.name;
      p.uid = uid;
      p.queue = s.queue.empty() ? "(none)" : s.queue;
      p.gpus = s.gpus;
      p.created_ms = h != nullptr ? h->created_ms : s.object.meta.creation_timestamp * 1000;
      p.pending_at_start = s.pending_at_start;
      p.run_time_known = h != nullptr && h->run_ms().has_value();
      p.recreated_after_eviction = h != nullptr && h->recreated_after_eviction;
      if (h != nullptr) p.recorded = recorded_run(*h, end);
      // A pod that followed the recording to the end had the recording's run.
      p.counterfactual = s.follows && h != nullptr ? p.recorded : simulated_run(s, end);
      result_.pods.push_back(std::move(p));
    }
    std::sort(result_.pods.begin(), result_.pods.end(),
              [](const PodComparison& a, const PodComparison& b) { return a.key != b.key ? a.key < b.key : a.uid < b.uid; });
    if (not_run_ > 1) result_.notes.push_back(std::to_string(not_run_) + " cycles not run for want of their configuration");
  }

  static PodRun recorded_run(const RecordedPod& h, int64_t end) {
    PodRun r;
    auto bind = h.bind_ms();
    if (!bind || *bind > end) return r;
    r.bind_ms = bind;
    r.bind_cycle = h.bind_cycle;
    r.node = h.node;
    r.end = PodEnd::kRunningAtEnd;
    r.end_ms = end;
    if (h.finished && h.finished->ms <= end) {
      r.end = PodEnd::kCompleted;
      r.end_ms = h.finished->ms;
    } else if (h.evicted && h.evicted->ms <= end) {
      r.end = PodEnd::kEvicted;
      r.end_ms = h.deleted ? std::min(end, h.deleted->ms) : h.evicted->ms;
      r.evict_cycle = h.evict_cycle;
    } else if (h.deleted && h.deleted->ms <= end) {
      r.end = PodEnd::kDeletedByUser;
      r.end_ms = h.deleted->ms;
    }
    r.end_ms = std::max(r.end_ms, *bind);
    return r;
  }

  static PodRun simulated_run(const SimPod& s, int64_t end) {
    PodRun r;
    if (!s.bound && !s.evicted) {
      r.end = PodEnd::kNeverBound;
      return r;
    }
    r.bind_ms = s.bind_ms;
    r.bind_cycle = s.bind_cycle;
    r.node = s.node;
    r.end = PodEnd::kRunningAtEnd;
    r.end_ms = end;
    if (s.finished && s.finish_ms <= end) {
      r.end = PodEnd::kCompleted;
      r.end_ms = s.finish_ms;
    } else if (s.evicted) {
      r.end = PodEnd::kEvicted;
      r.end_ms = std::min(end, s.leaves_ms);
      r.evict_cycle = s.evict_cycle;
    } else if (s.deleted) {
      r.end = PodEnd::kDeletedByUser;
      r.end_ms = s.deleted_ms;
    }
    r.end_ms = std::max(r.end_ms, s.bind_ms);
    return r;
  }

  const storage::EventLog& log_;
  const CounterfactualOptions& options_;
  std::ostream& err_;

  RecordedHistory history_;
  LoggedConfigs configs_;
  std::map<std::string, model::Result<core::SessionOptions>> overridden_;  // --config, by recorded flags
  std::vector<RecordedCycle> cycles_;  // those in the window

  events::ClusterState state_;  // the recording at the current position
  events::ScheduleRecords sim_records_;
  core::UsageMemo usage_memo_;
  std::map<std::string, SimPod> sim_;  // by UID
  std::set<std::string> present_;      // this scheduler's pods in the recording at the current position
  std::set<std::string> included_others_;  // other pods the simulated cluster holds (reservation pods...)
  std::set<std::pair<std::string, std::string>> held_before_;  // (node, GPU group) held at the last cycle
  /// (node, GPU group) a pod that no longer follows the recording has held: their reservation pods
  /// are the simulation's to keep or drop.
  std::set<std::pair<std::string, std::string>> simulated_groups_;
  std::map<std::string, std::map<std::string, std::string>> job_annotations_;  // PodGroup UID -> key -> value
  int64_t eviction_latency_ms_ = 0;  // the recording's median, for the simulation's own evictions
  bool progress_ = false;
  uint64_t applied_ = 0;             // state_ is the recording up to this record
  int64_t last_now_ms_ = 0;          // the clock of the last cycle run
  std::optional<RecordedCycle> last_recorded_;
  uint64_t not_run_ = 0, older_behaviour_ = 0;
  CounterfactualResult result_;
};

}  // namespace

model::Result<CounterfactualResult> run_counterfactual(const storage::EventLog& log,
                                                       const CounterfactualOptions& options, std::ostream& err) {
  return Counterfactual(log, options, err).run();
}

}  // namespace kai::kailog
