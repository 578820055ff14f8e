#include "storage/event_log.hpp"

#include <gtest/gtest.h>

#include <thread>

#include "tests/events/test_events.hpp"
#include "tests/storage/temp_dir.hpp"

namespace kai::storage {
namespace {

using events::Event;
using testing::TempDir;

std::unique_ptr<EventLog> open_log(const std::string& dir, EventLogOptions o = {}) {
  auto r = EventLog::open(dir, o);
  EXPECT_TRUE(r) << r.message();
  return r ? std::move(r).value() : nullptr;
}

std::vector<Event> read_all(const EventLog& log) {
  std::vector<Event> out;
  Status st = log.read(1, UINT64_MAX, [&](uint64_t seq, const Result<Event>& e) {
    EXPECT_TRUE(e) << seq << ": " << e.message();
    if (e) out.push_back(*e);
    return true;
  });
  EXPECT_TRUE(st) << st.message();
  return out;
}

TEST(EventLog, AppendReadRecover) {
  TempDir dir;
  auto sample = events::testing::one_of_each();
  {
    auto log = open_log(dir.str());
    ASSERT_TRUE(log);
    EXPECT_EQ(log->last_seq(), 0u);
    auto r = log->append(sample);
    ASSERT_TRUE(r) << r.message();
    EXPECT_EQ(r->first_seq, 1u);
    EXPECT_EQ(r->last_seq, sample.size());
    auto got = read_all(*log);
    ASSERT_EQ(got.size(), sample.size());
    for (size_t i = 0; i < got.size(); ++i) {
      sample[i].seq = i + 1;
      EXPECT_EQ(got[i], sample[i]);
    }
  }
  auto log = open_log(dir.str());
  ASSERT_TRUE(log);
  EXPECT_EQ(log->last_seq(), sample.size());
  auto r = log->append({events::testing::decision_event(1, 1)});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->first_seq, sample.size() + 1);
  auto v = log->verify();
  ASSERT_TRUE(v);
  EXPECT_TRUE(v->ok());
  EXPECT_EQ(v->records, sample.size() + 1);
  auto rv = log->get_meta("rv/Pod");
  ASSERT_TRUE(rv);
  EXPECT_EQ(*rv, "12345");
  EXPECT_EQ(*log->get_meta("leader_epoch"), "3");
  // The configuration in force, for the daemon to log a new body only when it changes.
  EXPECT_EQ(*log->get_meta("config_hash"),
            std::to_string(events::config_hash("actions: allocate\n", 1, "stale-grace-seconds=60")));
}

TEST(EventLog, ReadRangeAndAuditIndex) {
  TempDir dir;
  auto log = open_log(dir.str());
  ASSERT_TRUE(log);
  std::vector<Event> evs;
  for (uint64_t i = 1; i <= 20; ++i)
    evs.push_back(events::testing::decision_event(1, i, i % 2 ? "a/odd" : "a/even"));
  ASSERT_TRUE(log->append(evs));
  std::vector<uint64_t> seen;
  ASSERT_TRUE(log->read(5, 8, [&](uint64_t s, const Result<Event>&) {
    seen.push_back(s);
    return true;
  }));
  EXPECT_EQ(seen, (std::vector<uint64_t>{5, 6, 7, 8}));
  auto odd = log->audit(AuditKey::kPod, "a/odd", 3);
  ASSERT_TRUE(odd);
  EXPECT_EQ(*odd, (std::vector<uint64_t>{19, 17, 15}));  // newest first
  auto none = log->audit(AuditKey::kPod, "a/od");        // a prefix of a name is not a match
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->empty());
  EXPECT_EQ(log->audit(AuditKey::kPodGroup, "team-a/pg-0")->size(), 20u);
}

TEST(EventLog, QueueIndexCoversDecisions) {
  TempDir dir;
  auto log = open_log(dir.str());
  ASSERT_TRUE(log);
  auto decision = [](uint64_t n, const std::string& pod, const std::string& queue) {
    Event e = events::testing::decision_event(1, n, pod);
    std::get<events::DecisionEvent>(e.payload).decision.queue = queue;
    return e;
  };
  Event evict = decision(3, "a/victim", "q-a");  // a pod of q-a evicted for a group of q-b
  auto& ev = std::get<events::DecisionEvent>(evict.payload).decision;
  ev.kind = events::DecisionKind::kEvict;
  ev.by = "b/pg-claimer";
  Event pending;
  pending.payload = events::UnschedulableEvent{1, "a/pg-9", "q-a", {{"OverLimit", "over"}}};
  ASSERT_TRUE(log->append({decision(1, "a/p1", "q-a"), decision(2, "b/p2", "q-b"), evict, pending,
                           decision(5, "a/p5", "q-a"), decision(6, "x/p6", "")}));
  auto a = log->audit(AuditKey::kQueue, "q-a");
  ASSERT_TRUE(a);
  EXPECT_EQ(*a, (std::vector<uint64_t>{5, 4, 3, 1}));  // newest first, the unschedulable group included
  EXPECT_EQ(*log->audit(AuditKey::kQueue, "q-a", 2), (std::vector<uint64_t>{5, 4}));
  EXPECT_EQ(*log->audit(AuditKey::kQueue, "q-b"), (std::vector<uint64_t>{2}));
  EXPECT_TRUE(log->audit(AuditKey::kQueue, "q-")->empty());  // a prefix of a name is not a match
  EXPECT_TRUE(log->audit(AuditKey::kQueue, "")->empty());    // decisions without a queue are not indexed
}

TEST(EventLog, GroupCommitManyProducers) {
  TempDir dir;
  auto log = open_log(dir.str());
  ASSERT_TRUE(log);
  constexpr int kThreads = 6;
  constexpr int kAppends = 150;
  std::vector<std::vector<AppendResult>> acks(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kAppends; ++i) {
        std::vector<Event> batch;
        for (int k = 0; k <= i % 3; ++k)
          batch.push_back(events::testing::decision_event(static_cast<uint64_t>(t), static_cast<uint64_t>(i),
                                                          "p/" + std::to_string(t)));
        auto r = log->append(std::move(batch));
        ASSERT_TRUE(r) << r.message();
        acks[static_cast<size_t>(t)].push_back(*r);
      }
    });
  }
  for (auto& th : threads) th.join();
  auto all = read_all(*log);
  ASSERT_EQ(all.size(), log->last_seq());
  for (size_t i = 0; i < all.size(); ++i) ASSERT_EQ(all[i].seq, i + 1);  // in order, no gaps
  for (int t = 0; t < kThreads; ++t) {
    uint64_t prev = 0;
    for (size_t i = 0; i < acks[static_cast<size_t>(t)].size(); ++i) {
      const auto& a = acks[static_cast<size_t>(t)][i];
      EXPECT_GT(a.first_seq, prev);  // a producer's appends keep their order
      prev = a.last_seq;
      ASSERT_EQ(a.last_seq - a.first_seq, i % 3);
      for (uint64_t s = a.first_seq; s <= a.last_seq; ++s) {  // every acknowledged event, whole
        const auto& d = std::get<events::DecisionEvent>(all[s - 1].payload);
        EXPECT_EQ(d.decision.pod, "p/" + std::to_string(t));
        EXPECT_EQ(d.decision.seq, i);
      }
    }
  }
}

TEST(EventLog, CorruptionIsReportedWithItsSequence) {
  TempDir dir;
  {
    auto log = open_log(dir.str());
    ASSERT_TRUE(log);
    std::vector<Event> evs;
    for (uint64_t i = 1; i <= 10; ++i) evs.push_back(events::testing::decision_event(1, i));
    ASSERT_TRUE(log->append(evs));
    auto raw = log->get_raw(7);
    ASSERT_TRUE(raw);
    std::string bad = *raw;
    bad[bad.size() / 2] ^= 0x10;  // one flipped bit in the middle of the record
    ASSERT_TRUE(log->put_raw(7, bad));
    ASSERT_TRUE(log->put_raw(9, "x"));  // shorter than a checksum
    auto copied = log->get_raw(2);      // a valid record under the wrong key
    ASSERT_TRUE(log->put_raw(4, *copied));
  }
  auto log = open_log(dir.str());
  ASSERT_TRUE(log);
  auto v = log->verify();
  ASSERT_TRUE(v);
  ASSERT_EQ(v->corrupt.size(), 3u);
  EXPECT_EQ(v->corrupt[0].seq, 4u);
  EXPECT_EQ(v->corrupt[1].seq, 7u);
  EXPECT_NE(v->corrupt[1].message.find("checksum"), std::string::npos);
  EXPECT_EQ(v->corrupt[2].seq, 9u);
  EXPECT_TRUE(v->gaps.empty());
  int errors = 0;
  ASSERT_TRUE(log->read(1, UINT64_MAX, [&](uint64_t, const Result<Event>& e) {
    errors += e ? 0 : 1;
    return true;
  }));
  EXPECT_EQ(errors, 3);
  auto st = log->stats();
  ASSERT_TRUE(st);
  EXPECT_EQ(st->undecodable, 3u);
  EXPECT_EQ(log->append({events::testing::decision_event(1, 11)})->first_seq, 11u);
}

TEST(EventLog, ReportsGaps) {
  TempDir dir;
  auto log = open_log(dir.str());
  ASSERT_TRUE(log);
  ASSERT_TRUE(log->append({events::testing::decision_event(1, 1), events::testing::decision_event(1, 2)}));
  // A record written far ahead (as a damaged or hand-edited database could hold) leaves a hole.
  ASSERT_TRUE(log->put_raw(5, *log->get_raw(2)));
  auto v = log->verify();
  ASSERT_TRUE(v);
  ASSERT_EQ(v->gaps.size(), 1u);
  EXPECT_EQ(v->gaps[0], (std::pair<uint64_t, uint64_t>{2, 5}));
}

TEST(EventLog, SecondOpenOfTheSameDirectoryIsAnError) {
  TempDir dir;
  auto log = open_log(dir.str());
  ASSERT_TRUE(log);
  auto second = EventLog::open(dir.str());
  EXPECT_FALSE(second);
  EXPECT_FALSE(second.message().empty());
  EventLogOptions ro;
  ro.read_only = true;
  auto reader = EventLog::open(dir.str(), ro);
  ASSERT_TRUE(reader) << reader.message();
  EXPECT_FALSE((*reader)->append({events::testing::decision_event(1, 1)}));
}

TEST(EventLog, MissingDirectoryWithoutCreateIsAnError) {
  TempDir dir;
  EventLogOptions o;
  o.create_if_missing = false;
  auto r = EventLog::open(dir.str() + "/nothing-here", o);
  EXPECT_FALSE(r);
}

}  // namespace
}  // namespace kai::storage

namespace kai::storage {
namespace {

// The numbers append_async hands out at once are the ones the write confirms, whatever the
// interleaving of producers (the daemon's entity actors stamp their state with them).
TEST(EventLog, AssignedSequenceNumbersAreTheWrittenOnes) {
  testing::TempDir dir;
  EventLogOptions o;
  o.sync = SyncPolicy::kNone;
  auto log = EventLog::open(dir.str(), o);
  ASSERT_TRUE(log);
  std::vector<std::thread> producers;
  std::atomic<int> mismatches{0}, checked{0};
  for (int t = 0; t < 4; ++t) {
    producers.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        std::vector<events::Event> batch(
            1 + static_cast<size_t>(i % 3),
            events::testing::decision_event(1, static_cast<uint64_t>(i), "p/" + std::to_string(t)));
        AppendResult assigned;
        auto done = (*log)->append_async(std::move(batch), &assigned).get();
        ASSERT_TRUE(done) << done.message();
        mismatches += done->first_seq != assigned.first_seq || done->last_seq != assigned.last_seq;
        ++checked;
      }
    });
  }
  for (auto& p : producers) p.join();
  EXPECT_EQ(checked.load(), 800);
  EXPECT_EQ(mismatches.load(), 0);
  EXPECT_EQ((*log)->last_assigned_seq(), (*log)->last_seq());
  AppendResult refused{7, 7};
  (void)(*log)->append_async({}, &refused).get();
  EXPECT_EQ(refused.first_seq, 0u) << "an append of nothing is refused and numbers nothing";
}

}  // namespace
}  // namespace kai::storage
