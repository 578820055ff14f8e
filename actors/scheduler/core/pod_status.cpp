#include "actors/scheduler/core/pod_status.hpp"

#include <array>

#include "k8s/model/enum_names.hpp"

namespace kai::core {

namespace {

constexpr std::array<const char*, 11> kPodStatusNames = {
    "Pending", "Gated", "Allocated", "Pipelined", "Binding", "Bound",
    "Running", "Releasing", "Succeeded", "Failed", "Unknown"};
static_assert(model::names_every(PodStatus::kUnknown, kPodStatusNames));

}  // namespace

const char* to_string(PodStatus s) {
  return model::enum_name(s, kPodStatusNames, "Unknown");
}

}  // namespace kai::core
