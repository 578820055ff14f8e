// apply_record (events/projection.hpp) over ScheduleRecords (events/schedule_records.hpp) record by
// record: which decisions cycles assume done and which record ends the assumption, what counts as a
// failed bind and when a failure is timed (docs/one-truth.md). How a cycle then uses the records
// (backoff, settling) is tested with the cycle in tests/core/cycle_test.cpp.

#include <gtest/gtest.h>

#include "events/projection.hpp"

namespace kai::events {
namespace {

Event at(uint64_t seq, Payload payload) {
  Event e;
  e.seq = seq;
  e.payload = std::move(payload);
  return e;
}

Event decision(uint64_t seq, const std::string& pod, DecisionKind kind = DecisionKind::kBind) {
  DecisionEvent d;
  d.cycle_id = 1;
  d.decision.seq = 1;
  d.decision.action = kind == DecisionKind::kEvict ? "reclaim" : "allocate";
  d.decision.kind = kind;
  d.decision.pod = pod;
  d.decision.pod_uid = "uid-" + pod;
  d.decision.node = "n1";
  return at(seq, d);
}

Event outcome(uint64_t seq, uint64_t decision_seq, const std::string& pod, Outcome o,
              const std::string& reason = "403 Forbidden") {
  return at(seq, BinderOutcome{decision_seq, pod, o, reason});
}

Event cycle_start(uint64_t seq, int64_t now_ms, const std::string& scheduler = "kai-scheduler") {
  CycleStart c;
  c.now = now_ms / 1000;
  c.now_ms = now_ms;
  c.scheduler_name = scheduler;
  return at(seq, c);
}

TEST(ScheduleRecords, BindAndEvictDecisionsAreAssumedButAPipelineIsNot) {
  // A pipelined pod waits for victims to leave: nothing is sent to the binder, nothing to assume.
  ScheduleRecords r;
  EXPECT_TRUE(apply_record(r, decision(10, "ns/a")));
  EXPECT_TRUE(apply_record(r, decision(11, "ns/victim", DecisionKind::kEvict)));
  EXPECT_TRUE(apply_record(r, decision(12, "ns/piped", DecisionKind::kPipeline)));
  ASSERT_EQ(r.assumed.size(), 2u);
  EXPECT_EQ(r.assumed.at(10).decision.pod, "ns/a");
  EXPECT_FALSE(r.assumed.at(10).reported);
  EXPECT_EQ(r.assumed.at(11).decision.kind, DecisionKind::kEvict);
  EXPECT_EQ(r.open_decisions(), (std::map<uint64_t, std::string>{{10, "ns/a"}, {11, "ns/victim"}}));
}

TEST(ScheduleRecords, ABoundOutcomeOnlyMarksTheDecisionReported) {
  // The watch has the last word: the decision stays assumed until a cycle logs AssumedSettled, but
  // a restart no longer abandons it.
  ScheduleRecords r;
  ASSERT_TRUE(apply_record(r, decision(10, "ns/a")));
  EXPECT_TRUE(apply_record(r, outcome(11, 10, "ns/a", Outcome::kBound, "bound to n1")));
  ASSERT_EQ(r.assumed.count(10), 1u);
  EXPECT_TRUE(r.assumed.at(10).reported);
  EXPECT_TRUE(r.open_decisions().empty());
}

TEST(ScheduleRecords, ABoundOutcomeReadFromBeforeSchemaV5EndsTheAssumption) {
  // Those logs have no AssumedSettled: there `bound` was the end.
  ScheduleRecords r;
  ASSERT_TRUE(apply_record(r, decision(10, "ns/a")));
  Event e = outcome(11, 10, "ns/a", Outcome::kBound, "bound to n1");
  std::get<BinderOutcome>(e.payload).settles = true;
  EXPECT_TRUE(apply_record(r, e));
  EXPECT_TRUE(r.assumed.empty());
}

TEST(ScheduleRecords, EveryOtherOutcomeEndsTheAssumption) {
  for (Outcome o : {Outcome::kBindFailed, Outcome::kReservationTimedOut, Outcome::kCancelled, Outcome::kAbandoned}) {
    ScheduleRecords r;
    ASSERT_TRUE(apply_record(r, decision(10, "ns/a")));
    ASSERT_TRUE(apply_record(r, decision(11, "ns/b")));
    EXPECT_TRUE(apply_record(r, outcome(12, 10, "ns/a", o)));
    EXPECT_EQ(r.assumed.count(10), 0u) << to_string(o);
    EXPECT_EQ(r.assumed.count(11), 1u) << to_string(o) << ": only the decision it reports on";
  }
}

TEST(ScheduleRecords, AssumedSettledEndsTheDecisionsItNames) {
  ScheduleRecords r;
  ASSERT_TRUE(apply_record(r, decision(10, "ns/a")));
  ASSERT_TRUE(apply_record(r, decision(11, "ns/b")));
  ASSERT_TRUE(apply_record(r, decision(12, "ns/c", DecisionKind::kEvict)));
  ASSERT_TRUE(apply_record(r, outcome(13, 10, "ns/a", Outcome::kBound)));
  EXPECT_TRUE(apply_record(r, at(14, AssumedSettled{2, {10, 12, 99}})));
  ASSERT_EQ(r.assumed.size(), 1u);
  EXPECT_EQ(r.assumed.count(11), 1u);
}

TEST(ScheduleRecords, AnOutcomeOfADecisionNoLongerAssumedChangesNothing) {
  // A late outcome after AssumedSettled (the watch was faster than the binder's report): it must
  // neither bring the decision back nor count a failure.
  ScheduleRecords r;
  ASSERT_TRUE(apply_record(r, decision(10, "ns/a")));
  ASSERT_TRUE(apply_record(r, at(11, AssumedSettled{2, {10}})));
  const ScheduleRecords before = r;
  EXPECT_TRUE(apply_record(r, outcome(12, 10, "ns/a", Outcome::kBindFailed)));
  EXPECT_EQ(r, before);
}

TEST(ScheduleRecords, AFailedBindIsCountedWithItsReasonAndAFailedEvictionIsNot) {
  ScheduleRecords r;
  ASSERT_TRUE(apply_record(r, decision(10, "ns/a")));
  ASSERT_TRUE(apply_record(r, decision(11, "ns/victim", DecisionKind::kEvict)));
  ASSERT_TRUE(apply_record(r, outcome(12, 10, "ns/a", Outcome::kBindFailed, "403 Forbidden: quota")));
  ASSERT_TRUE(apply_record(r, outcome(13, 11, "ns/victim", Outcome::kBindFailed, "eviction failed")));
  ASSERT_EQ(r.bind_failures.size(), 1u);
  const BindFailures& f = r.bind_failures.at("ns/a");
  EXPECT_EQ(f.pod_uid, "uid-ns/a");
  EXPECT_EQ(f.failures, 1u);
  EXPECT_EQ(f.reason, "403 Forbidden: quota");
  EXPECT_EQ(f.failed_at_ms, std::nullopt) << "untimed until the next CycleStart";
  EXPECT_TRUE(r.has_untimed_records());
}

TEST(ScheduleRecords, TheNextCycleStartTimesAFailureAndALaterOneDoesNotMoveIt) {
  ScheduleRecords r;
  ASSERT_TRUE(apply_record(r, decision(10, "ns/a")));
  ASSERT_TRUE(apply_record(r, outcome(11, 10, "ns/a", Outcome::kReservationTimedOut, "no GPU reported")));
  EXPECT_TRUE(apply_record(r, cycle_start(12, 1'700'000'000'250)));
  EXPECT_EQ(r.bind_failures.at("ns/a").failed_at_ms, 1'700'000'000'250);
  EXPECT_FALSE(r.has_untimed_records());
  EXPECT_TRUE(apply_record(r, cycle_start(13, 1'700'000'005'000)));
  EXPECT_EQ(r.bind_failures.at("ns/a").failed_at_ms, 1'700'000'000'250) << "timed once, by the first cycle after";
  EXPECT_EQ(r.bind_failures.at("ns/a").failures, 1u);
}

TEST(ScheduleRecords, ACycleStartSetsTheLoggedClockWhichNeverGoesBack) {
  ScheduleRecords r;
  EXPECT_TRUE(apply_record(r, cycle_start(1, 1'700'000'000'250, "other-scheduler")));
  EXPECT_EQ(r.last_now_ms, 1'700'000'000'250);
  EXPECT_EQ(r.scheduler_name, "other-scheduler");
  EXPECT_TRUE(apply_record(r, cycle_start(2, 1'699'999'999'000)));
  EXPECT_EQ(r.last_now_ms, 1'700'000'000'250);
  // Before schema v5 a CycleStart had seconds only.
  CycleStart old;
  old.now = 1'700'000'100;
  EXPECT_TRUE(apply_record(r, at(3, old)));
  EXPECT_EQ(r.last_now_ms, 1'700'000'100'000);
}

TEST(ScheduleRecords, AWatchEventIsNotARecord) {
  ScheduleRecords r;
  ASSERT_TRUE(apply_record(r, decision(10, "ns/a")));
  const ScheduleRecords before = r;
  EXPECT_FALSE(apply_record(r, at(11, WatchEvent{"Pod", WatchType::kModified, "{}", "5"})));
  EXPECT_EQ(r, before);
}

}  // namespace
}  // namespace kai::events
