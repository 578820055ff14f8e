#pragma once
// kai-sim --what-if's workload file: the Pods (and PodGroups) a user would submit, checked against
// the cluster and completed with what the API server and the admission would fill in, so that the
// session sees them as it would see them once submitted (docs/what-if.md "The workload file").

#include <cstdint>
#include <string>
#include <string_view>

#include "k8s/model/objects.hpp"
#include "k8s/model/status.hpp"

namespace kai::sim {

struct WorkloadDefaults {
  int64_t now = 0;             ///< creationTimestamp of what leaves it out: the session's clock.
  std::string scheduler_name;  ///< spec.schedulerName of pods that leave it out.
};

/// Decodes `text` (JSON or YAML: one object, several documents, an array or a List) with the
/// snapshot decoder and fills namespace "default", a uid derived from kind, namespace and name,
/// creationTimestamp, phase Pending and the scheduler name where left out. Refuses, naming the
/// object: a kind other than Pod or PodGroup, no pods, a pod already bound (spec.nodeName) or
/// started, a name the cluster or the workload already has.
model::Result<model::ClusterObjects> read_workload(std::string_view text, const model::ClusterObjects& cluster,
                                                   const WorkloadDefaults& defaults);

}  // namespace kai::sim
