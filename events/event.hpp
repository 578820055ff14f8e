#pragma once
// The event vocabulary of the log (docs/event-log-format.md "Record encoding", docs/event-ordering.md): everything the scheduler consumes (watch
// events) and everything it decides (decisions, unschedulable reasons, cycle markers, binder outcomes,
// leadership changes) is one Event in one ordered log. Events are plain values; encoding lives in
// event_codec.hpp and the projection in projection.hpp.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "events/decision.hpp"
#include "events/schedule_records.hpp"

namespace kai::events {

/// The schema version written by this build; older versions are upgraded when read.
inline constexpr uint8_t kSchemaVersion = 9;

/// What a Kubernetes watch stream (or a relist) told us.
enum class WatchType : uint8_t { kAdded = 0, kModified = 1, kDeleted = 2, kBookmark = 3, kRelist = 4 };

/// One object from a watch stream, kept as received so that replay sees exactly what the live
/// scheduler saw.
struct WatchEvent {
  std::string kind;  ///< Node, Pod, Queue, PodGroup, PriorityClass, BindRequest, Topology, Namespace, or an owner kind.
  WatchType type = WatchType::kAdded;
  std::string object_json;  ///< The object as received (JSON text); empty for BOOKMARK.
  std::string resource_version;
  bool operator==(const WatchEvent&) const = default;
};

/// A committed decision of one scheduling cycle.
struct DecisionEvent {
  uint64_t cycle_id = 0;
  Decision decision;
  /// The leader epoch (the Lease's leaseTransitions when this replica took it) of the replica that
  /// decided; 0 without leader election. Added in schema version 3 (v1, v2: 0).
  uint64_t leader_epoch = 0;
  bool operator==(const DecisionEvent& o) const {
    const Decision& a = decision;
    const Decision& b = o.decision;
    return cycle_id == o.cycle_id && leader_epoch == o.leader_epoch && a.seq == b.seq &&
           a.action == b.action && a.kind == b.kind && a.pod == b.pod && a.pod_uid == b.pod_uid &&
           a.node == b.node && a.gpu_groups == b.gpu_groups && a.gpu_fraction == b.gpu_fraction &&
           a.reason == b.reason && a.by == b.by && a.queue == b.queue;
  }
};

/// One reason a pod group could not be scheduled (KAI's reason strings).
struct UnschedulableReason {
  std::string reason;
  std::string message;
  bool operator==(const UnschedulableReason&) const = default;
};

/// A pending pod of an unschedulable group: its key and UID.
struct PendingPodRef {
  std::string pod;  ///< "namespace/name"
  std::string uid;
  bool operator==(const PendingPodRef&) const = default;
};

/// A pod group the cycle left pending, with why.
struct UnschedulableEvent {
  uint64_t cycle_id = 0;
  std::string pod_group;  ///< "namespace/name"
  std::string queue;
  std::vector<UnschedulableReason> reasons;
  /// Its pending pods, so that `kai-log why ns/pod` finds the reasons of a pod whose group the
  /// scheduler named itself. Schema v5 (older: empty).
  std::vector<PendingPodRef> pods = {};
  bool operator==(const UnschedulableEvent&) const = default;
};

/// Start of a scheduling cycle: everything replay needs to run it again identically.
struct CycleStart {
  uint64_t cycle_id = 0;
  uint64_t config_hash = 0;   ///< config_hash() of the body; an earlier ConfigChange holds it.
  uint64_t log_position = 0;  ///< The sequence number of the consistent cut the cycle saw.
  int64_t now = 0;            ///< The session's clock, Unix seconds.
  uint64_t seed = 0;          ///< Seed for new GPU-group ids. Added in schema version 2 (v1: 0).
  /// The scheduler name whose pods the cycle scheduled. Added in schema version 5 (older: the
  /// default, kai-scheduler).
  std::string scheduler_name = "kai-scheduler";
  /// The leader epoch of the replica that ran the cycle (0 without leader election). Schema v5.
  uint64_t leader_epoch = 0;
  /// The same clock in milliseconds (core::SessionOptions::now_ms). Schema v5 (older: 0).
  int64_t now_ms = 0;
  bool operator==(const CycleStart&) const = default;
};

/// End of a scheduling cycle with its timings.
struct CycleEnd {
  uint64_t cycle_id = 0;
  uint64_t total_us = 0;
  std::vector<std::pair<std::string, uint64_t>> action_us;  ///< Per action, in run order.
  bool operator==(const CycleEnd&) const = default;
};

/// What the binder did with a decision.
/// kCancelled (schema v5): the binder gave the job up after its cap (BindJob::deadline) without
/// acting on it, so the pod may be decided again.
/// kUnconfirmed (schema v8): a restart found the bind without a report; the earlier run may have sent
/// it and the API server may still carry it out, so its placement stays held for
/// kUnconfirmedBindHoldMs (docs/event-ordering.md "Restart: unconfirmed binds").
enum class Outcome : uint8_t {
  kBound = 0,
  kBindFailed = 1,
  kReservationTimedOut = 2,
  kAbandoned = 3,
  kCancelled = 4,
  kUnconfirmed = 5
};

/// The result of executing one logged decision.
struct BinderOutcome {
  uint64_t decision_seq = 0;  ///< Log sequence of the DecisionEvent.
  std::string pod;            ///< "namespace/name"
  Outcome outcome = Outcome::kBound;
  std::string reason;
  /// Read from a record before schema v5, whose logs have no AssumedSettled: there a `bound` outcome
  /// also ended the decision's assumption. Set on upgrade, never written.
  bool settles = false;
  bool operator==(const BinderOutcome&) const = default;
};

/// This replica gained or lost leadership.
struct LeadershipChange {
  uint64_t epoch = 0;
  std::string holder;
  bool acquired = false;
  bool operator==(const LeadershipChange&) const = default;
};

/// The scheduler configuration body, logged when it differs from the last one the log holds
/// (docs/event-ordering.md "Configuration changes"), so that replay runs each cycle with the configuration its CycleStart names.
/// Added in schema version 4.
struct ConfigChange {
  uint64_t hash = 0;  ///< config_hash(text): what CycleStart::config_hash refers to.
  std::string text;   ///< The configuration as read (JSON or YAML); empty means KAI's defaults.
  /// The scheduling behaviour version of the build that logged it (core/behaviour_version.hpp);
  /// replay compares only cycles of its own version. Schema v5 (older records: 0).
  uint32_t behaviour_version = 0;
  /// The session options set by the daemon's flags (core/session_flags.hpp). Schema v5 (older:
  /// empty, the defaults).
  std::string flags = {};
  bool operator==(const ConfigChange&) const = default;
};

/// Where a job state value came from.
enum class JobStateSource : uint8_t {
  kDecided = 0,  ///< The cycle set or cleared it (KAI's session does): the PodGroup is patched.
  kWatched = 1,  ///< Someone else's value seen on the PodGroup (a user, another replica): adopted.
  kForget = 2,   ///< The group is gone: its job state is dropped.
};

/// A change of one job state field of one pod group (schema v5), logged with the cycle that made it
/// and applied by the projection at once (events/schedule_records.hpp).
struct JobStateChange {
  uint64_t cycle_id = 0;
  std::string group_uid;
  std::string group;  ///< "namespace/name"
  JobField field = JobField::kLastStart;
  std::optional<int64_t> value;  ///< Unix seconds; empty = removed.
  std::optional<int64_t> seen;   ///< What the PodGroup showed when the cycle decided (kDecided).
  JobStateSource source = JobStateSource::kDecided;
  bool operator==(const JobStateChange&) const = default;
};

/// Assumed decisions the cycle found confirmed by the watched state at its cut (the pod bound,
/// deleting or gone): they stop being a cycle input (schema v5).
struct AssumedSettled {
  uint64_t cycle_id = 0;
  std::vector<uint64_t> decision_seqs;
  bool operator==(const AssumedSettled&) const = default;
};

/// A pod of a PodGroupWrite whose `pod-group-name` annotation or `kai.scheduler/subgroup-name` label
/// the pod grouper sets (docs/pod-grouping.md "Objects written").
struct GroupedPod {
  std::string pod;  ///< "namespace/name"
  std::string uid;
  std::string sub_group;  ///< The label's value; "" = the label is left as it is.
  bool operator==(const GroupedPod&) const = default;
};

/// What KAI's pod grouper writes for one group, as a cycle asked for it (schema v6): the PodGroup
/// object to create or update and the pods to annotate. Logged with the cycle, executed by the
/// PodGroup writer after the cycle's binds, folded into ScheduleRecords::group_writes so that the
/// same write is not asked for again while the watch has not shown it yet.
struct PodGroupWrite {
  uint64_t cycle_id = 0;
  std::string group;  ///< "namespace/name"
  /// The PodGroup as KAI's pod grouper builds it (JSON, scheduling.run.ai/v2alpha2); empty when the
  /// object already says it and only pods are patched.
  std::string object_json;
  /// Whether the cycle saw the object: it is then read and updated, otherwise created.
  bool exists = false;
  std::vector<GroupedPod> pods;
  /// The group needs nothing any more (written, or gone): its mark is dropped, nothing is written.
  bool settled = false;
  bool operator==(const PodGroupWrite&) const = default;
};

/// The status KAI's controllers write on one PodGroup or Queue, as a cycle asked for it (schema v7;
/// docs/status.md): a PodGroup's resourcesStatus and schedulingConditions, a Queue's allocated,
/// allocatedNonPreemptible, requested and childQueues, as a JSON merge patch of the object's status
/// subresource. Logged with the cycle, written by the PodGroup writer behind the binds, folded into
/// ScheduleRecords::status_writes so that the same status is not asked for again while the watch
/// has not shown it yet.
struct StatusWrite {
  uint64_t cycle_id = 0;
  std::string kind;    ///< "PodGroup" or "Queue"
  std::string object;  ///< A PodGroup's "namespace/name", a Queue's name.
  std::string uid;     ///< The object's UID: the patch applies to that object only.
  std::string patch_json;  ///< {"status": {...}}; empty when settled.
  /// The object needs nothing any more (written, or gone): its mark is dropped, nothing is written.
  bool settled = false;
  /// The key of its mark in ScheduleRecords::status_writes.
  std::string mark_key() const { return kind + " " + object; }
  bool operator==(const StatusWrite&) const = default;
};

/// One queue's allocation from a cycle on (AllocationChange).
struct QueueAllocationStep {
  std::string queue;
  AllocationStep step;
  bool operator==(const QueueAllocationStep&) const = default;
};

/// What time-based fair share reads (schema v9; docs/time-based-fair-share.md): the queues whose
/// allocation changed and the cluster's capacity if it changed, as the cycle leaves them, from the
/// cycle's `now` on. Logged with the cycle when something changed and `usageDBConfig` is on; folded
/// into ScheduleRecords::usage_history.
struct AllocationChange {
  uint64_t cycle_id = 0;
  std::vector<QueueAllocationStep> queues;
  std::optional<AllocationStep> capacity;
  /// The last time before the steps that a usage window may sample: a series' last step later than
  /// it is never sampled, so the new step replaces it (the history keeps one step per sample).
  int64_t replaces_after_ms = 0;
  /// The first time any later cycle's window reaches back to: steps over before it are forgotten.
  int64_t keep_from_ms = 0;
  bool operator==(const AllocationChange&) const = default;
};

/// The payload kinds; the index is the on-disk type tag minus one (see event_codec.hpp), so new kinds
/// are appended at the end.
using Payload = std::variant<WatchEvent, DecisionEvent, UnschedulableEvent, CycleStart, CycleEnd,
                             BinderOutcome, LeadershipChange, ConfigChange, JobStateChange, AssumedSettled, PodGroupWrite,
                             StatusWrite, AllocationChange>;

/// One entry of the log. `seq` is assigned by the log on append (it lives in the key, not the value).
struct Event {
  uint64_t seq = 0;
  int64_t timestamp_us = 0;                 ///< Wall clock when the event was produced, Unix microseconds.
  uint8_t schema_version = kSchemaVersion;  ///< The version it was read as (after upgrade: current).
  Payload payload;
  bool operator==(const Event&) const = default;
};

/// Short lower-case name of an event's kind ("watch", "decision", ...), used by filters and dumps.
const char* kind_name(const Payload& p);
const char* to_string(WatchType t);
const char* to_string(Outcome o);

/// The hash by which CycleStart and ConfigChange name a configuration body: 64-bit FNV-1a of the
/// text, so the same bytes always give the same hash, in the daemon and in replay.
/// Since schema v5 the hash also covers the behaviour version (config_hash(text, version)), so a
/// new build logs its configuration anew.
uint64_t config_hash(std::string_view text);
uint64_t config_hash(std::string_view text, uint32_t behaviour_version, std::string_view flags = {});

/// What a PodGroupWrite asks for (its object and pods, not its cycle), as ScheduleRecords marks it:
/// a cycle asking for the same thing again within the retry period logs nothing.
uint64_t group_write_hash(const PodGroupWrite& w);
/// What a StatusWrite asks for, as ScheduleRecords marks it: its kind, object and patch without the
/// conditions' lastTransitionTime, which a cycle sets to its own now each time it asks.
uint64_t status_write_hash(const StatusWrite& w);
const char* to_string(JobField f);
const char* to_string(JobStateSource s);

}  // namespace kai::events
