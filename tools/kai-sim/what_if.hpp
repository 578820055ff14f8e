#pragma once
// kai-sim --what-if: "if I submit this now, where and when does it run?" (docs/what-if.md). Runs
// the daemon's cycle (core::simulate, which writes nothing) on the cluster plus the workload now;
// if the workload does not fit, steps the clock through the running pods' expected completions
// (expected_end.hpp), at each removing the pods finished by then and running the cycle again,
// until the workload fits or the completions run out.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "actors/scheduler/core/session.hpp"
#include "events/schedule_records.hpp"
#include "k8s/model/objects.hpp"
#include "tools/kai-sim/expected_end.hpp"

namespace kai::sim {

struct WhatIfInput {
  model::ClusterObjects cluster;   ///< Without the workload.
  model::ClusterObjects workload;  ///< Checked and completed (what_if_workload.hpp).
  events::ScheduleRecords records;
  core::SessionOptions options;    ///< Its `now` is the question's.
  std::vector<ExpectedEnd> ends;
};

/// Where one workload pod goes: bound now, or pipelined onto what evicted or finishing pods release.
struct Placement {
  std::string pod;
  std::string node;
  std::string kind;  ///< bind | pipeline
  std::vector<std::string> gpu_groups;
  double gpu_fraction = 0;  ///< Portion per device of a fractional pod; 0 otherwise.
};

/// A pod the session evicts so that the workload runs.
struct Victim {
  std::string pod;
  std::string queue;   ///< The victim's queue.
  std::string action;  ///< reclaim | preempt | consolidation ...
  std::string by;      ///< The workload's pod group it makes room for.
  std::string reason;  ///< The decision's reason, KAI's message.
};

/// A workload pod group the session left waiting, with its reasons.
struct Waiting {
  std::string group;
  std::string queue;
  std::vector<std::string> reasons;
  /// GPUs it still lacks: its minimum gang's GPUs minus the idle GPUs it could use, at least 1.
  int64_t missing_gpus = 1;
};

/// One simulated moment.
struct Point {
  int64_t at = 0;  ///< Unix seconds.
  bool fits = false;
  std::vector<Placement> placements;  ///< In pod order.
  std::vector<Victim> victims;        ///< In decision order.
  std::vector<Waiting> waiting;       ///< In group order; empty when it fits.
};

struct WhatIfAnswer {
  int64_t now = 0;
  Point first;                         ///< At `now`.
  std::optional<Point> earliest;       ///< The first later point it fits at.
  std::vector<std::string> finished;   ///< Pods expected to finish by `earliest` (or by the last point).
  std::optional<Point> last;           ///< When it never fits: the last point simulated after `now`.
  std::vector<ExpectedEnd> ends;       ///< The completions stepped through (none: no expected end).
  std::vector<std::string> warnings;   ///< The session's, at `now`.
};

WhatIfAnswer what_if(const WhatIfInput& input);

}  // namespace kai::sim
