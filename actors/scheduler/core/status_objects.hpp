#pragma once
// The statuses users read with kubectl, as KAI's controllers write them (docs/status.md), as a pure
// function of a cycle's session and the scheduler's records:
// - a PodGroup's status.resourcesStatus (requested, allocated, allocatedNonPreemptible) from its
//   pods, as KAI's pod-group controller computes it;
// - its status.schedulingConditions (UnschedulableOnNodePool) from the cycle's unschedulable
//   reasons, as KAI's scheduler sets and clears them;
// - a Queue's status (the same three lists summed over its PodGroups and its children, and
//   childQueues), as KAI's queue controller aggregates them up the tree.
// What differs from the watched status becomes a logged events::StatusWrite that the daemon's
// PodGroup writer executes as a merge patch of the status subresource.

#include <cstdint>
#include <string>
#include <vector>

#include "actors/scheduler/core/queue_controller_figures.hpp"
#include "actors/scheduler/core/session.hpp"
#include "events/event.hpp"

namespace kai::core {

/// KAI's pod-group controller's resourcesStatus of `job`: requested over its Pending and Running
/// pods, allocated over its Running ones and Pending ones already PodScheduled, both the containers'
/// requests plus a shared GPU's portion (gpu-fraction, or gpu-memory over the node's GPU memory);
/// allocatedNonPreemptible is allocated for a non-preemptible group and `existing`'s otherwise (KAI
/// never clears it).
model::ResourcesStatus pod_group_resources(const Session& ssn, const JobInfo& job,
                                           const model::ResourcesStatus& existing);

struct StatusOutput {
  std::vector<events::StatusWrite> writes;
  std::vector<QueueControllerFigures> queues;  ///< Every Queue object, by name.
};

/// The status writes a cycle asks for: for every PodGroup object the session schedules and every
/// Queue whose status differs from what the watch shows, one record, unless the records hold the
/// same request younger than events::kGroupWriteRetryMs; a `settled` record for each marked object
/// that needs nothing any more (or is gone). `unschedulable` is the cycle's (CycleResult). Deterministic.
/// Also each Queue's metric figures, from the status it should have.
StatusOutput status_writes(const Session& ssn, const model::ObjectRefs& objects,
                           const std::vector<events::UnschedulableEvent>& unschedulable,
                           const events::ScheduleRecords* records, uint64_t cycle_id);

}  // namespace kai::core
