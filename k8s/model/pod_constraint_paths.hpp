#pragma once
// The paths a decoded Pod lists in Pod::unsupported_constraints for the fields the scheduler refuses
// (required pod (anti-)affinity, hard topology spread, resource claims, host ports). The
// decoder records them; the encoder writes placeholders at the same paths, so decode(encode(x)) == x.
// Internal to the JSON codec (json_decode.cpp, json_encode.cpp).

#include <cstddef>
#include <cstdio>
#include <string>
#include <string_view>

namespace kai::model::json_detail {

/// The path of a container port's hostPort, recorded as an unsupported constraint.
inline std::string host_port_path(bool init, size_t container, size_t port) {
  return std::string(init ? "spec.initContainers" : "spec.containers") + "[" + std::to_string(container) +
         "].ports[" + std::to_string(port) + "].hostPort";
}

/// Whole-field paths, recorded when the field is set at all.
constexpr std::string_view kPodAffinityPath =
    "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution";
constexpr std::string_view kPodAntiAffinityPath =
    "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution";
constexpr std::string_view kTopologySpreadPath = "spec.topologySpreadConstraints";
constexpr std::string_view kResourceClaimsPath = "spec.resourceClaims";

/// Parses "spec.containers[i].ports[j].hostPort" (or initContainers) back into its indices.
inline bool parse_host_port_path(const std::string& path, bool& init, size_t& container, size_t& port) {
  unsigned long c = 0, p = 0;
  char tail[16] = {};
  if (std::sscanf(path.c_str(), "spec.containers[%lu].ports[%lu].%15s", &c, &p, tail) == 3) {
    init = false;
  } else if (std::sscanf(path.c_str(), "spec.initContainers[%lu].ports[%lu].%15s", &c, &p, tail) == 3) {
    init = true;
  } else {
    return false;
  }
  if (std::string_view(tail) != "hostPort") return false;
  container = c;
  port = p;
  return true;
}

}  // namespace kai::model::json_detail
