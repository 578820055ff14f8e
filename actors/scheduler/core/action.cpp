// The action registry: the one list of built-in actions, by name.
#include "actors/scheduler/core/action.hpp"

#include <array>

#include "actors/scheduler/core/actions/allocate.hpp"
#include "actors/scheduler/core/actions/eviction_actions.hpp"

namespace kai::core {
namespace {

constexpr std::array kBuiltinActions = {
    ActionEntry{action_names::kAllocate, &allocate_action},
    ActionEntry{action_names::kReclaim, &reclaim_action},
    ActionEntry{action_names::kPreempt, &preempt_action},
    ActionEntry{action_names::kConsolidation, &consolidation_action},
    ActionEntry{action_names::kStaleGangEviction, &stale_gang_eviction_action},
};

}  // namespace

std::span<const ActionEntry> builtin_actions() {
  return kBuiltinActions;
}

const ActionEntry* find_action(std::string_view name) {
  for (const ActionEntry& entry : kBuiltinActions) {
    if (entry.name == name) return &entry;
  }
  return nullptr;
}

std::vector<std::string> run_actions(Session& ssn, const std::vector<std::string>& actions) {
  std::vector<std::string> skipped;
  for (const auto& a : actions) {
    if (const ActionEntry* action = find_action(a)) {
      action->run(ssn);
    } else {
      skipped.push_back(a);
    }
  }
  return skipped;
}

}  // namespace kai::core
