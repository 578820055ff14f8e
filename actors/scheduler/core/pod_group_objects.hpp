#pragma once
// The PodGroup objects and pod annotations KAI's pod grouper writes (docs/pod-grouping.md "Objects
// written"), as a pure function of a cycle's groups and the scheduler's records: for each group the
// grouper decided, the PodGroup it builds, compared with the watched one by KAI's update rules, and
// the pods whose `pod-group-name` annotation or subgroup label is not yet what it names. What
// differs becomes a logged events::PodGroupWrite that the daemon's PodGroup writer executes.

#include <cstdint>
#include <string>
#include <vector>

#include "actors/scheduler/core/grouping.hpp"
#include "actors/scheduler/core/session.hpp"
#include "events/event.hpp"
#include "events/schedule_records.hpp"

namespace kai::core {

/// The PodGroup KAI's pod grouper builds for `group` (which has a spec): its name, namespace, labels,
/// annotations, one ownerReference and the spec, but no status.
model::PodGroup desired_pod_group(const PodGroupAssignment& group);

/// `desired` as KAI updates an existing PodGroup with it: the queue, markUnschedulable and
/// schedulingBackoff frozen, the node-pool and queue labels kept as they are, the topology kept
/// when `desired` names none.
model::PodGroup as_update_of(const model::PodGroup& existing, model::PodGroup desired);

/// Whether `existing` already says what `desired` (as_update_of `existing`) says, by KAI's rule:
/// equal specs and ownerReferences, every desired label and annotation present with its value.
bool says_the_same(const model::PodGroup& existing, const model::PodGroup& desired);

/// Whether `existing` already says what the grouper decided for `group` (which has a spec), by the
/// rules of as_update_of and says_the_same, without building the desired object.
bool already_written(const model::PodGroup& existing, const PodGroupAssignment& group);

/// What pod_group_writes remembers for its next pass on the same session (Session::groups_written):
/// the groups, by index, that needed nothing. What a group needs is a function of the group, its
/// PodGroup object and its pods' objects alone, so it needs nothing until one of them changes; a
/// kept session then derives its job again and unmarks it, and a relayout renumbers the marks
/// (session_refresh.cpp, session_relayout.cpp). A pass over 150,000 groups in sync reads none.
struct GroupsWritten {
  PodGroupObjects which = PodGroupObjects::kNone;  ///< Of the pass that marked them.
  std::vector<char> in_sync;                       ///< By group index; empty: not primed.
  /// Unmarks group `j` (its job is derived again).
  void unmark(uint32_t j) {
    if (j < in_sync.size()) in_sync[j] = 0;
  }
};

/// The writes a cycle asks for: for each group of `groups` (in order) whose PodGroup is missing or
/// differs, or whose pods are not annotated, one record, unless the records hold the same request
/// younger than kGroupWriteRetryMs; then, in key order, a `settled` record for each marked group
/// that needs nothing any more (or is gone). `pods` are the cycle's pods (ObjectRefs::pods).
/// `written` (optional) skips the groups it marks and marks those found needing nothing.
/// Deterministic, and the same with or without `written`.
std::vector<events::PodGroupWrite> pod_group_writes(const std::vector<PodGroupAssignment>& groups,
                                                    const std::vector<const model::Pod*>& pods,
                                                    const events::ScheduleRecords* records,
                                                    PodGroupObjects which, int64_t now_ms, uint64_t cycle_id,
                                                    GroupsWritten* written = nullptr);

}  // namespace kai::core
