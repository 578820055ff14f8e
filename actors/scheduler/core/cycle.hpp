#pragma once
// One scheduling cycle as a pure function of what the log holds at the cycle's cut: the watched
// objects, the scheduler's records (assumed decisions, job state), the configuration, the scheduler
// name, `now` and the seed. The daemon, kai-sim (each round) and kai-log replay all call run_cycle,
// so the same log gives the same decisions everywhere (docs/one-truth.md).
//
// Read top-down, a cycle:
//   1. settles the assumed decisions the objects confirm (pod bound, deleting or gone) and lays the
//      rest over the objects (a bind puts the pod on its node with its GPU groups, an evict marks it
//      deleting), copying only the pods it changes;
//   2. resolves each group's job state: the records', unless the PodGroup shows a value someone else
//      wrote; without either, the annotations and then the pods' PodScheduled transition time;
//   4. turns the session's job state changes into records and forgets the job state of groups gone;
//   3. holds back the groups whose binds failed less than their backoff ago (bind_backoff.hpp),
//      builds the session and runs the configured actions;
//   5. finds reservation pods whose GPU group nothing uses any more (their deletion is a decision)
//      and the PodGroups and pod annotations the pod grouper writes;
//   6. reports what waits and why, the queues' figures, and the earliest deadline at which a cycle
//      would decide something new with nothing else changed (a backoff's end among them);
//   7. with time-based fair share, gives the session each queue's usage from the records' allocation
//      history (before step 3) and records what each queue holds as the cycle leaves it.

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "actors/scheduler/core/job_state_memo.hpp"
#include "actors/scheduler/core/session.hpp"
#include "actors/scheduler/core/status_objects.hpp"
#include "actors/scheduler/core/usage_history.hpp"
#include "events/event.hpp"
#include "events/schedule_records.hpp"
#include "k8s/model/objects.hpp"

namespace kai::core {

class SessionKeeper;

/// The action name of reservation clean-up decisions (evictions of reservation pods).
inline constexpr const char* kCleanupAction = "reservationcleanup";

/// Everything a cycle reads.
struct CycleInput {
  /// The cut's objects (not copied; they must outlive the result).
  model::ObjectRefs objects;
  /// The scheduler's records at the cut; null = none (kai-sim's first round).
  const events::ScheduleRecords* records = nullptr;
  /// Configuration, scheduler name, now and seed.
  SessionOptions options;
  uint64_t cycle_id = 0;
  /// Whether to look for reservation pods to delete (the daemon and replay; kai-sim does not bind).
  bool reservation_cleanup = true;
  /// Whether to compute the PodGroups and pod annotations the pod grouper writes (the daemon and
  /// replay; kai-sim writes nothing, and computing them for every group is a tenth of its time).
  bool pod_group_writes = true;
  /// The usage computed by an earlier cycle of the same caller (time-based fair share); null = none.
  UsageMemo* usage_memo = nullptr;
  /// The session of the caller's last cycle (session_keeper.hpp), brought up to date instead of
  /// built when only some pods and PodGroups changed; null = always built (kai-sim, replay).
  SessionKeeper* keeper = nullptr;
  /// Whether a kept session may repeat the last cycle's outcome instead of running the actions
  /// (Session::repeat_last_outcome); false runs them every cycle (benchmarks compare the two).
  bool repeat_outcomes = true;
};

/// A pending pod and why it waits (KAI's message), for its PodScheduled condition.
struct PendingPod {
  std::string pod;  ///< "namespace/name"
  std::string uid;
  std::string group;  ///< "namespace/name" of its pod group
  std::string message;
  /// The condition's and the event's reason: Unschedulable, or BindingError for a group backing
  /// off after failed binds (core/bind_backoff.hpp).
  std::string reason = "Unschedulable";
  /// The pod's PodScheduled condition already says False with this reason and message (written
  /// before a restart, or by the replica that led before a failover): nothing to write for it.
  bool shown = false;
  /// Whether the pod's PodScheduled condition is set: its PodGroup's markUnschedulable, true unless
  /// it says false (then only the Warning event goes out, as KAI's status updater does).
  bool mark_condition = true;
};

struct QueueFigures {
  std::string name;
  double fair_gpu = 0, fair_cpu = 0, fair_memory = 0;
  double used_gpu = 0, used_cpu = 0, used_memory = 0;
  /// Time-based fair share's usage, a share of the cluster's capacity (0 without usageDBConfig).
  double usage_gpu = 0, usage_cpu = 0, usage_memory = 0;
};

/// Everything a cycle produces. The records (decisions, cleanups, settled, job state) are logged
/// by the daemon and compared by replay; the rest feeds statuses and metrics.
struct CycleResult {
  std::vector<events::Decision> decisions;  ///< The session's, in commit order.
  /// Reservation pods to delete (evictions, action kCleanupAction), numbered after `decisions`.
  std::vector<events::Decision> cleanups;
  std::vector<uint64_t> settled;  ///< Assumed decisions (log seqs) the objects confirm.
  std::vector<events::JobStateChange> job_state_changes;
  /// The PodGroup objects and pod annotations the pod grouper writes (pod_group_objects.hpp).
  std::vector<events::PodGroupWrite> group_writes;
  /// The PodGroup and Queue statuses KAI's controllers write (status_objects.hpp).
  std::vector<events::StatusWrite> status_writes;
  /// What each queue holds from this cycle on, when it changed (time-based fair share:
  /// usage_history.hpp); none without usageDBConfig.
  std::optional<events::AllocationChange> allocation;
  /// The usage the session was given (its options point here); null without usageDBConfig or when
  /// the input gave it.
  std::unique_ptr<std::map<std::string, UsageShare>> usage;
  /// Every Queue as KAI's queue-controller metrics report it.
  std::vector<QueueControllerFigures> queue_statuses;
  std::vector<events::UnschedulableEvent> unschedulable;
  std::vector<PendingPod> pending;
  std::vector<QueueFigures> queues;
  /// The earliest time (Unix seconds, after `now`) at which a deadline passes: a stale gang's grace,
  /// a job's min-runtime, a group's bind backoff or a pending group's preemption delay ends. A cycle
  /// must run then even if nothing else changed.
  std::optional<int64_t> next_deadline;
  std::vector<std::pair<std::string, uint64_t>> action_us;
  /// The actions did not run: a kept session repeated the last cycle's outcome
  /// (Session::repeat_last_outcome).
  bool outcome_repeated = false;
  std::vector<std::string> skipped_actions;  ///< Configured actions this build does not have.
  uint64_t build_us = 0;
  uint64_t total_us = 0;
  std::vector<std::string> warnings;  ///< Bad input found while building the session.

  /// What the session ran on: the input's addresses with the assumed decisions laid over (the
  /// pods they change are copies held in `patched`).
  model::ObjectRefs refs;
  std::shared_ptr<std::deque<model::Pod>> patched;
  /// The job state the session started from (its options point here): the keeper's, valid until
  /// its next cycle, or `own_job_state`'s.
  const JobTimesByUid* job_times = nullptr;
  std::unique_ptr<JobStateMemo> own_job_state;
  std::unique_ptr<Session> session;
};

/// Runs one cycle. Deterministic: the same input gives the same result, byte for byte.
CycleResult run_cycle(const CycleInput& input);

}  // namespace kai::core

namespace kai::core {

/// The records a cycle appends after its CycleStart, in log order: what it settled, its decisions,
/// its reservation clean-ups (numbered on from the decisions), its job state changes, its PodGroup
/// writes, its status writes, its allocation change. The daemon
/// logs exactly these (plus unschedulable reasons when they change, and the CycleEnd); replay
/// compares them with what it recomputes.
std::vector<events::Payload> cycle_records(const CycleResult& result, uint64_t cycle_id, uint64_t leader_epoch);

}  // namespace kai::core
