#pragma once
// The job state a log holds, written into a snapshot the way KAI keeps it: as PodGroup annotations
// (kai.scheduler/last-start-timestamp, kai.scheduler/stale-podgroup-timestamp). A group the
// scheduler synthesised (no PodGroup object) is emitted as the PodGroup the pod grouper would
// create, carrying them; its pods join it by name (grouping.hpp). kai-sim then reads the same job
// state that the daemon's cycle read from the log (docs/one-truth.md).

#include <string>

#include "events/schedule_records.hpp"
#include "k8s/model/objects.hpp"

namespace kai::core {

/// Sets the annotations of the PodGroups the records hold job state for, and appends a PodGroup
/// for each synthesised group that has job state.
void export_job_state(model::ClusterObjects& objects, const events::ScheduleRecords& records,
                      const std::string& scheduler_name, const std::string& default_queue);

}  // namespace kai::core
