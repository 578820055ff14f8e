#pragma once
// The counterfactual's report (docs/counterfactual-replay.md "The report"): per queue, what happened
// and what would have, side by side: GPU-hours in the window, waits from creation to bind (p50,
// p95), evictions, how each pod's time ended; GPU allocation over time; as a table, CSV or JSON.

#include <map>
#include <string>
#include <vector>

#include "tools/kai-log/counterfactual.hpp"

namespace kai::kailog {

/// One world's figures for one queue.
struct QueueFigures {
  uint64_t pods = 0;
  uint64_t bound = 0;        ///< Bound in the window (or before it, still running in it).
  uint64_t never_bound = 0;  ///< Pending at the window's start or arrived in it, never bound in it.
  std::map<PodEnd, uint64_t> ends;
  double gpu_hours = 0;
  double wait_p50_s = 0, wait_p95_s = 0;  ///< Creation to bind, of the pods that waited in the window.
  uint64_t waits = 0;                     ///< How many waits the percentiles are over.
};

struct QueueComparison {
  std::string queue;
  QueueFigures recorded, counterfactual;
};

/// The GPUs each queue held at one moment, in both worlds.
struct AllocationSample {
  int64_t ms = 0;
  std::map<std::string, std::pair<double, double>> gpus;  ///< queue -> (recorded, counterfactual)
};

struct CounterfactualReport {
  const CounterfactualResult* result = nullptr;
  std::vector<QueueComparison> queues;  ///< By name.
  std::vector<AllocationSample> allocation;
  uint64_t placed_differently = 0;  ///< Bound on another node or in another cycle, or in one world only.
  uint64_t recreated_after_eviction = 0;
  uint64_t censored = 0;  ///< Bound in the simulation with no recorded run time (ran to the window's end or the default).
};

/// `samples`: the most moments of the allocation series, evenly spread over the window (as many as
/// the window has cycles when fewer, so that a short window's samples fall on its cycles; at least 2).
CounterfactualReport summarize(const CounterfactualResult& result, int samples = 48);

std::string render_table(const CounterfactualReport& report);
std::string render_csv(const CounterfactualReport& report);
std::string render_json(const CounterfactualReport& report);

}  // namespace kai::kailog
