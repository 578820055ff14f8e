#pragma once
// An action runs once per session over all jobs (KAI framework/interface.go Action).

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace kai::core {

class Session;

class Action {
 public:
  virtual ~Action() = default;
  virtual std::string_view name() const = 0;
  virtual void execute(Session& ssn) = 0;
};

/// Makes a new instance of one action.
using ActionFactory = std::unique_ptr<Action> (*)();

/// One entry of the action registry.
struct ActionEntry {
  std::string_view name;
  ActionFactory make = nullptr;
};

/// The action registry: every built-in action by name (action.cpp), the one list of them.
std::span<const ActionEntry> builtin_actions();

/// The action called `name`, or null when it is unknown or not built yet.
std::unique_ptr<Action> make_action(std::string_view name);

/// Runs the configured actions in order; returns the names of configured actions that were skipped
/// because they are not available.
std::vector<std::string> run_actions(Session& ssn, const std::vector<std::string>& actions);

}  // namespace kai::core
