#include "actors/scheduler/core/usage_history.hpp"

#include <algorithm>
#include <numeric>
#include <vector>

namespace kai::core {
namespace {

using events::AllocationHistory;
using events::AllocationStep;

int64_t floor_div(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

size_t steps_before(const AllocationHistory& history, int64_t at_ms) {
  auto before = [&](const std::vector<AllocationStep>& series) {
    return static_cast<size_t>(std::lower_bound(series.begin(), series.end(), at_ms,
                                                [](const AllocationStep& s, int64_t t) { return s.at_ms < t; }) -
                               series.begin());
  };
  size_t n = before(history.capacity);
  for (const auto& [queue, series] : history.queues) n += before(series);
  return n;
}

/// The last time before `at_ms` that some usage window may sample. Samples lie on a grid: a sliding
/// window's at multiples of the resolution; a tumbling window's at its resets plus multiples of the
/// resolution, all on the grid of gcd(size, resolution) from the start; a cron window's at whole
/// minutes plus multiples of the resolution.
int64_t last_sample_time_before(const UsageParams& p, int64_t at_ms) {
  int64_t grid = std::max<int64_t>(1, p.resolution_ms);
  int64_t origin = 0;
  if (p.window == UsageParams::Window::kTumbling && p.tumbling_start_ms) {
    grid = std::gcd(grid, std::max<int64_t>(1, p.window_ms));
    origin = *p.tumbling_start_ms - floor_div(*p.tumbling_start_ms, grid) * grid;
  } else if (p.window == UsageParams::Window::kCron) {
    grid = std::gcd(grid, int64_t{60 * 1000});  // cron resets fall on whole minutes
  }
  return floor_div(at_ms - 1 - origin, grid) * grid + origin;
}

}  // namespace

std::map<std::string, UsageShare> cycle_usage(const AllocationHistory& history, const UsageParams& params,
                                              int64_t now_ms, UsageMemo* memo) {
  const int64_t at = usage_evaluation_time(params, now_ms);
  // Steps before `at` never change once a cycle evaluates at it (the logged clock does not go back),
  // except by forgetting ones no window reaches; their count tells whether the memo saw the same.
  const size_t known = steps_before(history, at);
  if (memo != nullptr && memo->at_ms == at && memo->params == params && memo->known_steps == known) return memo->usage;
  auto usage = usage_at(history, params, at);
  if (memo != nullptr) *memo = UsageMemo{at, params, known, usage};
  return usage;
}

std::optional<events::AllocationChange> allocation_change(const Session& ssn, const AllocationHistory& history,
                                                          const UsageParams& params, int64_t now_ms,
                                                          uint64_t cycle_id) {
  std::vector<QueueQuantities> held(ssn.queues.size());
  for (const TaskInfo& t : ssn.tasks) {
    if (t.ghost) continue;
    if (t.status != PodStatus::kAllocated && t.status != PodStatus::kBinding && t.status != PodStatus::kBound &&
        t.status != PodStatus::kRunning) {
      continue;
    }
    const QueueQuantities q = ssn.allocated_quantities(t);
    for (int32_t id = ssn.jobs[t.job].queue; id != kNoQueue; id = ssn.queues[id].parent) {
      held[id].gpu += q.gpu;
      held[id].cpu += q.cpu;
      held[id].memory += q.memory;
    }
  }
  events::AllocationChange change;
  change.cycle_id = cycle_id;
  std::map<std::string, AllocationStep> now_held;
  for (size_t i = 0; i < ssn.queues.size(); ++i) {
    now_held[ssn.queues[i].name] = AllocationStep{now_ms, held[i].gpu, held[i].cpu, held[i].memory};
  }
  // A queue gone from the cluster holds nothing from now on.
  for (const auto& [queue, series] : history.queues) now_held.try_emplace(queue, AllocationStep{now_ms});
  for (const auto& [queue, step] : now_held) {
    // Before a queue's first step it held nothing: a new queue holding nothing adds no step.
    auto it = history.queues.find(queue);
    const bool differs = it == history.queues.end()
                             ? !step.same_amounts({})
                             : it->second.empty() || !it->second.back().same_amounts(step);
    if (differs) change.queues.push_back({queue, step});
  }
  const QueueQuantities& total = ssn.cluster_total;
  const AllocationStep capacity{now_ms, total.gpu, total.cpu, total.memory};
  if (history.capacity.empty() || !history.capacity.back().same_amounts(capacity)) change.capacity = capacity;
  if (change.queues.empty() && !change.capacity) return std::nullopt;
  set_history_bounds(params, now_ms, change);
  return change;
}

void set_history_bounds(const UsageParams& params, int64_t now_ms, events::AllocationChange& change) {
  change.replaces_after_ms = last_sample_time_before(params, now_ms);
  change.keep_from_ms = usage_window_start(params, usage_evaluation_time(params, now_ms));
}

int64_t next_usage_step_ms(const UsageParams& params, int64_t now_ms) {
  return usage_evaluation_time(params, now_ms) + std::max<int64_t>(1, params.fetch_interval_ms);
}

}  // namespace kai::core
