#include "events/event_codec.hpp"

#include <gtest/gtest.h>

#include <random>

#include "events/event_json.hpp"
#include "tests/events/test_events.hpp"

namespace kai::events {
namespace {

TEST(EventCodec, RoundTripsEveryKind) {
  for (const Event& e : testing::one_of_each()) {
    std::string bytes;
    encode_event(e, bytes);
    auto back = decode_event(bytes);
    ASSERT_TRUE(back) << back.message();
    EXPECT_EQ(*back, e) << kind_name(e.payload);
  }
}

TEST(EventCodec, DecisionIsCompact) {
  std::string bytes;
  encode_event(testing::decision_event(1, 1), bytes);
  EXPECT_LT(bytes.size(), 100u);
}

TEST(EventCodec, UpgradesVersionOne) {
  // Version 1 had no gpu_fraction and no seed: they come back as 0, the rest unchanged.
  Event d = testing::decision_event(1, 2);
  std::string bytes;
  encode_event(d, bytes, 1);
  ASSERT_EQ(bytes[0], 1);
  auto back = decode_event(bytes);
  ASSERT_TRUE(back) << back.message();
  EXPECT_EQ(back->schema_version, kSchemaVersion);
  auto want = std::get<DecisionEvent>(d.payload);
  want.decision.gpu_fraction = 0;
  want.decision.queue.clear();
  EXPECT_EQ(std::get<DecisionEvent>(back->payload), want);

  Event c;
  c.payload = CycleStart{1, 2, 3, 4, 99};
  bytes.clear();
  encode_event(c, bytes, 1);
  back = decode_event(bytes);
  ASSERT_TRUE(back) << back.message();
  EXPECT_EQ(std::get<CycleStart>(back->payload), (CycleStart{1, 2, 3, 4, 0}));
}

TEST(EventCodec, UpgradesVersionTwoDecisionsToEpochZero) {
  Event d = testing::decision_event(1, 2);
  std::get<DecisionEvent>(d.payload).leader_epoch = 7;
  std::string v3;
  encode_event(d, v3);
  auto back = decode_event(v3);
  ASSERT_TRUE(back) << back.message();
  EXPECT_EQ(std::get<DecisionEvent>(back->payload).leader_epoch, 7u);
  std::string v2;
  encode_event(d, v2, 2);
  ASSERT_EQ(v2[0], 2);
  back = decode_event(v2);
  ASSERT_TRUE(back) << back.message();
  auto want = std::get<DecisionEvent>(d.payload);
  want.leader_epoch = 0;
  want.decision.queue.clear();
  EXPECT_EQ(std::get<DecisionEvent>(back->payload), want);
}

/// What a record of `e`'s kind reads back as after being written at an older version: the fields
/// version 5 added take their defaults (docs/one-truth.md).
Event without_v5_fields(Event e) {
  if (auto* c = std::get_if<CycleStart>(&e.payload)) {
    c->scheduler_name = "kai-scheduler";
    c->leader_epoch = 0;
    c->now_ms = 0;
  }
  if (auto* u = std::get_if<UnschedulableEvent>(&e.payload)) u->pods.clear();
  if (auto* b = std::get_if<BinderOutcome>(&e.payload)) b->settles = b->outcome == Outcome::kBound;
  if (auto* c = std::get_if<ConfigChange>(&e.payload)) {
    c->behaviour_version = 0;
    c->flags.clear();
  }
  return e;
}

/// Kinds (or values) that no writer before version 5 produced.
/// Kinds (and values) that version 5 or later introduced: an older record of one is damage.
bool new_in_v5(const Event& e) {
  if (const auto* b = std::get_if<BinderOutcome>(&e.payload)) return b->outcome == Outcome::kCancelled;
  return std::holds_alternative<JobStateChange>(e.payload) || std::holds_alternative<AssumedSettled>(e.payload) ||
         std::holds_alternative<AllocationChange>(e.payload);
}

TEST(EventCodec, UpgradesVersionFourRecordsToTheirVersionFiveDefaults) {
  for (const Event& e : testing::one_of_each()) {
    std::string v4;
    encode_event(e, v4, 4);
    auto back = decode_event(v4);
    if (new_in_v5(e)) {
      EXPECT_FALSE(back) << kind_name(e.payload) << ": a version-4 record of a version-5 kind is damage";
      continue;
    }
    ASSERT_TRUE(back) << kind_name(e.payload) << ": " << back.message();
    EXPECT_EQ(*back, without_v5_fields(e)) << kind_name(e.payload);
  }
}

TEST(EventCodec, TheUnconfirmedOutcomeIsAVersionEightValue) {
  Event e;
  e.payload = BinderOutcome{17, "team-a/p-1", Outcome::kUnconfirmed, "the scheduler restarted", false};
  std::string v8;
  encode_event(e, v8);
  auto back = decode_event(v8);
  ASSERT_TRUE(back) << back.message();
  EXPECT_EQ(std::get<BinderOutcome>(back->payload).outcome, Outcome::kUnconfirmed);
  EXPECT_STREQ(to_string(Outcome::kUnconfirmed), "unconfirmed");
  std::string v7;
  encode_event(e, v7, 7);
  EXPECT_FALSE(decode_event(v7)) << "no version-7 writer had it: such a record is damage";
}

TEST(EventCodec, UpgradesVersionThreeDecisionsToNoQueue) {
  // Version 4 added the decision's queue and the configuration record; nothing else changed shape.
  for (const Event& e : testing::one_of_each()) {
    if (std::holds_alternative<ConfigChange>(e.payload) || new_in_v5(e)) continue;
    std::string v3;
    encode_event(e, v3, 3);
    ASSERT_EQ(v3[0], 3);
    auto back = decode_event(v3);
    ASSERT_TRUE(back) << kind_name(e.payload) << ": " << back.message();
    EXPECT_EQ(back->schema_version, kSchemaVersion);
    Event want = without_v5_fields(e);
    if (auto* d = std::get_if<DecisionEvent>(&want.payload)) {
      ASSERT_FALSE(d->decision.queue.empty()) << "the sample must have a queue to lose";
      d->decision.queue.clear();
    }
    EXPECT_EQ(*back, want) << kind_name(e.payload);
  }
  std::string v4;
  encode_event(testing::decision_event(1, 2), v4, 4);
  ASSERT_EQ(v4[0], 4);
  EXPECT_EQ(std::get<DecisionEvent>(decode_event(v4)->payload).decision.queue, "team-a");
}

TEST(EventCodec, TheAllocationRecordIsNewInVersionNine) {
  Event a;
  a.payload = AllocationChange{3, {{"q", {60000, 1, 2, 3}}}, std::nullopt, 0, -600000};
  std::string v8;
  encode_event(a, v8, 8);
  auto back = decode_event(v8);
  EXPECT_FALSE(back);  // no version-8 writer made one
  EXPECT_NE(back.message().find("version 8"), std::string::npos) << back.message();
}

TEST(EventCodec, ConfigurationRecordIsNewInVersionFour) {
  Event c;
  c.payload = ConfigChange{config_hash("x: 1"), "x: 1", 0, ""};
  std::string v3;
  encode_event(c, v3, 3);
  auto back = decode_event(v3);
  EXPECT_FALSE(back);  // no version-3 writer made one: such a record is damaged
  EXPECT_NE(back.message().find("version 3"), std::string::npos) << back.message();
  EXPECT_EQ(config_hash(""), 1469598103934665603ull);  // FNV-1a offset basis: the daemon's defaults
  EXPECT_NE(config_hash("a"), config_hash("b"));
}

TEST(EventCodec, RejectsBadInputWithoutCrashing) {
  EXPECT_FALSE(decode_event(""));
  EXPECT_FALSE(decode_event(std::string("\x0a\x01", 2)));      // future version
  EXPECT_FALSE(decode_event(std::string("\x02\x63\x00", 3)));  // unknown type
  std::string bytes;
  encode_event(testing::decision_event(1, 1), bytes);
  EXPECT_FALSE(decode_event(bytes + "x"));  // trailing byte
  // Every truncation and many random corruptions must fail or decode, never crash or over-read.
  for (size_t n = 0; n < bytes.size(); ++n) EXPECT_FALSE(decode_event(std::string_view(bytes).substr(0, n)));
  std::mt19937 rng(7);
  for (int i = 0; i < 5000; ++i) {
    std::string b = bytes;
    b[rng() % b.size()] = static_cast<char>(rng());
    (void)decode_event(b);
  }
  for (int i = 0; i < 2000; ++i) {
    std::string b(rng() % 64, '\0');
    for (auto& ch : b) ch = static_cast<char>(rng());
    (void)decode_event(b);
  }
}

TEST(EventJson, RendersOneLine) {
  for (const Event& e : testing::one_of_each()) {
    std::string line = to_json_line(e);
    EXPECT_EQ(line.find('\n'), std::string::npos);
    EXPECT_NE(line.find(std::string("\"kind\":\"") + kind_name(e.payload) + "\""), std::string::npos) << line;
  }
}

}  // namespace
}  // namespace kai::events
