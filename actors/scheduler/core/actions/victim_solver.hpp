#pragma once
// The victim solver shared by the eviction actions (docs/kai-compatibility.md "Victim solver"): reclaim (from other
// queues over their fair share), preempt (lower priority in the same queue) and consolidation (move pods
// to make room) each hand it victim entries in victim order; it finds the ones whose eviction lets the
// preemptor in.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "actors/scheduler/core/statement.hpp"

namespace kai::core {

/// A unit of eviction: an elastic victim's pods beyond minAvailable go one at a time; the rest of a
/// victim job (its gang core) goes together, because a gang cut below minMember is useless.
struct VictimEntry {
  uint32_t job = 0;
  std::vector<uint32_t> tasks;
  bool core = false;
};

/// The entries of a victim job in eviction order (extras in reverse task order, then the core).
std::vector<VictimEntry> victim_entries(const Session& ssn, uint32_t job);

struct SolverOptions {
  std::string action;
  /// Every evicted pod must find a place elsewhere (consolidation).
  bool victims_must_move = false;
  /// At most this many victim jobs; negative = unlimited.
  int32_t max_victim_jobs = -1;
  /// Final check of a scenario (reclaimable, ...), given the task ids to evict.
  std::function<bool(std::span<const uint32_t> victims)> validate;
  /// The eviction message for a victim pod (KAI words each eviction for the pod it evicts).
  std::function<std::string(const TaskInfo& victim)> message;
};

/// Finds victims among `entries` (in victim order) whose eviction lets `preemptor`'s next tasks be
/// pipelined, keeping only victims on the nodes the preemptor uses. On success the statement holds
/// the evictions and the pipelined tasks; on failure it is rolled back.
bool solve_with_victims(Session& ssn, Statement& stmt, uint32_t preemptor,
                        const std::vector<const VictimEntry*>& entries, const SolverOptions& options);

}  // namespace kai::core
