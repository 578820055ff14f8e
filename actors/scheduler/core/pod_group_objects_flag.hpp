#pragma once
// The choice of --pod-group-objects on its own, so that the daemon's options name it without the
// session's headers.

#include <cstdint>

namespace kai::core {

/// Which groups get PodGroup objects written (--pod-group-objects; docs/pod-grouping.md "Objects
/// written").
enum class PodGroupObjects : uint8_t {
  kAll = 0,       ///< Every group the pod grouper decides, as KAI.
  kMultiPod = 1,  ///< Not the groups of one pod (bare pods, Deployments): two calls fewer per pod.
  kNone = 2,      ///< None: the groups stay the scheduler's own.
};

}  // namespace kai::core
