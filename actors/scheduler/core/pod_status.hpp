#pragma once
// KAI's pod statuses (docs/kai-compatibility.md "Pod statuses") and the status sets the actions use.

#include <cstdint>

namespace kai::core {

enum class PodStatus : uint8_t {
  kPending,
  kGated,
  kAllocated,
  kPipelined,
  kBinding,
  kBound,
  kRunning,
  kReleasing,
  kSucceeded,
  kFailed,
  kUnknown,
};

const char* to_string(PodStatus s);

/// Allocated|Pipelined|Binding|Bound|Running|Releasing: occupies (or is about to occupy) a node.
inline bool is_active_used(PodStatus s) {
  return s == PodStatus::kAllocated || s == PodStatus::kPipelined || s == PodStatus::kBinding ||
         s == PodStatus::kBound || s == PodStatus::kRunning || s == PodStatus::kReleasing;
}
/// ActiveUsed without Releasing.
inline bool is_active_allocated(PodStatus s) {
  return is_active_used(s) && s != PodStatus::kReleasing;
}
/// Allocated|Bound|Binding|Running: counted as the queue's allocation.
inline bool is_allocated_status(PodStatus s) {
  return s == PodStatus::kAllocated || s == PodStatus::kBinding || s == PodStatus::kBound ||
         s == PodStatus::kRunning;
}
/// Not finished and not leaving.
inline bool is_alive(PodStatus s) {
  return s == PodStatus::kAllocated || s == PodStatus::kPipelined || s == PodStatus::kBinding ||
         s == PodStatus::kBound || s == PodStatus::kRunning || s == PodStatus::kPending ||
         s == PodStatus::kGated;
}

}  // namespace kai::core
