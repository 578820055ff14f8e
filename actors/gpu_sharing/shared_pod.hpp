#pragma once
// What the GPU-sharing chain needs to know of a fraction pod before it binds it (docs/gpu-sharing.md):
// the configmap name the admission webhook gave it and which container holds the GPU request.

#include <string>

#include "k8s/model/objects.hpp"

namespace kai::gpu_sharing {

struct SharedPodInfo {
  /// runai/shared-gpu-configmap; "" when the webhook did not mutate the pod.
  std::string config_map_prefix;
  /// The GPU container's configmap suffix: its index among the containers ("0" by default), or "i"
  /// and its index among the init containers.
  std::string container_suffix = "0";
};

/// Reads `pod`'s annotations (runai/shared-gpu-configmap, gpu-fraction-container-name).
SharedPodInfo shared_pod_info(const model::Pod& pod);

}  // namespace kai::gpu_sharing
