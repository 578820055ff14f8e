#include "actors/scheduler/core/cycle.hpp"

#include <algorithm>
#include <boost/unordered/unordered_flat_set.hpp>
#include <chrono>
#include <cmath>
#include <map>
#include <set>
#include <string_view>
#include <unordered_map>

#include "actors/scheduler/core/action.hpp"
#include "actors/scheduler/core/bind_backoff.hpp"
#include "actors/scheduler/core/gpu_group_users.hpp"
#include "actors/scheduler/core/gpu_request.hpp"
#include "actors/scheduler/core/grouping.hpp"
#include "actors/scheduler/core/grouping_memo.hpp"
#include "actors/scheduler/core/name_key.hpp"
#include "actors/scheduler/core/plugins/builtin.hpp"
#include "actors/scheduler/core/pod_finder.hpp"
#include "actors/scheduler/core/pod_group_objects.hpp"
#include "actors/scheduler/core/pod_status.hpp"
#include "actors/scheduler/core/preemption_delay.hpp"
#include "actors/scheduler/core/session_keeper.hpp"
#include "k8s/model/kinds.hpp"
#include "k8s/model/time.hpp"

namespace kai::core {
namespace {

using events::JobField;
using events::JobStateChange;
using events::JobStateSource;

/// The annotation a reservation pod carries once it knows its device (docs/gpu-sharing.md).

uint64_t micros_since(std::chrono::steady_clock::time_point t) {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t).count());
}

/// Whether the watched pod shows the assumed decision done: bound (bind), deleting (evict), or the
/// pod it was about is gone or replaced. Once true it stays true, so settling at any later cut
/// gives the same input.
bool confirmed(const events::Decision& d, const model::Pod* pod) {
  if (pod == nullptr || pod->meta.uid != d.pod_uid) return true;
  if (d.kind == events::DecisionKind::kBind) return !pod->node_name.empty();
  return pod->meta.deletion_timestamp.has_value();
}

/// Step 1: settles what the objects confirm (and unconfirmed binds whose hold ran out) and lays the
/// other assumed decisions over the pods. Returns when the first remaining hold runs out.
std::optional<int64_t> settle_and_assume(const events::ScheduleRecords& records, int64_t now_ms,
                                         CycleResult& out) {
  if (records.assumed.empty()) return std::nullopt;
  const int64_t now = now_ms / 1000;
  std::optional<int64_t> hold_ends;  // Unix seconds, rounded up
  PodFinder finder(out.refs.pods);
  std::map<size_t, model::Pod*> copies;  // position in refs -> its patched copy
  for (const auto& [seq, assumed] : records.assumed) {
    const events::Decision& d = assumed.decision;
    const size_t at = finder.find(d.pod);
    const model::Pod* pod = at == PodFinder::npos ? nullptr : out.refs.pods[at];
    if (confirmed(d, pod) || assumed.hold_ran_out(now_ms)) {
      out.settled.push_back(seq);
      continue;
    }
    if (assumed.unconfirmed) {
      const int64_t ends_ms = assumed.held_since_ms.value_or(now_ms) + events::kUnconfirmedBindHoldMs;
      const int64_t ends = (ends_ms + 999) / 1000;
      if (!hold_ends || ends < *hold_ends) hold_ends = ends;
    }
    model::Pod*& copy = copies[at];
    if (copy == nullptr) copy = &out.patched->emplace_back(*pod);
    if (d.kind == events::DecisionKind::kBind) {
      copy->node_name = d.node;
      if (d.gpu_groups.size() == 1) {
        copy->meta.labels[model::kGpuGroupLabel] = d.gpu_groups[0];
      } else {
        for (const auto& g : d.gpu_groups) copy->meta.labels[std::string(model::kGpuGroupLabel) + "/" + g] = g;
      }
    } else if (!copy->meta.deletion_timestamp) {
      copy->meta.deletion_timestamp = now;
    }
    out.refs.pods[at] = copy;
  }
  return hold_ends;
}

/// Step 4: the session's annotation updates as records, and the job state of groups gone.
void record_job_state(const CycleInput& in, const Session& ssn, const JobStateMemo& job_state,
                      bool kept_in_place, CycleResult& out) {
  const auto& by_uid = job_state.pod_groups();
  for (const auto& [job_id, updates] : ssn.annotation_updates) {
    const JobInfo& job = ssn.jobs[job_id];
    if (job.uid.empty()) continue;
    for (const auto& [name, value] : updates) {
      std::optional<JobField> named;
      for (int f = 0; f < events::kJobFields && !named; ++f) {
        if (name == events::job_field_annotation(static_cast<JobField>(f))) named = static_cast<JobField>(f);
      }
      if (!named) continue;
      const JobField field = *named;
      std::optional<int64_t> time;
      if (value) {
        auto t = model::parse_rfc3339(*value);
        if (!t) continue;  // the session formats what it writes; an unreadable one is a bug upstream
        time = *t;
      }
      std::optional<int64_t> seen;
      if (auto pg = by_uid.find(job.uid); pg != by_uid.end()) seen = annotation_time(*pg->second, field);
      out.job_state_changes.push_back(
          JobStateChange{in.cycle_id, job.uid, job.key, field, time, seen, JobStateSource::kDecided});
    }
  }
  if (in.records == nullptr || in.records->job_states.empty()) return;
  // A group scheduled before its PodGroup was seen keeps its job state under the uid the grouper
  // gave it (session_builder_jobs.cpp); once the PodGroup the grouper wrote for it arrives, the job
  // goes by the PodGroup's uid. The state moves there, as KAI, whose PodGroup exists from the
  // start, keeps it on the PodGroup: each field the PodGroup does not show, and for which neither the
  // records nor this cycle hold a value under the new uid, is decided for it (and so written to it).
  // Made at the first group gone (a pass over every job, in a cycle that forgets a group).
  std::unordered_map<std::string_view, uint32_t> pod_group_job_by_key;
  bool indexed = false;
  auto move_to_pod_group = [&](const events::JobState& st) {
    if (!indexed) {
      indexed = true;
      for (uint32_t j = 0; j < ssn.jobs.size(); ++j) {
        if (ssn.jobs[j].object != nullptr) pod_group_job_by_key.emplace(ssn.jobs[j].key, j);
      }
    }
    auto it = pod_group_job_by_key.find(st.group);
    if (it == pod_group_job_by_key.end()) return;
    const JobInfo& job = ssn.jobs[it->second];
    if (job.uid.empty() || in.records->job_states.count(job.uid) != 0) return;
    auto decided = ssn.annotation_updates.find(it->second);
    for (int f = 0; f < events::kJobFields; ++f) {
      const auto field = static_cast<JobField>(f);
      const std::optional<int64_t>& value = st.fields[f].value;
      if (!value || annotation_time(*job.object, field)) continue;
      if (decided != ssn.annotation_updates.end() &&
          decided->second.count(events::job_field_annotation(field)))
        continue;
      out.job_state_changes.push_back(JobStateChange{in.cycle_id, job.uid, job.key, field, value,
                                                     std::nullopt, JobStateSource::kDecided});
    }
  };
  auto forget_if_gone = [&](const std::string& uid, const events::JobState& st) {
    if (by_uid.contains(uid) || ssn.has_job(uid)) return;
    move_to_pod_group(st);
    out.job_state_changes.push_back(
        JobStateChange{in.cycle_id, uid, st.group, JobField::kLastStart, std::nullopt, std::nullopt,
                       JobStateSource::kForget});
  };
  // A session refreshed in place has the jobs and PodGroup uids of the last cycle, which kept every
  // entry but those it asked to forget: only the entries the job state resolved again may be gone
  // now (job_state_memo.hpp), and they are read in the records' order.
  if (kept_in_place && !job_state.resolved_all()) {
    for (const std::string& uid : job_state.changed()) {
      if (auto st = in.records->job_states.find(uid); st != in.records->job_states.end())
        forget_if_gone(uid, st->second);
    }
    return;
  }
  for (const auto& [uid, st] : in.records->job_states) forget_if_gone(uid, st);
}

/// Step 5: a reservation pod holds a device for its GPU group (KAI's SyncForNode). One whose group
/// no pod on its node uses, bound, assumed or placed by this cycle, holds it for nothing; of two for one group, the one
/// that did not report its device (or the later one) is a double reservation. Both are deleted.
void find_orphaned_reservations(const Session& ssn, CycleResult& out) {
  std::vector<std::pair<const model::Pod*, std::string>> reservations;  // with their group
  for (uint32_t at : ssn.reservation_pod_positions(out.refs)) {
    const model::Pod* pod = out.refs.pods[at];
    if (pod->node_name.empty() || pod_finished(*pod) || pod->meta.deletion_timestamp) continue;
    std::optional<std::string_view> group;
    for_each_gpu_group(*pod, [&](std::string_view g) {
      if (!group) group = g;
    });
    if (group) reservations.emplace_back(pod, std::string(*group));
  }
  // A cluster without reservation pods (no GPU sharing) has nothing to clean: the pods' groups are
  // read only when there is one.
  if (reservations.empty()) return;
  // The groups the pods use, kept with the session (gpu_group_users.hpp); and this cycle's binds,
  // which may have joined an orphan's group (adopting its reservation pod).
  const GpuGroupUsers& users = ssn.gpu_group_users(out.refs);
  boost::unordered_flat_set<NameKey, NameKeyHash> bound;  // (node, group), viewing the decisions
  for (const auto& d : out.decisions) {
    if (d.kind != events::DecisionKind::kBind) continue;
    for (const auto& g : d.gpu_groups) bound.emplace(d.node, g);
  }
  std::map<std::pair<std::string, std::string>, const model::Pod*> keep;  // (node, group) -> kept
  auto reported = [](const model::Pod* p) {
    auto it = p->meta.annotations.find(model::kGpuIndexAnnotation);
    return it != p->meta.annotations.end() && !it->second.empty();
  };
  for (const auto& [pod, group] : reservations) {
    const model::Pod*& k = keep[{pod->node_name, group}];
    if (k == nullptr || (!reported(k) && reported(pod))) k = pod;
  }
  uint64_t seq = out.decisions.size();
  for (const auto& [pod, group] : reservations) {
    std::string reason;
    if (!users.in_use(pod->node_name, group) && !bound.contains(NameKey{pod->node_name, group})) {
      reason = "reservation pod of GPU group " + group + " on " + pod->node_name + ": no pod uses the group";
    } else if (keep[{pod->node_name, group}] != pod) {
      reason = "second reservation pod of GPU group " + group + " on " + pod->node_name;
    } else {
      continue;
    }
    events::Decision d;
    d.seq = ++seq;
    d.action = kCleanupAction;
    d.kind = events::DecisionKind::kEvict;
    d.pod = model::object_key(pod->meta);
    d.pod_uid = pod->meta.uid;
    d.node = pod->node_name;
    d.gpu_groups = {group};
    d.reason = std::move(reason);
    out.cleanups.push_back(std::move(d));
  }
}

/// Step 6: the earliest deadline after now at which an action would decide otherwise with nothing else
/// changed: a stale gang's grace ends (its PodGroup's own grace, else the session's), a running job's
/// min-runtime ends (any queue's, or the minruntime plugin's defaults), a pending group's preemption
/// delay ends. Rounded up to the second.
std::optional<int64_t> next_deadline(const Session& ssn) {
  const int64_t now_ms = ssn.now_ms();
  const auto session_grace = static_cast<double>(ssn.options().stale_grace_period_seconds);
  // A last start is rounded up to the second (Session::record_time), so a job started this second
  // has it after now: until then even no min-runtime (0) protects it.
  std::set<double> runtime_set{0.0};
  for (const auto& q : ssn.queues) {
    for (const auto& r : {q.preempt_min_runtime, q.reclaim_min_runtime}) {
      if (r && *r > 0) runtime_set.insert(*r);
    }
  }
  for (double r : plugins::min_runtime_defaults(ssn.options().config.plugins)) {
    if (r > 0) runtime_set.insert(r);
  }
  const std::vector<double> runtimes(runtime_set.begin(), runtime_set.end());
  auto deadlines = [&](uint32_t j, std::vector<int64_t>& out) {
    const JobInfo& job = ssn.jobs[j];
    auto offer = [&](double seconds) { out.push_back(static_cast<int64_t>(std::ceil(seconds))); };
    const double grace = job.staleness_grace_seconds.value_or(session_grace);
    if (job.stale_since && grace >= 0) offer(static_cast<double>(*job.stale_since) + grace);
    if (job.last_start && ssn.active_allocated_count(job) > 0) {
      for (double r : runtimes) offer(static_cast<double>(*job.last_start) + r);
    }
    // A pending group's preemption delay ends: from then on it may make the eviction actions evict.
    if (ssn.has_pending_tasks(job)) {
      if (const auto end = preemption_delay_end_ms(job)) offer(static_cast<double>(*end) / 1000.0);
    }
  };
  // The first whole second after now: t * 1000 > now_ms.
  const int64_t first_second = static_cast<int64_t>(std::floor(static_cast<double>(now_ms) / 1000.0)) + 1;
  return ssn.deadline_index().next(static_cast<uint32_t>(ssn.jobs.size()), first_second, runtimes, deadlines);
}

/// Whether `pod`'s PodScheduled condition is False with `reason` and `message`.
bool condition_shows(const model::Pod& pod, const std::string& reason, const std::string& message) {
  return std::any_of(pod.conditions.begin(), pod.conditions.end(), [&](const model::PodCondition& c) {
    return c.type == "PodScheduled" && c.status == "False" && c.reason == reason && c.message == message;
  });
}

/// After Session::note_outcome, which lists the jobs with reasons.
void report(const CycleInput& in, const Session& ssn, CycleResult& out) {
  for (uint32_t j : ssn.jobs_with_reasons()) {
    const JobInfo& job = ssn.jobs[j];
    if (job.fit_errors.empty() || ssn.active_allocated_count(job) >= job.min_member) continue;
    events::UnschedulableEvent u;
    u.cycle_id = in.cycle_id;
    u.pod_group = job.key;
    u.queue = job.queue_name;
    for (const auto& r : job.fit_errors) u.reasons.push_back({r.reason, r.message});
    for (uint32_t t : job.tasks) {
      const TaskInfo& task = ssn.tasks[t];
      if (task.status != PodStatus::kPending) continue;
      const FitReason& why = job.fit_errors.front();
      const std::string reason = why.reason == kBindingErrorReason ? kBindingErrorReason : "Unschedulable";
      // A group whose PodGroup has not arrived leaves the condition alone: that PodGroup may say
      // markUnschedulable: false, and KAI, which only schedules PodGroups it has seen, would not
      // have touched the pod. The event and kai-log why still say why it waits.
      const bool missing = std::any_of(job.invalid.begin(), job.invalid.end(), [](const FitReason& r) {
        return r.reason == kPodGroupNotFoundReason;
      });
      const bool mark = !missing && (job.object == nullptr || job.object->mark_unschedulable.value_or(true));
      out.pending.push_back({task.key, task.uid, job.key, why.message, reason,
                             mark && condition_shows(*task.pod, reason, why.message), mark});
      u.pods.push_back({task.key, task.uid});
    }
    out.unschedulable.push_back(std::move(u));
  }
  for (const auto& q : ssn.queues) {
    QueueFigures f;
    f.name = q.name;
    f.fair_gpu = q.fair_share.gpu;
    f.fair_cpu = q.fair_share.cpu / 1000.0;
    f.fair_memory = q.fair_share.memory / 1e9;
    f.used_gpu = q.allocated.gpu;
    f.used_cpu = q.allocated.cpu / 1000.0;
    f.used_memory = q.allocated.memory / 1e9;
    f.usage_gpu = q.usage.gpu;
    f.usage_cpu = q.usage.cpu;
    f.usage_memory = q.usage.memory;
    out.queues.push_back(f);
  }
}

}  // namespace

CycleResult run_cycle(const CycleInput& in) {
  const auto start = std::chrono::steady_clock::now();
  CycleResult out;
  out.refs = in.objects;
  out.patched = std::make_shared<std::deque<model::Pod>>();
  std::optional<int64_t> hold_ends;
  if (in.records != nullptr) {
    hold_ends = settle_and_assume(*in.records, in.options.now_ms != 0 ? in.options.now_ms : in.options.now * 1000, out);
  }
  // Step 2, kept between the keeper's cycles.
  JobStateMemo* job_state = in.keeper != nullptr ? &in.keeper->job_state() : nullptr;
  if (job_state == nullptr) {
    out.own_job_state = std::make_unique<JobStateMemo>();
    job_state = out.own_job_state.get();
  }
  job_state->update(in.records, out.refs.pod_groups, in.cycle_id, out.job_state_changes);
  out.job_times = &job_state->times();

  SessionOptions options = in.options;
  options.job_times = &job_state->times();
  options.job_times_changed = job_state->resolved_all() ? nullptr : &job_state->changed();
  options.job_times_generation = job_state->generation();
  // The PodGroups' labels and annotations are read only by the writes.
  options.grouper.pod_group_metadata = options.grouper.pod_group_metadata && in.pod_group_writes;
  // The grouping memo keys its entries by pod address: the patched copies must outlive them too.
  if (options.grouping_memo != nullptr) options.grouping_memo->hold_also(out.patched);
  // Step 7: time-based fair share reads the usage from the records' allocation history, unless the
  // input gives it (kai-sim --usage).
  static const events::AllocationHistory kNoHistory;
  const events::AllocationHistory& history = in.records != nullptr ? in.records->usage_history : kNoHistory;
  const int64_t now_ms = in.options.now_ms != 0 ? in.options.now_ms : in.options.now * 1000;
  const UsageParams* usage_params =
      options.config.usage_db && options.queue_usage == nullptr ? &options.config.usage_db->params : nullptr;
  if (usage_params != nullptr) {
    out.usage = std::make_unique<std::map<std::string, UsageShare>>(
        cycle_usage(history, *usage_params, now_ms, in.usage_memo));
    options.queue_usage = out.usage.get();
  }
  if (in.keeper != nullptr) out.session = in.keeper->take(out.refs, options);
  if (!out.session) out.session = std::make_unique<Session>(out.refs, options);
  Session& ssn = *out.session;
  std::optional<int64_t> backoff_ends;
  if (in.records != nullptr) backoff_ends = hold_backing_off_jobs(*in.records, ssn);
  out.build_us = micros_since(start);
  out.outcome_repeated = in.repeat_outcomes && ssn.repeat_last_outcome(backoff_ends.has_value());
  for (const auto& action : options.config.actions) {
    if (out.outcome_repeated) {
      if (find_action(action) == nullptr) out.skipped_actions.push_back(action);
      continue;
    }
    const auto t = std::chrono::steady_clock::now();
    for (auto& skipped : run_actions(ssn, {action})) out.skipped_actions.push_back(std::move(skipped));
    out.action_us.emplace_back(action, micros_since(t));
  }
  out.decisions = ssn.decisions;
  out.warnings = ssn.warnings;

  record_job_state(in, ssn, *job_state, in.keeper != nullptr && in.keeper->last_take_in_place(), out);
  job_state->note_asked(out.job_state_changes);
  if (in.reservation_cleanup) find_orphaned_reservations(ssn, out);
  if (in.pod_group_writes) {
    out.group_writes = pod_group_writes(ssn.groups, out.refs.pods, in.records, options.pod_group_objects,
                                        ssn.now_ms(), in.cycle_id, &ssn.groups_written());
  }
  out.next_deadline = next_deadline(ssn);
  std::optional<int64_t> usage_step;
  if (usage_params != nullptr) {
    out.allocation = allocation_change(ssn, history, *usage_params, now_ms, in.cycle_id);
    usage_step = (next_usage_step_ms(*usage_params, now_ms) + 999) / 1000;
  }
  for (const auto& ends : {backoff_ends, hold_ends, usage_step}) {
    if (ends && (!out.next_deadline || *ends < *out.next_deadline)) out.next_deadline = ends;
  }
  ssn.note_outcome(out.next_deadline, backoff_ends.has_value());
  report(in, ssn, out);
  StatusOutput statuses = status_writes(ssn, out.refs, out.unschedulable, in.records, in.cycle_id);
  out.status_writes = std::move(statuses.writes);
  out.queue_statuses = std::move(statuses.queues);
  out.total_us = micros_since(start);
  return out;
}

}  // namespace kai::core

namespace kai::core {

std::vector<events::Payload> cycle_records(const CycleResult& result, uint64_t cycle_id, uint64_t leader_epoch) {
  std::vector<events::Payload> out;
  if (!result.settled.empty()) out.emplace_back(events::AssumedSettled{cycle_id, result.settled});
  for (const auto& d : result.decisions) out.emplace_back(events::DecisionEvent{cycle_id, d, leader_epoch});
  for (const auto& d : result.cleanups) out.emplace_back(events::DecisionEvent{cycle_id, d, leader_epoch});
  for (const auto& j : result.job_state_changes) out.emplace_back(j);
  for (const auto& w : result.group_writes) out.emplace_back(w);
  for (const auto& w : result.status_writes) out.emplace_back(w);
  if (result.allocation) out.emplace_back(*result.allocation);
  return out;
}

}  // namespace kai::core
