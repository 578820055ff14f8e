#include "events/projection.hpp"

#include <algorithm>

#include "events/watch_apply.hpp"

namespace kai::events {

model::ClusterObjects ClusterState::to_objects() const {
  model::ClusterObjects o;
  model::for_each_kind([&](auto kind) {
    const auto& from = decltype(kind)::in(*this);
    auto& to = decltype(kind)::in(o);
    to.reserve(from.size());
    for (const auto& [key, object] : from) to.push_back(object);
  });
  o.served_owner_kinds = served_owner_kinds(resource_versions);
  return o;
}

namespace {

/// How many values of a field the PodGroup may show without it being someone else's change.
constexpr size_t kExpectedKept = 8;

void remember(std::vector<std::optional<int64_t>>& expected, const std::optional<int64_t>& v) {
  for (auto it = expected.begin(); it != expected.end(); ++it) {
    if (*it == v) {
      expected.erase(it);
      break;
    }
  }
  expected.push_back(v);
  if (expected.size() > kExpectedKept) expected.erase(expected.begin());
}

/// A bind's outcome in the pod's failed binds (docs/one-truth.md "Bind backoff"). Only what says
/// something about the pod counts: the binder tried and the API server (or the reservation pod)
/// refused. `cancelled` (the binder never started the job before its cap: it was busy or the API
/// server slow), `abandoned` (a leader that lost its lease, a stop) and `unconfirmed` (a restart)
/// say nothing about the pod and leave its count as it is.
void count_bind(ScheduleRecords& records, const Decision& d, const BinderOutcome& o) {
  if (d.kind != DecisionKind::kBind) return;
  switch (o.outcome) {
    case Outcome::kBound:
      records.bind_failures.erase(d.pod);
      return;
    case Outcome::kBindFailed:
    case Outcome::kReservationTimedOut:
      break;
    case Outcome::kCancelled:
    case Outcome::kAbandoned:
    case Outcome::kUnconfirmed:
      return;
  }
  BindFailures& f = records.bind_failures[d.pod];
  if (f.pod_uid != d.pod_uid) f = BindFailures{d.pod_uid};
  ++f.failures;
  f.failed_at_ms.reset();  // timed by the next CycleStart: the logged clock
  f.reason = o.reason;
}

/// A CycleStart times the failures since the last one and drops those past kBindFailuresKeptMs.
void time_bind_failures(ScheduleRecords& records, int64_t now_ms) {
  for (auto it = records.bind_failures.begin(); it != records.bind_failures.end();) {
    BindFailures& f = it->second;
    if (!f.failed_at_ms) f.failed_at_ms = now_ms;
    it = *f.failed_at_ms + kBindFailuresKeptMs < now_ms ? records.bind_failures.erase(it) : std::next(it);
  }
}

/// A step of a series: the clock never goes back in a series; a last step no window samples (later
/// than `replaces_after`) is replaced; a step holding what the last one holds adds nothing.
void append_step(std::vector<AllocationStep>& series, AllocationStep step, int64_t replaces_after) {
  if (!series.empty()) step.at_ms = std::max(step.at_ms, series.back().at_ms);
  if (!series.empty() && series.back().at_ms > replaces_after) series.pop_back();
  if (!series.empty() && series.back().same_amounts(step)) return;
  series.push_back(step);
}

/// Forgets the steps over before `keep_from` (the one in effect then stays), once they are half the
/// series: erasing from the front of a vector moves the rest, so it is done rarely (no window reads
/// them either way).
void forget_before(std::vector<AllocationStep>& series, int64_t keep_from) {
  const auto in_effect = std::upper_bound(series.begin(), series.end(), keep_from,
                                          [](int64_t t, const AllocationStep& s) { return t < s.at_ms; });
  if (in_effect == series.begin()) return;
  const auto over = static_cast<size_t>(in_effect - series.begin()) - 1;
  if (over == 0 || over * 2 < series.size()) return;
  series.erase(series.begin(), series.begin() + static_cast<std::ptrdiff_t>(over));
}

/// Folds a cycle's allocation record into the history (docs/time-based-fair-share.md "The daemon").
void fold_allocation(AllocationHistory& history, const AllocationChange& a) {
  for (const auto& q : a.queues) append_step(history.queues[q.queue], q.step, a.replaces_after_ms);
  if (a.capacity) append_step(history.capacity, *a.capacity, a.replaces_after_ms);
  forget_before(history.capacity, a.keep_from_ms);
  for (auto it = history.queues.begin(); it != history.queues.end();) {
    auto& series = it->second;
    forget_before(series, a.keep_from_ms);
    // A queue that has held nothing since before every window (a deleted one) is forgotten.
    const bool gone = series.back().at_ms <= a.keep_from_ms && series.back().same_amounts({});
    it = gone ? history.queues.erase(it) : std::next(it);
  }
}

}  // namespace

bool apply_record(ScheduleRecords& records, const Event& event) {
  if (const auto* d = std::get_if<DecisionEvent>(&event.payload)) {
    if (d->decision.kind != DecisionKind::kPipeline) records.assumed[event.seq] = {d->decision, false};
    return true;
  }
  if (const auto* o = std::get_if<BinderOutcome>(&event.payload)) {
    auto it = records.assumed.find(o->decision_seq);
    if (it == records.assumed.end()) return true;
    count_bind(records, it->second.decision, *o);
    if (o->outcome == Outcome::kBound && !o->settles) {
      it->second.reported = true;  // the watch confirms it (AssumedSettled)
    } else if (o->outcome == Outcome::kUnconfirmed && it->second.decision.kind == DecisionKind::kBind) {
      it->second.unconfirmed = true;  // held until the watch shows it or the hold runs out (AssumedSettled)
      it->second.held_since_ms.reset();
    } else {
      records.assumed.erase(it);
    }
    return true;
  }
  if (const auto* s = std::get_if<AssumedSettled>(&event.payload)) {
    for (uint64_t seq : s->decision_seqs) records.assumed.erase(seq);
    return true;
  }
  if (const auto* c = std::get_if<CycleStart>(&event.payload)) {
    records.last_now_ms = std::max(records.last_now_ms, c->now_ms != 0 ? c->now_ms : c->now * 1000);
    records.scheduler_name = c->scheduler_name;
    if (!records.bind_failures.empty()) {
      time_bind_failures(records, records.last_now_ms);
    }
    for (auto& [seq, a] : records.assumed) {
      if (a.unconfirmed && !a.held_since_ms) a.held_since_ms = records.last_now_ms;
    }
    return true;
  }
  if (const auto* j = std::get_if<JobStateChange>(&event.payload)) {
    records.job_state_log.note(j->group_uid);
    if (j->source == JobStateSource::kForget) {
      records.job_states.erase(j->group_uid);
      return true;
    }
    JobState& st = records.job_states[j->group_uid];
    st.group = j->group;
    JobValue& f = st.fields[static_cast<int>(j->field)];
    f.value = j->value;
    if (j->source == JobStateSource::kWatched) {
      f.expected = {j->value};
    } else {
      remember(f.expected, j->seen);
      remember(f.expected, j->value);
    }
    return true;
  }
  if (const auto* w = std::get_if<StatusWrite>(&event.payload)) {
    if (w->settled) {
      records.status_writes.erase(w->mark_key());
    } else {
      records.status_writes[w->mark_key()] = GroupWriteMark{status_write_hash(*w), records.last_now_ms};
    }
    return true;
  }
  if (const auto* a = std::get_if<AllocationChange>(&event.payload)) {
    fold_allocation(records.usage_history, *a);
    return true;
  }
  if (const auto* w = std::get_if<PodGroupWrite>(&event.payload)) {
    if (w->settled) {
      records.group_writes.erase(w->group);
    } else {
      records.group_writes[w->group] = GroupWriteMark{group_write_hash(*w), records.last_now_ms};
    }
    return true;
  }
  return false;
}

Status apply(ClusterState& state, const Event& event) {
  state.seq = event.seq;
  if (apply_record(state.records, event)) return Status::ok();
  const auto* w = std::get_if<WatchEvent>(&event.payload);
  if (w == nullptr) return Status::ok();
  return apply_watch(*w, state.resource_versions, [&](auto kind) -> auto& { return decltype(kind)::in(state); });
}

}  // namespace kai::events
