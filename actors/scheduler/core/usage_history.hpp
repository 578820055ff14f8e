#pragma once
// Time-based fair share in a cycle (docs/time-based-fair-share.md "Where the history comes from"):
// the usage a cycle gives each queue, computed from the allocation history its records hold, and
// the allocation record it leaves for the cycles after it. The daemon, kai-sim and replay run
// these through run_cycle (cycle.hpp), so the same log gives the same usage everywhere.

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "actors/scheduler/core/queue_usage.hpp"
#include "actors/scheduler/core/session.hpp"
#include "events/event.hpp"

namespace kai::core {

/// The last usage computed, kept by a caller running many cycles (the daemon, replay): cycles between
/// two fetch steps read the same usage, so it is computed once per step.
struct UsageMemo {
  std::optional<int64_t> at_ms;  ///< The evaluation time it was computed at.
  UsageParams params;
  size_t known_steps = 0;  ///< Steps before `at_ms` in the history it was computed from.
  std::map<std::string, UsageShare> usage;
};

/// Each queue's usage for a cycle at `now_ms`: the usage at the last fetch step (usage_at), from
/// `memo` when it holds that very computation.
std::map<std::string, UsageShare> cycle_usage(const events::AllocationHistory& history, const UsageParams& params,
                                              int64_t now_ms, UsageMemo* memo);

/// What each queue holds as the cycle leaves the cluster (tasks allocated, binding, bound or
/// running; pipelined ones still wait, releasing ones are gone; a queue's allocation includes its
/// children's, as KAI's queue controller publishes it) and the cluster's capacity, as a record of
/// what changed since `history`'s last steps; none when nothing did.
std::optional<events::AllocationChange> allocation_change(const Session& ssn, const events::AllocationHistory& history,
                                                          const UsageParams& params, int64_t now_ms,
                                                          uint64_t cycle_id);

/// Sets what the fold may drop with `change` logged by a cycle at `now_ms`: the last sample time
/// before it (a later step is replaced) and the first time any later window reaches back to.
void set_history_bounds(const UsageParams& params, int64_t now_ms, events::AllocationChange& change);

/// The next fetch step after `now_ms` (Unix milliseconds): the usage changes there, so a cycle must
/// run then even with nothing else changed.
int64_t next_usage_step_ms(const UsageParams& params, int64_t now_ms);

}  // namespace kai::core
