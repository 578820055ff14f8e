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
  /// The records the last cycle started from (its job state; with `usageDBConfig`, each queue's
  /// allocation after every round before it: the history usage is read from).
  events::ScheduleRecords records;
  std::vector<events::Decision> decisions;         ///< All rounds, renumbered in order.
  /// With `usageDBConfig`: every round's allocation record, in order (the folded history in
  /// `records` forgets what the window no longer reaches).
  std::vector<events::AllocationChange> allocations;
  std::vector<std::string> skipped_actions;        ///< Configured actions this build does not have.
  int rounds = 0;                                  ///< Rounds run (stops early when nothing is decided).
};

/// Runs up to `rounds` cycles (at least one) on `objects`, cycle ids 1, 2, ... Round r (from 0) runs
/// at options.now + r * now_step. With a fixed clock it stops after a round that decides nothing (the
/// next would decide nothing either); with a moving clock every round runs, as deadlines may pass.
/// `records`: the scheduler's records to start from (kai-sim --log: the daemon's); default none.
SimulationResult simulate(model::ClusterObjects objects, const SessionOptions& options, int rounds,
                          int64_t now_step = 0, events::ScheduleRecords records = {});

}  // namespace kai::core
