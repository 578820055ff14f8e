#include "actors/gpu_sharing/shared_pod.hpp"

namespace kai::gpu_sharing {

SharedPodInfo shared_pod_info(const model::Pod& pod) {
  SharedPodInfo info;
  const auto& ann = pod.meta.annotations;
  if (auto it = ann.find("runai/shared-gpu-configmap"); it != ann.end()) info.config_map_prefix = it->second;
  if (auto it = ann.find("gpu-fraction-container-name"); it != ann.end()) {
    for (size_t c = 0; c < pod.containers.size(); ++c) {
      if (pod.containers[c].name == it->second) info.container_suffix = std::to_string(c);
    }
    for (size_t c = 0; c < pod.init_containers.size(); ++c) {
      if (pod.init_containers[c].name == it->second) info.container_suffix = "i" + std::to_string(c);
    }
  }
  return info;
}

}  // namespace kai::gpu_sharing
