#include "actors/daemon/cycle_driver.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <set>
#include <string_view>
#include <unordered_set>

#include "actors/daemon/wall_clock.hpp"
#include "actors/gpu_sharing/shared_pod.hpp"
#include "actors/scheduler/core/behaviour_version.hpp"
#include "events/projection.hpp"

namespace kai::daemon {

model::Status record_config(storage::EventLog& log, const std::string& text, const std::string& flags,
                            uint64_t hash) {
  auto last = log.get_meta("config_hash");
  if (!last.is_ok()) return model::Status::error("event log: " + last.message());
  if (last.value() == std::to_string(hash)) return model::Status::ok();
  events::Event e;
  e.timestamp_us = wall_us();
  e.payload = events::ConfigChange{hash, text, core::kBehaviourVersion, flags};
  auto appended = log.append({std::move(e)});
  if (!appended.is_ok()) return model::Status::error("event log: " + appended.message());
  return model::Status::ok();
}

BindJob make_bind_job(const model::Pod* pod, const events::Decision& d, uint64_t seq,
                      std::chrono::steady_clock::time_point deadline) {
  BindJob job;
  job.log_seq = seq;
  job.decision = d;
  job.deadline = deadline;
  if (pod == nullptr) return job;
  job.tolerations = pod->tolerations;
  gpu_sharing::SharedPodInfo shared = gpu_sharing::shared_pod_info(*pod);
  job.config_map_prefix = std::move(shared.config_map_prefix);
  job.container_suffix = std::move(shared.container_suffix);
  return job;
}

CycleDriver::CycleDriver(DaemonOptions options, core::SessionOptions session, uint64_t config_hash,
                         CycleDriverPorts ports, events::ScheduleRecords restored, uint64_t last_cycle_id)
    : options_(std::move(options)),
      session_(std::move(session)),
      config_hash_(config_hash),
      ports_(std::move(ports)),
      records_(std::move(restored)),
      cycle_id_(last_cycle_id) {}

bool CycleDriver::drain_appends() {
  while (!pending_appends_.empty()) {
    PendingRecord p = std::move(pending_appends_.front());
    pending_appends_.pop_front();
    auto r = p.appended.get();
    if (r.is_ok()) {
      p.event.seq = r.value().first_seq;
      (void)events::apply_record(records_, p.event);
    } else {
      if (unlogged_.empty()) spdlog::error("event log refused a record, kept to append again: {}", r.message());
      unlogged_.push_back(std::move(p.event));
    }
  }
  return unlogged_.empty();
}

void CycleDriver::append_record(events::Payload payload, storage::Durability durability) {
  ++record_appends_;
  events::Event e;
  e.timestamp_us = wall_us();
  e.payload = std::move(payload);
  if (!unlogged_.empty()) {  // after the ones waiting, in order
    unlogged_.push_back(std::move(e));
    return;
  }
  PendingRecord p;
  p.appended = ports_.log->append_async({e}, nullptr, durability);
  p.event = std::move(e);
  pending_appends_.push_back(std::move(p));
}

void CycleDriver::retry_unlogged() {
  std::deque<events::Event> again;
  again.swap(unlogged_);
  for (events::Event& e : again) {
    PendingRecord p;
    p.appended = ports_.log->append_async({e});
    p.event = std::move(e);
    pending_appends_.push_back(std::move(p));
  }
}

void CycleDriver::on_outcome(const BindJob& job, const events::BinderOutcome& o) {
  if (o.outcome != events::Outcome::kBound) {
    spdlog::warn("{} {}: {}", events::to_string(o.outcome), o.pod, o.reason);
  } else {
    spdlog::info("{} {}: {}", job.decision.kind == events::DecisionKind::kEvict ? "evicted" : "bound", o.pod,
                 o.reason);
  }
  // Lazy: after a power loss the pod shows bound, or not, on the watch; the decision was synced.
  append_record(o, storage::Durability::kLazy);
}

void CycleDriver::on_leadership(const events::LeadershipChange& change) {
  if (change.acquired) {
    spdlog::info("leader election: this replica leads now (epoch {})", change.epoch);
  } else {
    spdlog::warn("leader election: leadership lost (lease held by \"{}\"); standing by", change.holder);
  }
  if (ports_.metrics) ports_.metrics->set_leader(change.acquired);
  append_record(change);
}

CycleDriver::Plan CycleDriver::plan() {
  Plan p;
  if (ports_.stopping && ports_.stopping()) return p;  // the binder is draining: no new decisions
  drain_appends();
  // No decision the log cannot take (docs/event-ordering.md): below the free-space floor nothing
  // runs; probe() resumes the log by itself when the space is back (docs/degraded-modes.md).
  const storage::LogHealth health = ports_.log->probe();
  if (!health.writable()) {
    if (!std::exchange(degraded_, true)) spdlog::error("no cycles: {}", health.message);
    return p;
  }
  retry_unlogged();
  if (!drain_appends()) return p;
  if (std::exchange(degraded_, false)) spdlog::info("event log writable again: cycles resume");
  // A standby only watches and logs; it decides nothing until it holds the lease.
  p.cycle = ports_.leadership->may_act();
  p.snapshot = ports_.snapshotter != nullptr &&
               ports_.snapshotter->due(ports_.log->last_seq(), std::chrono::steady_clock::now());
  return p;
}

CycleDriver::Plan CycleDriver::plan_last_snapshot() {
  Plan p;
  if (ports_.snapshotter == nullptr || !drain_appends() || !ports_.log->probe().writable()) return p;
  p.snapshot = ports_.snapshotter->behind(ports_.log->last_seq());
  p.up_to_date = !p.snapshot;
  p.last = true;
  return p;
}

void CycleDriver::on_cut(const CutPtr& cut, const Plan& plan) {
  last_cut_event_number_ = cut->last_event_number;
  if (cut->appends_failed) return;  // the stores lack what the log refused: they are listed again
  if (cut->encoded && ports_.snapshotter != nullptr) {
    std::string bytes;
    events::encode_state(cut->cut.seq, cut->resource_versions, records_, cut->sections, bytes);
    if (plan.last) {
      ports_.snapshotter->offer_last(cut->cut.seq, std::move(bytes));
    } else {
      ports_.snapshotter->offer(cut->cut.seq, std::move(bytes), std::chrono::steady_clock::now());
    }
  }
  if (plan.cycle && cut->listed) schedule(cut);
}

std::vector<events::UnschedulableEvent> CycleDriver::changed_reasons(
    const std::vector<events::UnschedulableEvent>& all) {
  std::vector<events::UnschedulableEvent> out;
  std::set<std::string> pending;
  for (const auto& u : all) {
    pending.insert(u.pod_group);
    auto& last = logged_reasons_[u.pod_group];
    if (last.first == u.reasons && last.second == u.pods) continue;
    last = {u.reasons, u.pods};
    out.push_back(u);
  }
  // Groups no longer pending are forgotten, so they are logged again if they return.
  std::erase_if(logged_reasons_, [&](const auto& kv) { return !pending.count(kv.first); });
  return out;
}

bool CycleDriver::previous_cycles_done(const ClusterCut& cut) const {
  for (const auto& [seq, a] : records_.assumed) {
    if (a.unconfirmed) continue;  // nothing of this run will report it: a cycle ends its hold
    if (!a.reported) return false;
    const events::Decision& d = a.decision;
    const model::Pod* pod = cut.find_pod(d.pod);
    const bool same = pod != nullptr && pod->meta.uid == d.pod_uid;
    if (d.kind == events::DecisionKind::kEvict && same) return false;
    if (d.kind == events::DecisionKind::kBind && same && pod->phase != "Running") return false;
  }
  return true;
}

namespace {

/// Whether two cuts hold the same object lists (the stores republish a kind's list only when a watch
/// event changed it).
bool same_objects(const ClusterCut& a, const ClusterCut& b) {
  if (a.views.size() != b.views.size()) return false;
  for (size_t i = 0; i < a.views.size(); ++i) {
    bool same = true;
    model::for_each_kind([&](auto kind) {
      using K = decltype(kind);
      same = same && K::in(*a.views[i]).get() == K::in(*b.views[i]).get();
    });
    if (!same) return false;
  }
  return true;
}

}  // namespace

bool CycleDriver::idle(const CutResult& cut, int64_t now_ms) const {
  // No outcome or leadership change since, and every store publishes the very lists it published
  // then: no watch event or relist changed an object (bookmarks change none).
  if (!quiet_ || quiet_->record_appends != record_appends_) return false;
  if (!same_objects(quiet_->cut->cut, cut.cut)) return false;
  if (!unlogged_.empty() || !pending_appends_.empty() || records_.has_untimed_records()) return false;
  // The quiet cycle's earliest deadline (a grace, a min-runtime, a backoff's end) has come.
  if (next_deadline_ && *next_deadline_ * 1000 <= now_ms) return false;
  // A write asked and not seen yet is asked again kGroupWriteRetryMs after it was asked.
  for (const auto* marks : {&records_.group_writes, &records_.status_writes}) {
    for (const auto& [object, mark] : *marks) {
      const int64_t retry_at = mark.at_ms + events::kGroupWriteRetryMs;
      if (quiet_->now_ms < retry_at && retry_at <= now_ms) return false;
    }
  }
  return true;
}

void CycleDriver::schedule(const CutPtr& cut_ptr) {
  const ClusterCut& cut = cut_ptr->cut;
  if (options_.lockstep && !previous_cycles_done(cut)) return;
  const uint64_t epoch = ports_.leadership->epoch();
  // The logged clock never goes back, whatever the wall clock does (docs/one-truth.md).
  const int64_t wall_ms = options_.test_clock ? options_.test_clock() * 1000 : wall_us() / 1000;
  const int64_t now_ms = std::max<int64_t>(wall_ms, records_.last_now_ms);
  const int64_t now = now_ms / 1000;
  // An idle cluster costs no session: nothing the cycle reads has changed but the clock, and the
  // clock crossed no deadline (docs/performance-targets.md "Idle cycles").
  if (idle(*cut_ptr, now_ms)) {
    if (ports_.on_idle) ports_.on_idle();
    return;
  }
  ++cycle_id_;
  core::CycleInput in;
  in.objects = cut.refs();
  in.records = &records_;
  in.options = session_;
  in.options.now = now;
  in.options.now_ms = now_ms;
  in.options.seed = options_.test_seed.value_or(
      events::config_hash(std::to_string(cycle_id_) + "/" + std::to_string(cut.seq)) | 1);
  in.cycle_id = cycle_id_;
  in.usage_memo = &usage_memo_;
  // The cut owns the objects the memo's entries point at until the next cycle's cut replaces it.
  grouping_memo_.hold(cut_ptr);
  in.options.grouping_memo = &grouping_memo_;
  if (options_.keep_sessions) in.keeper = &session_keeper_;
  const uint64_t kept_before = session_keeper_.kept();
  const uint64_t regrouped_before = session_keeper_.regrouped();
  core::CycleResult out = core::run_cycle(in);
  if (options_.keep_sessions) {
    const char* how = session_keeper_.kept() == kept_before              ? "built: "
                      : session_keeper_.regrouped() != regrouped_before ? "kept, its jobs laid out anew"
                                                                         : "kept";
    spdlog::debug("cycle {}: session {}{}{}", cycle_id_, how, session_keeper_.last_rebuild_reason(),
                  out.outcome_repeated ? "; the last cycle's outcome repeated, no action run" : "");
  }
  // What /get-snapshot serves is the cut: its job state, not the one this cycle is about to log.
  std::shared_ptr<const JobStatesAtCut::Table> job_states_at_cut = job_states_at_cut_.take(records_);

  std::vector<events::Event> batch;
  auto add = [&](events::Payload p) {
    events::Event e;
    e.timestamp_us = wall_us();
    e.payload = std::move(p);
    batch.push_back(std::move(e));
  };
  add(events::CycleStart{cycle_id_, config_hash_, cut.seq, now, in.options.seed, session_.scheduler_name, epoch,
                         now_ms});
  const std::vector<events::Payload> records_of_cycle = core::cycle_records(out, cycle_id_, epoch);
  for (const auto& p : records_of_cycle) add(p);
  for (auto& u : changed_reasons(out.unschedulable)) add(std::move(u));
  add(events::CycleEnd{cycle_id_, out.total_us, out.action_us});
  // Quiet cycles are logged now and then only, so that an idle cluster does not fill the disk; a
  // quiet cycle changes nothing, so replay loses nothing by its absence. A CycleStart that times
  // a failed bind changes the records (the backoff counts from it): that cycle is logged.
  const bool quiet = batch.size() == 2 && !records_.has_untimed_records();
  // Only a quiet cycle that logs nothing marks the cluster idle: a logged one changes the records.
  quiet_.reset();
  if (quiet && cycle_id_ % 60 != 1) quiet_ = QuietCycle{cut_ptr, record_appends_, now_ms};
  if (!quiet || cycle_id_ % 60 == 1) {
    auto appended = ports_.log->append(batch);  // fsync before the binder acts (docs/event-ordering.md)
    if (!appended.is_ok()) {
      // Nothing of this cycle is executed or folded; the next cycle on a writable log decides again.
      spdlog::error("cycle {}: not logged, so not executed: {}", cycle_id_, appended.message());
      logged_reasons_.clear();  // the reasons it would have logged are logged by a later cycle
      return;
    }
    for (size_t i = 0; i < batch.size(); ++i) {
      batch[i].seq = appended.value().first_seq + i;
      (void)events::apply_record(records_, batch[i]);  // as the projection does
    }
    // Execute what is now durable: binds, evictions and reservation clean-ups, then the
    // annotation writes of the job state and the PodGroup writes (each derived from its record).
    // The PodGroup objects by uid, made only when the cycle decided some job state: a cluster
    // whose every group has an object holds 150,000 of them.
    std::unordered_set<std::string_view> pod_group_objects;
    auto has_pod_group_object = [&](const std::string& uid) {
      if (pod_group_objects.empty()) {
        pod_group_objects.reserve(in.objects.pod_groups.size());
        for (const auto* pg : in.objects.pod_groups) pod_group_objects.insert(pg->meta.uid);
      }
      return pod_group_objects.count(uid) > 0;
    };
    const auto cap = options_.bind_cap.count() > 0 ? options_.bind_cap : 2 * options_.reservation_timeout;
    for (const auto& e : batch) {
      if (const auto* d = std::get_if<events::DecisionEvent>(&e.payload)) {
        if (d->decision.kind == events::DecisionKind::kPipeline) continue;
        ports_.execute(make_bind_job(cut.find_pod(d->decision.pod), d->decision, e.seq,
                                     std::chrono::steady_clock::now() + cap));
      } else if (const auto* j = std::get_if<events::JobStateChange>(&e.payload)) {
        if (j->source == events::JobStateSource::kDecided && has_pod_group_object(j->group_uid))
          ports_.write_job_state(*j);
      }
    }
    // The pod grouper's writes last, behind every bind (scheduling never waits for them).
    for (const auto& e : batch) {
      if (const auto* w = std::get_if<events::PodGroupWrite>(&e.payload); w != nullptr && ports_.write_pod_group)
        ports_.write_pod_group(*w);
    }
    // The statuses after them: they report, nothing waits for them.
    for (const auto& e : batch) {
      if (const auto* w = std::get_if<events::StatusWrite>(&e.payload); w != nullptr && ports_.write_status)
        ports_.write_status(*w);
    }
  }
  for (const auto& w : out.warnings) spdlog::debug("cycle {}: {}", cycle_id_, w);
  if (!out.decisions.empty() || !out.cleanups.empty()) {
    spdlog::info("cycle {}: {} decisions, {} clean-ups, {} pending groups, {} us", cycle_id_, out.decisions.size(),
                 out.cleanups.size(), out.unschedulable.size(), out.total_us);
  }
  next_deadline_ = out.next_deadline;
  if (ports_.after_cycle) ports_.after_cycle(out);
  if (ports_.metrics) {
    std::vector<std::pair<std::string, double>> actions;
    for (const auto& [a, us] : out.action_us) actions.emplace_back(a, static_cast<double>(us) / 1000.0);
    ports_.metrics->observe_cycle(static_cast<double>(out.total_us) / 1000.0,
                                  static_cast<double>(out.build_us) / 1000.0, 0, actions);
    std::map<std::string, std::string> display_names;
    for (const auto& q : out.queue_statuses) display_names[q.name] = q.display_name;
    std::vector<endpoints::QueueShare> shares;
    for (const auto& q : out.queues) {
      shares.push_back({q.name, display_names[q.name], q.fair_cpu, q.fair_memory, q.fair_gpu, q.usage_cpu,
                        q.usage_memory, q.usage_gpu});
    }
    ports_.metrics->set_queue_shares(shares);
    ports_.metrics->set_queue_controller(out.queue_statuses);
  }
  auto last = std::make_shared<LastCycle>();
  last->cut = cut_ptr;
  last->patched = out.patched;
  last->refs = std::move(out.refs);
  last->job_states = std::move(job_states_at_cut);
  last->scheduler_name = session_.scheduler_name;
  // The next cycle starts from this one's session when only pods and PodGroups changed.
  session_keeper_.keep(std::move(out.session), last->refs, out.patched, cut_ptr);
  if (ports_.publish) ports_.publish(std::move(last));
}

}  // namespace kai::daemon
