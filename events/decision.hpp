#pragma once
// The scheduling decisions a session commits (kai-sim's "decisions", docs/build-and-ci.md "kai-sim's output"). They are the unit the
// event log persists and the binder executes; the core produces them, nothing here depends on storage.

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "k8s/model/enum_names.hpp"

namespace kai::events {

enum class DecisionKind : uint8_t { kBind, kPipeline, kEvict };

/// One committed operation of a Statement, in commit order.
struct Decision {
  uint64_t seq = 0;    ///< 1-based position in the session's commit order.
  std::string action;  ///< allocate | consolidation | reclaim | preempt | stalegangeviction
  DecisionKind kind = DecisionKind::kBind;
  std::string pod;  ///< "namespace/name"
  std::string pod_uid;
  std::string node;  ///< Target node (bind, pipeline) or the node the victim leaves (evict).
  std::vector<std::string> gpu_groups;  ///< Shared-GPU groups for fractional pods.
  double gpu_fraction = 0;              ///< Portion per device for fractional pods; 0 otherwise.
  std::string reason;                   ///< Why (evictions: KAI's message; binds: empty).
  std::string by;                       ///< The pod group that caused it, "namespace/name".
  /// The queue of the pod's own group: for an eviction the victim's queue, so that a queue's audit
  /// shows who evicted its pods (`by` names the evicting group). Empty in records before schema v4.
  std::string queue;
};

inline constexpr std::array<const char*, 3> kDecisionKindNames = {"bind", "pipeline", "evict"};
static_assert(model::names_every(DecisionKind::kEvict, kDecisionKindNames));

inline const char* to_string(DecisionKind k) {
  return model::enum_name(k, kDecisionKindNames, "unknown");
}

}  // namespace kai::events
