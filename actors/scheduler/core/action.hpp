#pragma once
// An action runs once per session over all jobs (KAI framework/interface.go Action).

#include <memory>
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

/// The action called `name`, or null when it is unknown or not built yet.
std::unique_ptr<Action> make_action(std::string_view name);

/// Runs the configured actions in order; returns the names of configured actions that were skipped
/// because they are not available.
std::vector<std::string> run_actions(Session& ssn, const std::vector<std::string>& actions);

}  // namespace kai::core
