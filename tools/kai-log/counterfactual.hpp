#pragma once
// Counterfactual replay (docs/counterfactual-replay.md): the recorded arrivals of a log's window
// re-run under another scheduler configuration or other queues, with the daemon's own cycle
// (actors/scheduler/core/cycle.hpp) at the recorded cycle times.
//
// The simulated cluster is the recorded one (nodes, queues, PodGroups, other schedulers' pods, each
// as the log shows it at the cycle's position) except for this scheduler's pods:
//   - a pod arrives when the log shows it, and a pod its user or a controller deleted is deleted at
//     the same moment;
//   - a pod follows the recording (its object, the recording's decisions in flight) while the
//     simulation decides about it what the recording decided; from the first cycle they disagree,
//     its placement, phase and GPU groups are the simulation's: binds take effect at once, victims
//     leave after the recording's median eviction latency, a pod the recording evicted stays until
//     the simulation evicts it;
//   - a pod that completed in the recording runs as long from its simulated bind as it ran from its
//     recorded one; a pod whose run time the recording does not tell (evicted, still running at the
//     window's end, never bound) runs to the window's end, or --default-runtime;
//   - the simulation's own records (job state, usage history) feed its next cycle, as the daemon's
//     log feeds the daemon's;
//   - besides the recorded cycles, a cycle runs when a pod finishes or leaves in the simulation only,
//     as the daemon wakes when a pod's status changes.
// With the recorded configuration every pod follows the recording throughout, so the simulation
// decides as recorded: every pod binds in the same cycle on the same node
// (tests/daemon/counterfactual_e2e_test.cpp, tests/daemon/replay_property_test.cpp).

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "k8s/model/objects.hpp"
#include "k8s/model/status.hpp"
#include "storage/event_log.hpp"

namespace kai::kailog {

struct CounterfactualOptions {
  /// Another scheduler configuration (KAI's, JSON or YAML) for every cycle; none = each cycle's
  /// recorded one. Its session flags stay the recorded ones.
  std::optional<std::string> config_text;
  /// Queues that replace the recorded ones of the same name (others are added), from --queues.
  std::vector<model::Queue> queues;
  /// The window, Unix milliseconds: the cycles whose clock falls in it. Default: the whole log.
  std::optional<int64_t> from_ms, to_ms;
  /// The run time of a pod the recording does not give one; none = to the window's end.
  std::optional<int64_t> default_runtime_ms;
  /// Print the share of cycles run to `err` as it goes.
  bool progress = false;
  /// The same, but only for windows of at least kLongWindowCycles cycles (kai-log: stderr is a terminal).
  bool progress_if_long = false;
};

/// A window this long shows progress when progress_if_long is set.
inline constexpr size_t kLongWindowCycles = 1000;

/// How a pod's time in the window ended, in one world.
enum class PodEnd : uint8_t { kCompleted, kDeletedByUser, kEvicted, kRunningAtEnd, kNeverBound };
const char* to_string(PodEnd e);

/// One pod in one world.
struct PodRun {
  std::optional<int64_t> bind_ms;
  uint64_t bind_cycle = 0;
  std::string node;
  int64_t end_ms = 0;  ///< When it stopped holding its GPUs (or the window's end), if it bound.
  PodEnd end = PodEnd::kNeverBound;
  uint64_t evict_cycle = 0;
};

/// One of this scheduler's pods, recorded and simulated.
struct PodComparison {
  std::string key;  ///< "namespace/name"
  std::string uid;
  std::string queue;
  double gpus = 0;  ///< What it holds in its queue when allocated (fractions and MIG counted as KAI does).
  int64_t created_ms = 0;
  bool pending_at_start = false;  ///< Arrived in the window, or was pending when it began.
  bool run_time_known = false;    ///< The recording says how long it ran (it completed).
  bool recreated_after_eviction = false;
  PodRun recorded;
  PodRun counterfactual;
};

struct CounterfactualResult {
  int64_t from_ms = 0, to_ms = 0;  ///< The window actually replayed: the first and last cycle's clocks.
  uint64_t cycles = 0;        ///< Recorded cycles run.
  /// Cycles the simulation added at its own completions between recorded cycles (the daemon wakes
  /// when a pod finishes; the recording's cycles followed its own cluster). They carry the number of
  /// the recorded cycle before them.
  uint64_t added_cycles = 0;
  std::vector<PodComparison> pods;  ///< By "namespace/name".
  std::vector<std::string> notes;   ///< Things the reader should know (cycles not run and why).
};

/// Runs the counterfactual. Fails when the log cannot be read, no cycle falls in the window, the
/// window's start cannot be restored, or --config does not parse.
model::Result<CounterfactualResult> run_counterfactual(const storage::EventLog& log,
                                                       const CounterfactualOptions& options, std::ostream& err);

}  // namespace kai::kailog
