#pragma once
// The pod grouper's flags (--pod-group-objects, --search-legacy-pg, --knative-gang-schedule) on their
// own, so that the daemon's options name them without the session's headers.

#include <cstdint>

namespace kai::core {

/// Which groups get PodGroup objects written (--pod-group-objects; docs/pod-grouping.md "Objects
/// written").
enum class PodGroupObjects : uint8_t {
  kAll = 0,       ///< Every group the pod grouper decides, as KAI.
  kMultiPod = 1,  ///< Not the groups of one pod (bare pods, Deployments): two calls fewer per pod.
  kNone = 2,      ///< None: the groups stay the scheduler's own.
};

/// The pod grouper's choices besides the objects (docs/pod-grouping.md "Legacy PodGroups"), KAI's
/// defaults unless the daemon is told otherwise.
struct GrouperFlags {
  bool search_legacy_pod_groups = true;  ///< --search-legacy-pg
  bool knative_gang_schedule = true;     ///< --knative-gang-schedule
  /// Whether the grouper gives each group the labels and annotations of the PodGroup it would write
  /// (the top owner's, and kai.scheduler/top-owner-metadata). Only a cycle that computes PodGroup
  /// writes reads them (CycleInput::pod_group_writes): kai-sim turns them off, which spares a copy of
  /// every owner's labels and annotations (30 MB at 150,000 bare pods, bench/README.md).
  bool pod_group_metadata = true;
};

}  // namespace kai::core
