// Time-based fair share's history as the daemon keeps it (docs/time-based-fair-share.md "The
// daemon"): cycles log AllocationChange records, the projection folds them, keeping one step per
// sample and forgetting what no window reaches; the usage read from the folded history is the usage
// of the whole history, at every fetch step, for sliding and tumbling windows, with and without decay.
#include "actors/scheduler/core/usage_history.hpp"

#include <gtest/gtest.h>

#include <random>

#include "events/projection.hpp"

namespace kai::core {
namespace {

using events::AllocationChange;
using events::AllocationHistory;
using events::AllocationStep;
constexpr int64_t kMinute = 60 * 1000;

void fold(events::ScheduleRecords& records, const AllocationChange& change) {
  ASSERT_TRUE(events::apply_record(records, events::Event{0, 0, events::kSchemaVersion, change}));
}

UsageParams sliding(int64_t window_minutes) {
  UsageParams p;
  p.window_ms = window_minutes * kMinute;
  p.resolution_ms = kMinute;
  p.fetch_interval_ms = kMinute;
  return p;
}

AllocationChange change_at(const UsageParams& p, int64_t now_ms, std::vector<events::QueueAllocationStep> queues,
                           std::optional<AllocationStep> capacity = std::nullopt) {
  AllocationChange c;
  c.queues = std::move(queues);
  c.capacity = capacity;
  set_history_bounds(p, now_ms, c);
  return c;
}

TEST(UsageHistory, TheFoldKeepsOneStepPerSampleAndForgetsWhatNoWindowReaches) {
  const UsageParams p = sliding(10);
  events::ScheduleRecords r;
  const int64_t t0 = 1000 * kMinute;
  fold(r, change_at(p, t0, {{"a", {t0, 16, 0, 0}}}, AllocationStep{t0, 16, 0, 0}));
  // Three changes inside one minute: only the last is ever sampled.
  for (int s : {10, 20, 30}) {
    const int64_t t = t0 + s * 1000;
    fold(r, change_at(p, t, {{"a", {t, static_cast<double>(s), 0, 0}}}));
  }
  ASSERT_EQ(r.usage_history.queues.at("a").size(), 2u);
  EXPECT_EQ(r.usage_history.queues.at("a").back(), (AllocationStep{t0 + 30000, 30, 0, 0}));
  // Back to what the step before held within the same minute: the minute's step goes.
  fold(r, change_at(p, t0 + 40000, {{"a", {t0 + 40000, 16, 0, 0}}}));
  EXPECT_EQ(r.usage_history.queues.at("a"), (std::vector<AllocationStep>{{t0, 16, 0, 0}}));
  // Twenty minutes on, the ten-minute window no longer reaches t0: the step in effect at the
  // window's start stays, older ones go; a queue that has held nothing since then is forgotten.
  const int64_t t1 = t0 + 5 * kMinute;
  fold(r, change_at(p, t1, {{"a", {t1, 0, 0, 0}}, {"b", {t1, 8, 0, 0}}}));
  const int64_t t2 = t0 + 20 * kMinute;
  fold(r, change_at(p, t2, {{"b", {t2, 4, 0, 0}}}));
  EXPECT_EQ(r.usage_history.queues.count("a"), 0u) << "a held nothing for longer than the window";
  EXPECT_EQ(r.usage_history.queues.at("b"), (std::vector<AllocationStep>{{t1, 8, 0, 0}, {t2, 4, 0, 0}}));
  EXPECT_EQ(r.usage_history.capacity, (std::vector<AllocationStep>{{t0, 16, 0, 0}}));
}

TEST(UsageHistory, AStepLoggedAtTheFetchStepCountsFromTheNextOne) {
  // Every cycle between two fetch steps reads the same usage, whichever steps they logged.
  const UsageParams p = sliding(10);
  events::ScheduleRecords r;
  const int64_t t0 = 1000 * kMinute;
  fold(r, change_at(p, t0 - kMinute, {{"a", {t0 - kMinute, 16, 0, 0}}}, AllocationStep{t0 - kMinute, 16, 0, 0}));
  const auto before = cycle_usage(r.usage_history, p, t0, nullptr);
  fold(r, change_at(p, t0, {{"a", {t0, 0, 0, 0}}, {"b", {t0, 16, 0, 0}}}));
  EXPECT_EQ(cycle_usage(r.usage_history, p, t0 + 59000, nullptr), before);
  EXPECT_NE(cycle_usage(r.usage_history, p, t0 + kMinute, nullptr), before);
}

TEST(UsageHistory, TheMemoGivesWhatAFreshComputationGives) {
  const UsageParams p = sliding(10);
  events::ScheduleRecords r;
  UsageMemo memo;
  const int64_t t0 = 1000 * kMinute;
  fold(r, change_at(p, t0, {{"a", {t0, 16, 0, 0}}}, AllocationStep{t0, 16, 0, 0}));
  for (int s = 1; s < 300; s += 7) {
    const int64_t now = t0 + s * 1000;
    EXPECT_EQ(cycle_usage(r.usage_history, p, now, &memo), cycle_usage(r.usage_history, p, now, nullptr)) << s;
    if (s % 3 == 0) fold(r, change_at(p, now, {{"b", {now, static_cast<double>(s % 5), 0, 0}}}));
  }
  UsageParams other = p;
  other.half_life_ms = 2 * kMinute;  // another configuration is another computation
  EXPECT_EQ(cycle_usage(r.usage_history, other, t0 + 300000, &memo),
            cycle_usage(r.usage_history, other, t0 + 300000, nullptr));
}

/// The property: random allocation changes at random cycle times, folded, read the same usage at
/// every fetch step as the whole history.
void expect_fold_keeps_the_usage(const UsageParams& p, uint32_t seed) {
  std::mt19937 rng(seed);
  events::ScheduleRecords folded;
  AllocationHistory whole;
  const std::vector<std::string> queues = {"a", "b", "c"};
  int64_t now = 5000 * kMinute + static_cast<int64_t>(rng() % 60000);
  for (int cycle = 0; cycle < 400; ++cycle) {
    now += 1000 + static_cast<int64_t>(rng() % 90000);
    const auto want = usage_at(whole, p, usage_evaluation_time(p, now));
    const auto got = cycle_usage(folded.usage_history, p, now, nullptr);
    for (const auto& [q, u] : got) ASSERT_TRUE(want.count(q)) << "seed " << seed << " cycle " << cycle << " " << q;
    for (const auto& [q, u] : want) {
      // A queue that held nothing for a whole window is forgotten: its usage is 0 all the same.
      const UsageShare g = got.count(q) ? got.at(q) : UsageShare{};
      ASSERT_NEAR(g.gpu, u.gpu, 1e-9) << "seed " << seed << " cycle " << cycle << " queue " << q;
      ASSERT_NEAR(g.cpu, u.cpu, 1e-9) << "seed " << seed << " cycle " << cycle << " queue " << q;
    }
    AllocationChange c;
    for (const auto& q : queues) {
      if (rng() % 3 != 0) continue;
      const AllocationStep step{now, static_cast<double>(rng() % 3) * 4, static_cast<double>(rng() % 2) * 1000, 0};
      c.queues.push_back({q, step});
      whole.queues[q].push_back(step);
    }
    if (whole.capacity.empty() || rng() % 10 == 0) {
      const AllocationStep cap{now, 16 + static_cast<double>(rng() % 2) * 8, 4000, 0};
      c.capacity = cap;
      whole.capacity.push_back(cap);
    }
    set_history_bounds(p, now, c);
    fold(folded, c);
  }
  size_t kept = folded.usage_history.capacity.size();
  for (const auto& [q, s] : folded.usage_history.queues) kept += s.size();
  size_t all = whole.capacity.size();
  for (const auto& [q, s] : whole.queues) all += s.size();
  EXPECT_LT(kept, all) << "the fold kept every step";
}

TEST(UsageHistoryProperty, AFoldedHistoryReadsTheUsageOfTheWholeOneSliding) {
  for (uint32_t seed = 1; seed <= 20; ++seed) expect_fold_keeps_the_usage(sliding(30), seed);
}

TEST(UsageHistoryProperty, AFoldedHistoryReadsTheUsageOfTheWholeOneWithDecayAndALongerFetch) {
  UsageParams p = sliding(45);
  p.half_life_ms = 10 * kMinute;
  p.fetch_interval_ms = 3 * kMinute;
  p.resolution_ms = 2 * kMinute;
  for (uint32_t seed = 1; seed <= 20; ++seed) expect_fold_keeps_the_usage(p, seed);
}

TEST(UsageHistoryProperty, AFoldedHistoryReadsTheUsageOfTheWholeOneTumbling) {
  UsageParams p = sliding(50);
  p.window = UsageParams::Window::kTumbling;
  p.tumbling_start_ms = 4990 * kMinute + 17000;  // off the resolution's grid
  p.resolution_ms = 3 * kMinute;                 // the window is not a multiple of it either
  for (uint32_t seed = 1; seed <= 20; ++seed) expect_fold_keeps_the_usage(p, seed);
}

}  // namespace
}  // namespace kai::core
