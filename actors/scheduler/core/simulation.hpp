#pragma once
// One or more sessions on a snapshot, as kai-sim and the scenario tests run them: each round builds a
// session, runs the configured actions, and (if another round follows and something was decided)
// applies the result to the snapshot (apply_session.hpp).

#include <memory>
#include <string>
#include <vector>

#include "actors/scheduler/core/session.hpp"
#include "events/decision.hpp"
#include "k8s/model/objects.hpp"

namespace kai::core {

struct SimulationResult {
  std::unique_ptr<model::ClusterObjects> objects;  ///< The snapshot the last session ran on.
  std::unique_ptr<Session> session;                ///< The last session (points into `objects`).
  std::vector<events::Decision> decisions;         ///< All rounds, renumbered in order.
  std::vector<std::string> skipped_actions;        ///< Configured actions this build does not have.
  int rounds = 0;                                  ///< Rounds run (stops early when nothing is decided).
};

/// Runs up to `rounds` sessions (at least one) on `objects`.
SimulationResult simulate(model::ClusterObjects objects, const SessionOptions& options, int rounds);

}  // namespace kai::core
