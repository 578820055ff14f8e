// Time-based fair share's usage (docs/time-based-fair-share.md): what computing it costs over a full
// history, a week's window at a minute's resolution (10,080 steps per queue, KAI's defaults), for
// Q queues; and the fold of one cycle's allocation record into such a history.
#include <benchmark/benchmark.h>

#include <random>

#include "actors/scheduler/core/usage_history.hpp"
#include "events/projection.hpp"

namespace {

using kai::events::AllocationStep;
constexpr int64_t kMinute = 60 * 1000;
constexpr int64_t kWeek = 7 * 24 * 60 * kMinute;
constexpr int64_t kStart = 1'800'000'000'000;

/// A week of history: every queue changes every minute, the capacity now and then.
kai::events::ScheduleRecords week_of_history(int queues, const kai::core::UsageParams& p) {
  kai::events::ScheduleRecords r;
  std::mt19937 rng(7);
  for (int64_t t = kStart; t < kStart + kWeek; t += kMinute) {
    kai::events::AllocationChange c;
    for (int q = 0; q < queues; ++q) {
      c.queues.push_back({"queue-" + std::to_string(q), AllocationStep{t, static_cast<double>(rng() % 64), 1000.0 * static_cast<double>(rng() % 8), 0}});
    }
    if (t == kStart || rng() % 1000 == 0) c.capacity = AllocationStep{t, 512.0 + static_cast<double>(rng() % 2) * 8, 64000, 0};
    kai::core::set_history_bounds(p, t, c);
    (void)kai::events::apply_record(r, kai::events::Event{0, 0, kai::events::kSchemaVersion, c});
  }
  return r;
}

kai::core::UsageParams week_params(bool decay) {
  kai::core::UsageParams p;  // KAI's defaults: a week, sliding, a minute's resolution and fetch
  if (decay) p.half_life_ms = 24 * 60 * kMinute;
  return p;
}

/// One usage computation (what a cycle at a new fetch step does; the others reuse it).
void BM_UsageOverAWeek(benchmark::State& state) {
  const int queues = static_cast<int>(state.range(0));
  const auto p = week_params(state.range(1) != 0);
  const auto records = week_of_history(queues, p);
  size_t steps = 0;
  for (const auto& [q, s] : records.usage_history.queues) steps += s.size();
  for (auto _ : state) {
    benchmark::DoNotOptimize(kai::core::cycle_usage(records.usage_history, p, kStart + kWeek, nullptr));
  }
  state.counters["steps"] = static_cast<double>(steps);
}
BENCHMARK(BM_UsageOverAWeek)->ArgNames({"queues", "decay"})->Args({10, 0})->Args({50, 0})->Args({50, 1})->Unit(benchmark::kMillisecond);

/// A cycle between fetch steps: the memo answers.
void BM_UsageFromTheMemo(benchmark::State& state) {
  const auto p = week_params(false);
  const auto records = week_of_history(static_cast<int>(state.range(0)), p);
  kai::core::UsageMemo memo;
  (void)kai::core::cycle_usage(records.usage_history, p, kStart + kWeek, &memo);
  for (auto _ : state) {
    benchmark::DoNotOptimize(kai::core::cycle_usage(records.usage_history, p, kStart + kWeek + 1000, &memo));
  }
}
BENCHMARK(BM_UsageFromTheMemo)->ArgNames({"queues"})->Arg(50)->Unit(benchmark::kMicrosecond);

/// Folding one cycle's record (every queue changed) into a week's history.
void BM_FoldAllocationRecord(benchmark::State& state) {
  const int queues = static_cast<int>(state.range(0));
  const auto p = week_params(false);
  auto records = week_of_history(queues, p);
  int64_t t = kStart + kWeek;
  for (auto _ : state) {
    kai::events::AllocationChange c;
    for (int q = 0; q < queues; ++q) c.queues.push_back({"queue-" + std::to_string(q), AllocationStep{t, static_cast<double>(t % 7), 0, 0}});
    kai::core::set_history_bounds(p, t, c);
    (void)kai::events::apply_record(records, kai::events::Event{0, 0, kai::events::kSchemaVersion, c});
    t += kMinute;
  }
}
BENCHMARK(BM_FoldAllocationRecord)->ArgNames({"queues"})->Arg(50)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
