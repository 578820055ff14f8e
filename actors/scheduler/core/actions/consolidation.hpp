#pragma once
// The consolidation action: running pods are moved elsewhere to make room for a pending job, through the
// victim solver.

#include <string_view>

#include "actors/scheduler/core/action.hpp"

namespace kai::core {

class ConsolidationAction final : public Action {
 public:
  static constexpr std::string_view kName = "consolidation";
  std::string_view name() const override { return kName; }
  void execute(Session& ssn) override;
};

}  // namespace kai::core
