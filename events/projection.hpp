#pragma once
// The pure projection of the log into the cluster state the scheduler sees: the state at a cycle is
// exactly apply() folded over the log up to that cycle's recorded position (docs/determinism-and-replay.md "The projection").

#include <cstdint>
#include <map>
#include <string>

#include "events/event.hpp"
#include "k8s/model/objects.hpp"
#include "k8s/model/status.hpp"

namespace kai::events {

using model::Result;
using model::Status;

/// The projected objects, keyed by "namespace/name" (cluster-scoped kinds: "name"). Ordered maps make
/// to_objects() deterministic, which snapshot export and replay comparisons rely on.
template <class T>
using ByKey = std::map<std::string, T>;

struct ClusterState : model::PerKind<ByKey> {
  /// Last resourceVersion seen per kind (BOOKMARKs included): where a watch resumes.
  std::map<std::string, std::string> resource_versions;
  /// The scheduler's own records that feed the next cycle: assumed decisions (those without a binder
  /// report are never executed again after a restart; binds among them stay held a while:
  /// docs/event-ordering.md "Restart: unconfirmed binds"), job state, the last logged `now`.
  ScheduleRecords records;
  uint64_t seq = 0;  ///< Sequence of the last event applied.

  bool operator==(const ClusterState&) const = default;

  /// The state as the model's object lists (the input of a session or of encode_snapshot_json).
  model::ClusterObjects to_objects() const;
};

/// Applies one event. Watch events change objects: ADDED / MODIFIED upsert, DELETED removes,
/// BOOKMARK only records the resourceVersion, RELIST replaces every object of the kind with the JSON
/// array (or List) in object_json. The scheduler's records change `records` (apply_record). A watch
/// object that cannot be decoded leaves the state unchanged (apart from seq) and is returned as an
/// error, so a bad object from the API server never aborts a replay.
Status apply(ClusterState& state, const Event& event);

/// The records' part of apply, shared with the daemon's scheduler actor (which appends them): a bind
/// or evict decision becomes assumed under the event's seq; a `bound` outcome marks it reported, any
/// other outcome and AssumedSettled end it; a bind's outcome counts in its pod's failed binds; a
/// CycleStart sets last_now and times the failed binds since the last one; a JobStateChange sets
/// its field (docs/one-truth.md). Returns whether the event was one of these records.
bool apply_record(ScheduleRecords& records, const Event& event);

}  // namespace kai::events
