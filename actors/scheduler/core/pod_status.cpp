#include "actors/scheduler/core/pod_status.hpp"

namespace kai::core {

const char* to_string(PodStatus s) {
  switch (s) {
    case PodStatus::kPending:
      return "Pending";
    case PodStatus::kGated:
      return "Gated";
    case PodStatus::kAllocated:
      return "Allocated";
    case PodStatus::kPipelined:
      return "Pipelined";
    case PodStatus::kBinding:
      return "Binding";
    case PodStatus::kBound:
      return "Bound";
    case PodStatus::kRunning:
      return "Running";
    case PodStatus::kReleasing:
      return "Releasing";
    case PodStatus::kSucceeded:
      return "Succeeded";
    case PodStatus::kFailed:
      return "Failed";
    case PodStatus::kUnknown:
      return "Unknown";
  }
  return "Unknown";
}

}  // namespace kai::core
