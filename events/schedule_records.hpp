#pragma once
// What the scheduler's own records add to a cycle's input (docs/one-truth.md): the decisions it
// assumes done (sent to the binder, not yet seen on the watch, as kube-scheduler's cache "assumes"
// pods), the job state KAI keeps on PodGroups (last start, stale since, last eviction) and the failed binds
// that back a group off. All are folded from logged records only, so the daemon, kai-sim and replay give a
// cycle the same input.

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "events/allocation_history.hpp"
#include "events/decision.hpp"
#include "events/job_state_change_log.hpp"

namespace kai::events {

/// How long a bind a restart left unconfirmed keeps its placement (docs/event-ordering.md "Restart:
/// unconfirmed binds"): the client's request timeout, the longest the earlier run would have waited
/// for the API server to carry the bind out.
inline constexpr int64_t kUnconfirmedBindHoldMs = 30 * 1000;

/// A bind or evict decision that cycles treat as done until a logged record ends it: a failed,
/// timed-out, cancelled or abandoned outcome, or the cycle's AssumedSettled (the watch shows the pod
/// bound, deleting or gone, or an unconfirmed bind's hold ran out). A `bound` outcome only marks it
/// reported: the watch has the last word.
struct AssumedDecision {
  Decision decision;
  bool reported = false;  ///< The binder logged `bound`; a restart does not abandon it.
  /// A restart logged the bind `unconfirmed`: it may still land, so its placement is held until the
  /// watch shows the pod or kUnconfirmedBindHoldMs after `held_since_ms`.
  bool unconfirmed = false;
  std::optional<int64_t> held_since_ms = {};  ///< Timed by the next CycleStart: the logged clock.
  bool operator==(const AssumedDecision& o) const;

  /// Whether an unconfirmed bind's hold has run out at `now_ms` (untimed: this cycle is the first
  /// after the restart, so it has not).
  bool hold_ran_out(int64_t now_ms) const {
    return unconfirmed && held_since_ms.value_or(now_ms) + kUnconfirmedBindHoldMs <= now_ms;
  }
};

/// The job state fields KAI keeps as PodGroup annotations (job_field_annotation names each).
enum class JobField : uint8_t { kLastStart = 0, kStaleSince = 1, kLastEviction = 2 };
inline constexpr int kJobFields = 3;

/// The PodGroup annotation that shows `field` (k8s/model/well_known_names.hpp).
const char* job_field_annotation(JobField field);

/// One job state field of one group: its value and the values its PodGroup's annotation may show
/// without that being someone else's change (our earlier writes and what was there before them).
struct JobValue {
  std::optional<int64_t> value;  ///< Unix seconds.
  std::vector<std::optional<int64_t>> expected;
  bool operator==(const JobValue&) const = default;
};

/// The job state of one pod group (by UID: a PodGroup's, or the synthesised group's).
struct JobState {
  std::string group;  ///< "namespace/name", for messages.
  JobValue fields[kJobFields];
  bool operator==(const JobState& o) const {
    return group == o.group && std::equal(std::begin(fields), std::end(fields), std::begin(o.fields));
  }
};

/// How long the fold keeps a pod's failed binds after the last one (docs/one-truth.md "Bind
/// backoff"): longer than the longest backoff, so that a pod still failing keeps its count.
inline constexpr int64_t kBindFailuresKeptMs = 10 * 60 * 1000;

/// The failed binds of one pod since its last successful one (docs/one-truth.md "Bind backoff").
struct BindFailures {
  std::string pod_uid;    ///< The pod they were about; another UID under the name starts afresh.
  uint32_t failures = 0;  ///< Counted outcomes (bind failed, reservation timed out) in a row.
  /// The logged clock of the last one: the `now` of the first cycle logged after it; empty until
  /// that cycle (a cycle reading it takes its own `now`).
  std::optional<int64_t> failed_at_ms = {};
  std::string reason = {};  ///< The binder's reason for the last one.
  bool operator==(const BindFailures&) const = default;
};

/// How long a logged PodGroup write stands before a cycle that still finds the object or a pod
/// unchanged asks for it again (the write failed, or its watch event is late): KAI's pod grouper
/// requeues a failed write with a backoff up to 60 s.
inline constexpr int64_t kGroupWriteRetryMs = 30 * 1000;

/// The last PodGroup write a cycle asked for for one group (docs/pod-grouping.md "Objects written").
struct GroupWriteMark {
  uint64_t hash = 0;    ///< group_write_hash() of the record.
  int64_t at_ms = 0;    ///< The `now` of the cycle that logged it.
  bool operator==(const GroupWriteMark&) const = default;
};

/// Everything the scheduler's records contribute to the next cycle's input.
struct ScheduleRecords {
  std::map<uint64_t, AssumedDecision> assumed;  ///< By the decision's log sequence.
  /// By group UID. Changed through apply_record only, which notes each change in job_state_log.
  std::map<std::string, JobState> job_states;
  int64_t last_now_ms = 0;                      ///< The `now` of the last logged cycle, milliseconds.
  std::string scheduler_name = "kai-scheduler";  ///< The last logged cycle's.
  /// Pods whose last binds failed, by "namespace/name" (docs/one-truth.md "Bind backoff").
  std::map<std::string, BindFailures> bind_failures = {};
  /// The PodGroup writes asked for and not yet seen done, by group "namespace/name".
  std::map<std::string, GroupWriteMark> group_writes = {};
  /// The status writes asked for and not yet seen done, by StatusWrite::mark_key().
  std::map<std::string, GroupWriteMark> status_writes = {};
  /// Each queue's allocation and the cluster's capacity over time, for time-based fair share
  /// (docs/time-based-fair-share.md); empty without `usageDBConfig`.
  AllocationHistory usage_history = {};
  /// The groups whose job_states entry changed lately; no part of the records' value.
  JobStateChangeLog job_state_log = {};
  bool operator==(const ScheduleRecords&) const = default;

  /// Whether the next CycleStart changes the records by timing a failed bind or an unconfirmed
  /// bind's hold: the daemon logs that cycle even when it decides nothing.
  bool has_untimed_records() const;

  /// Decisions without a binder report (seq -> pod): what a restart logs as unconfirmed or abandoned.
  std::map<uint64_t, std::string> open_decisions() const;
};

inline bool AssumedDecision::operator==(const AssumedDecision& o) const {
  const Decision& a = decision;
  const Decision& b = o.decision;
  return reported == o.reported && unconfirmed == o.unconfirmed && held_since_ms == o.held_since_ms &&
         a.seq == b.seq && a.action == b.action && a.kind == b.kind &&
         a.pod == b.pod && a.pod_uid == b.pod_uid && a.node == b.node && a.gpu_groups == b.gpu_groups &&
         a.gpu_fraction == b.gpu_fraction && a.reason == b.reason && a.by == b.by && a.queue == b.queue;
}

inline std::map<uint64_t, std::string> ScheduleRecords::open_decisions() const {
  std::map<uint64_t, std::string> out;
  for (const auto& [seq, a] : assumed) {
    if (!a.reported && !a.unconfirmed) out.emplace(seq, a.decision.pod);
  }
  return out;
}

inline bool ScheduleRecords::has_untimed_records() const {
  for (const auto& [pod, f] : bind_failures) {
    if (!f.failed_at_ms) return true;
  }
  for (const auto& [seq, a] : assumed) {
    if (a.unconfirmed && !a.held_since_ms) return true;
  }
  return false;
}

}  // namespace kai::events
