#pragma once
// One or more cycles on a snapshot, as kai-sim and the scenario tests run them: each round runs the
// one cycle function (cycle.hpp) on the objects and the records so far, then (if another round
// follows and something was decided) applies the result as the cluster would (apply_session.hpp)
// and folds the round's job state records into the records of the next.

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "actors/scheduler/core/cycle.hpp"
#include "actors/scheduler/core/session.hpp"
#include "events/decision.hpp"
#include "events/schedule_records.hpp"
#include "k8s/model/objects.hpp"

namespace kai::core {

struct SimulationResult {
  std::unique_ptr<model::ClusterObjects> objects;  ///< The snapshot the last cycle ran on.
  std::unique_ptr<CycleResult> cycle;              ///< The last cycle (its session points into `objects`).
  Session* session = nullptr;                      ///< The last cycle's session.
  events::ScheduleRecords records;                 ///< The records the last cycle started from.
  std::vector<events::Decision> decisions;         ///< All rounds, renumbered in order.
  std::vector<std::string> skipped_actions;        ///< Configured actions this build does not have.
  int rounds = 0;                                  ///< Rounds run (stops early when nothing is decided).
  /// With `usageDBConfig` and no usage given in the options: each queue's allocation after every round
  /// (the history usage is read from)
  /// and the usage the last round's session was given (its address stays put: the session keeps it).
  AllocationHistory history;
  std::unique_ptr<std::map<std::string, UsageShare>> usage = std::make_unique<std::map<std::string, UsageShare>>();
};

/// Runs up to `rounds` cycles (at least one) on `objects`, cycle ids 1, 2, ... Round r (from 0) runs
/// at options.now + r * now_step. With a fixed clock it stops after a round that decides nothing (the
/// next would decide nothing either); with a moving clock every round runs, as deadlines may pass.
SimulationResult simulate(model::ClusterObjects objects, const SessionOptions& options, int rounds,
                          int64_t now_step = 0);

}  // namespace kai::core
