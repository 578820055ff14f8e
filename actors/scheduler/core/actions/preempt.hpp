#pragma once
// The preempt action: a pending job evicts lower-priority preemptible jobs of its own queue, through the
// victim solver.

#include <string_view>

#include "actors/scheduler/core/action.hpp"

namespace kai::core {

class PreemptAction final : public Action {
 public:
  static constexpr std::string_view kName = "preempt";
  std::string_view name() const override { return kName; }
  void execute(Session& ssn) override;
};

}  // namespace kai::core
