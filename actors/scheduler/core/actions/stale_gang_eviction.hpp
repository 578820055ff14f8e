#pragma once
// The stale-gang eviction action: a gang that stays below minMember longer than the grace period loses its
// remaining pods.

#include <string_view>

#include "actors/scheduler/core/action.hpp"

namespace kai::core {

class StaleGangEvictionAction final : public Action {
 public:
  static constexpr std::string_view kName = "stalegangeviction";
  std::string_view name() const override { return kName; }
  void execute(Session& ssn) override;
};

}  // namespace kai::core
