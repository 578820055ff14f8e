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

/// The writes a cycle asks for: for each group of `groups` (in order) whose PodGroup is missing or
/// differs, or whose pods are not annotated, one record, unless the records hold the same request
/// younger than kGroupWriteRetryMs; a `settled` record for each marked group that needs nothing any
/// more (or is gone). `pods` are the cycle's pods (ObjectRefs::pods). Deterministic.
std::vector<events::PodGroupWrite> pod_group_writes(const std::vector<PodGroupAssignment>& groups,
                                                    const std::vector<const model::Pod*>& pods,
                                                    const events::ScheduleRecords* records,
                                                    PodGroupObjects which, int64_t now_ms, uint64_t cycle_id);

}  // namespace kai::core
