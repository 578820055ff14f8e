#pragma once
// The names the GPU-sharing chain shares between admission and the binder (docs/kai-compatibility.md "Admission"):
// the configmap prefix annotation, the two configmaps of a container and the volume.

#include <string>
#include <string_view>

#include "k8s/model/well_known_names.hpp"

namespace kai::admission {

/// Where the shared GPU goes: a regular container or an init container, by index.
struct ContainerRef {
  bool init = false;
  size_t index = 0;
  /// "0", "1", ... for containers, "i0", "i1", ... for init containers.
  std::string suffix() const { return (init ? "i" : "") + std::to_string(index); }
};

/// The configmap holding NVIDIA_VISIBLE_DEVICES / GPU_PORTION / RUNAI_NUM_OF_GPUS of a container.
inline std::string capabilities_config_map(std::string_view prefix, const ContainerRef& c) {
  return std::string(prefix) + "-" + c.suffix();
}
/// The configmap the container takes as envFrom (direct environment variables).
inline std::string env_vars_config_map(std::string_view prefix, const ContainerRef& c) {
  return capabilities_config_map(prefix, c) + "-evar";
}
/// The volume that mounts the capabilities configmap.
inline std::string config_map_volume(std::string_view config_map) { return std::string(config_map) + "-vol"; }

/// A new prefix `<base>-<7 random>-shared-gpu`, with `base` (the first owner's name, else the pod's)
/// cut so that the longest derived name, the volume `<prefix>-<idx>-evar`-sized, stays within 63
/// characters, as KAI computes it.
std::string new_config_map_prefix(std::string_view base, const ContainerRef& c, std::string_view random7);

}  // namespace kai::admission
