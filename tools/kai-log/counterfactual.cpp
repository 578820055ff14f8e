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

/// One of this scheduler's pods in the simulated cluster.
struct SimPod {
  model::Pod object;  ///< Its last recorded version (spec, labels; placement overridden below).
  bool bound = false;
  std::string node;
  std::vector<std::string> gpu_groups;
  int64_t bind_ms = 0;
  uint64_t bind_cycle = 0;
  bool finished = false;
  std::string final_phase;
  int64_t finish_ms = 0;
  bool evicted = false;
  int64_t evicted_ms = 0;
  uint64_t evict_cycle = 0;
  /// An evicted pod stays in the cluster, terminating, until it leaves: when the recording's pod
  /// left for the same eviction, else after the recording's median eviction latency.
  bool leaves_with_recording = false;
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
    start_from_assumed();

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
  /// The recording's binds in flight at the window's start (decided, not yet on the watch) are
  /// binds of the simulation too; its records start without them, as its binds take effect at once.
  void start_from_assumed() {
    for (const auto& [seq, a] : sim_records_.assumed) {
      if (a.decision.kind == events::DecisionKind::kBind) in_flight_binds_[a.decision.pod_uid] = a.decision;
    }
    sim_records_.assumed.clear();
  }

  const RecordedPod* recorded(const std::string& uid) const {
    auto it = history_.pods.find(uid);
    return it == history_.pods.end() ? nullptr : &it->second;
  }

  bool is_ours(const model::Pod& pod, const std::string& scheduler_name) const {
    return pod.scheduler_name == scheduler_name && pod.meta.namespace_ != model::kReservationNamespace;
  }

  /// Brings the simulated pods to the recording at the cycle's position: arrivals, new versions of
  /// their objects, deletions by their users.
  void sync_pods(const RecordedCycle& c) {
    const bool first = result_.cycles == 0;
    std::set<std::string> present;
    for (const auto& [key, pod] : state_.pods) {
      if (!is_ours(pod, c.start.scheduler_name)) continue;
      present.insert(pod.meta.uid);
      auto [it, added] = sim_.try_emplace(pod.meta.uid);
      SimPod& s = it->second;
      s.object = pod;
      if (!added) continue;
      const RecordedPod* h = recorded(pod.meta.uid);
      auto flight = in_flight_binds_.find(pod.meta.uid);
      if (!pod.node_name.empty()) {
        // Placed before the window (or created on its node): the simulation starts where it was.
        s.bound = true;
        s.node = pod.node_name;
        for (const auto& [k, v] : pod.meta.labels)
          if (is_gpu_group_label(k)) s.gpu_groups.push_back(v);
        s.bind_cycle = h != nullptr ? h->bind_cycle : 0;
        s.bind_ms = h != nullptr && h->bind_ms() ? *h->bind_ms() : c.start.now_ms;
      } else if (first && flight != in_flight_binds_.end()) {
        s.bound = true;
        s.node = flight->second.node;
        s.gpu_groups = flight->second.gpu_groups;
        s.bind_cycle = h != nullptr ? h->bind_cycle : 0;
        s.bind_ms = h != nullptr && h->bind_ms() ? *h->bind_ms() : c.start.now_ms;
      } else {
        s.pending_at_start = true;
      }
      if (pod.phase == "Succeeded" || pod.phase == "Failed") {
        s.finished = true;
        s.final_phase = pod.phase;
        s.finish_ms = c.start.now_ms;
      }
    }
    for (auto& [uid, s] : sim_) {
      if (s.evicted && s.leaves_with_recording && !present.count(uid) && s.leaves_ms == 0) {
        const RecordedPod* h = recorded(uid);
        s.leaves_ms = h != nullptr && h->deleted ? h->deleted->ms : c.start.now_ms;
      }
      if (!s.alive() || present.count(uid)) continue;
      const RecordedPod* h = recorded(uid);
      if (h != nullptr && h->evicted) continue;  // the recording's eviction: the simulation decides its own
      s.deleted = true;
      s.deleted_ms = h != nullptr && h->deleted ? h->deleted->ms : c.start.now_ms;
    }
  }

  /// Whether the simulated pod's bind is the recorded one (same cycle, same node).
  static bool mirrors_recorded_bind(const SimPod& s, const RecordedPod* h) {
    return h != nullptr && h->bound && s.node == h->node && s.bind_cycle == h->bind_cycle;
  }

  /// Pods that ran to their recorded (or default) run time by the cycle's clock complete. A bind
  /// that is the recorded one completes exactly when the recording shows it.
  void complete_pods(const RecordedCycle& c) {
    for (auto& [uid, s] : sim_) {
      if (!s.bound || s.finished || !s.alive()) continue;
      const RecordedPod* h = recorded(uid);
      if (mirrors_recorded_bind(s, h) && h->finished) {
        if (h->finished->seq <= c.start.log_position) finish(s, h->finished->ms, h->final_phase);
        continue;
      }
      auto run = h != nullptr ? h->run_ms() : std::nullopt;
      if (!run) run = options_.default_runtime_ms;
      if (run && s.bind_ms + *run <= c.start.now_ms) {
        finish(s, s.bind_ms + *run, h != nullptr && !h->final_phase.empty() ? h->final_phase : "Succeeded");
      }
    }
  }

  static void finish(SimPod& s, int64_t ms, const std::string& phase) {
    s.finished = true;
    s.finish_ms = ms;
    s.final_phase = phase;
  }

  /// The pod as the simulation has it: the recorded object when the recording agrees with the
  /// simulation, else that object moved to the simulated node and phase.
  model::Pod simulated(const SimPod& s, const model::Pod& recorded_object) const {
    const bool recorded_finished = recorded_object.phase == "Succeeded" || recorded_object.phase == "Failed";
    const std::string& node = s.bound ? s.node : std::string();
    const RecordedPod* h = recorded(s.object.meta.uid);
    const bool recording_evicted = h != nullptr && h->evicted;  // its deletion there is not the simulation's
    if (recorded_object.node_name == node && recorded_finished == s.finished && !s.evicted &&
        !(recording_evicted && recorded_object.meta.deletion_timestamp))
      return recorded_object;
    model::Pod p = recorded_object;
    p.node_name = node;
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
    if (recording_evicted) p.meta.deletion_timestamp.reset();
    if (s.evicted) p.meta.deletion_timestamp = s.evicted_ms / 1000;     // the simulation's, terminating
    return p;
  }

  /// Whether the pod is in the simulated cluster at the cycle: not deleted, and not evicted or still
  /// terminating after its eviction.
  static bool in_cluster(const SimPod& s, const RecordedCycle& c) {
    if (s.deleted) return false;
    if (!s.evicted) return true;
    if (s.leaves_with_recording) return s.leaves_ms == 0;
    return c.start.now_ms < s.leaves_ms;
  }

  /// The cluster the cycle sees.
  model::ClusterObjects simulated_cluster(const RecordedCycle& c) {
    model::ClusterObjects objects = state_.to_objects();
    // (node, GPU group) of simulated pods. A reservation pod outlives its last sharer by one cycle:
    // the cycle that finds its group unused deletes it (the daemon's clean-up).
    std::set<std::pair<std::string, std::string>> held_groups;
    for (const auto& [uid, s] : sim_)
      if (in_cluster(s, c) && s.bound && !s.finished)
        for (const auto& g : s.gpu_groups) held_groups.emplace(s.node, g);
    std::set<std::pair<std::string, std::string>> reserved = held_groups;
    reserved.insert(held_before_.begin(), held_before_.end());
    held_before_ = std::move(held_groups);
    std::map<std::string, model::Pod> pods;  // by "namespace/name", the order to_objects() gives
    std::set<std::string> listed;
    for (auto& pod : objects.pods) {
      std::string key = pod.meta.namespace_ + "/" + pod.meta.name;
      if (pod.meta.namespace_ == model::kReservationNamespace) {
        // A reservation pod holds its GPU for the simulated pods that share it, or for none.
        auto group = pod.meta.labels.find(model::kGpuGroupLabel);
        if (group != pod.meta.labels.end() && reserved.count({pod.node_name, group->second}))
          pods.emplace(std::move(key), std::move(pod));
        continue;
      }
      if (!is_ours(pod, c.start.scheduler_name)) {
        pods.emplace(std::move(key), std::move(pod));
        continue;
      }
      listed.insert(pod.meta.uid);
      auto it = sim_.find(pod.meta.uid);
      if (it == sim_.end() || !in_cluster(it->second, c)) continue;
      pods.emplace(std::move(key), it->second.leaves_with_recording ? pod : simulated(it->second, pod));
    }
    for (const auto& [uid, s] : sim_) {
      if (!in_cluster(s, c) || listed.count(uid)) continue;
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
      if (s.evicted && !s.leaves_with_recording) consider(s.leaves_ms);
      if (!s.bound || s.finished || !s.alive()) continue;
      const RecordedPod* h = recorded(uid);
      if (mirrors_recorded_bind(s, h) && h->finished) continue;  // the recording's own event wakes it
      auto run = h != nullptr ? h->run_ms() : std::nullopt;
      if (!run) run = options_.default_runtime_ms;
      if (run) consider(s.bind_ms + *run);
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
    apply(*out.session, out.decisions, c);
    for (const auto& change : out.job_state_changes)
      (void)events::apply_record(sim_records_, events::Event{0, 0, events::kSchemaVersion, change});
    if (out.allocation)
      (void)events::apply_record(sim_records_, events::Event{0, 0, events::kSchemaVersion, *out.allocation});
    (void)events::apply_record(sim_records_, events::Event{c.seq, c.start.now_ms * 1000, events::kSchemaVersion, c.start});
  }

  /// The session's outcome on the simulated pods: binds take effect, victims leave, and each pod's
  /// queue and GPUs are noted.
  void apply(const core::Session& ssn, const std::vector<events::Decision>& decisions, const RecordedCycle& c) {
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
    // What the cycle decided, not what the pods' statuses say: a pod its user is deleting is
    // releasing too, and that is no eviction.
    for (const auto& d : decisions) {
      auto it = sim_.find(d.pod_uid);
      if (it == sim_.end()) continue;
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
        const RecordedPod* h = recorded(d.pod_uid);
        s.leaves_with_recording = h != nullptr && h->evicted && h->evict_cycle == c.start.cycle_id;
        if (!s.leaves_with_recording) s.leaves_ms = c.start.now_ms + eviction_latency_ms_;
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
      p.counterfactual = simulated_run(s, end);
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
      r.end_ms = std::min(end, s.leaves_ms != 0 ? s.leaves_ms : end);
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
  std::set<std::pair<std::string, std::string>> held_before_;  // (node, GPU group) held at the last cycle
  std::map<std::string, events::Decision> in_flight_binds_;  // the recording's, at the window's start
  std::map<std::string, std::map<std::string, std::string>> job_annotations_;  // PodGroup UID -> key -> value
  int64_t eviction_latency_ms_ = 0;  // the recording's median, for the simulation's own evictions
  bool progress_ = false;
  uint64_t applied_ = 0;              // state_ is the recording up to this record
  int64_t last_now_ms_ = 0;           // the clock of the last cycle run
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
