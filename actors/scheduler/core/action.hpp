#pragma once
// An action runs once per session over all jobs (KAI's Action; docs/architecture.md). Actions keep no
// state of their own between sessions, so each is a function; the registry (action.cpp) names them.

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace kai::core {

class Session;

/// Each built-in action's name, as the scheduler configuration spells it.
namespace action_names {
inline constexpr std::string_view kAllocate = "allocate";
inline constexpr std::string_view kConsolidation = "consolidation";
inline constexpr std::string_view kReclaim = "reclaim";
inline constexpr std::string_view kPreempt = "preempt";
inline constexpr std::string_view kStaleGangEviction = "stalegangeviction";
}  // namespace action_names

/// One entry of the action registry.
struct ActionEntry {
  std::string_view name;
  void (*run)(Session& ssn) = nullptr;
};

/// The action registry: every built-in action by name (action.cpp), the one list of them.
std::span<const ActionEntry> builtin_actions();

/// The registry's entry of the action called `name`, or null when it is unknown.
const ActionEntry* find_action(std::string_view name);

/// Runs the configured actions in order; returns the names of configured actions that were skipped
/// because they are not available.
std::vector<std::string> run_actions(Session& ssn, const std::vector<std::string>& actions);

}  // namespace kai::core
