// The action registry: the one list of built-in actions, by name.
#include "actors/scheduler/core/action.hpp"

#include <array>

#include "actors/scheduler/core/actions/allocate.hpp"
#include "actors/scheduler/core/actions/consolidation.hpp"
#include "actors/scheduler/core/actions/preempt.hpp"
#include "actors/scheduler/core/actions/reclaim.hpp"
#include "actors/scheduler/core/actions/stale_gang_eviction.hpp"

namespace kai::core {
namespace {

template <class A>
std::unique_ptr<Action> make() {
  return std::make_unique<A>();
}

constexpr std::array kBuiltinActions = {
    ActionEntry{AllocateAction::kName, &make<AllocateAction>},
    ActionEntry{ReclaimAction::kName, &make<ReclaimAction>},
    ActionEntry{PreemptAction::kName, &make<PreemptAction>},
    ActionEntry{ConsolidationAction::kName, &make<ConsolidationAction>},
    ActionEntry{StaleGangEvictionAction::kName, &make<StaleGangEvictionAction>},
};

}  // namespace

std::span<const ActionEntry> builtin_actions() {
  return kBuiltinActions;
}

std::unique_ptr<Action> make_action(std::string_view name) {
  for (const ActionEntry& entry : kBuiltinActions) {
    if (entry.name == name) return entry.make();
  }
  return nullptr;
}

std::vector<std::string> run_actions(Session& ssn, const std::vector<std::string>& actions) {
  std::vector<std::string> skipped;
  for (const auto& a : actions) {
    auto action = make_action(a);
    if (!action) {
      skipped.push_back(a);
      continue;
    }
    action->execute(ssn);
  }
  return skipped;
}

}  // namespace kai::core
