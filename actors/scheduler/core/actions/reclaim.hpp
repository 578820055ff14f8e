#pragma once
// The reclaim action: a pending job takes resources from other queues that are over their fair share, through
// the victim solver.

#include <string_view>

#include "actors/scheduler/core/action.hpp"

namespace kai::core {

class ReclaimAction final : public Action {
 public:
  static constexpr std::string_view kName = "reclaim";
  std::string_view name() const override { return kName; }
  void execute(Session& ssn) override;
};

}  // namespace kai::core
