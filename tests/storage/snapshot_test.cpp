// Snapshots, retention and restore (docs/event-log-format.md "Snapshots", "Retention"): a snapshot is whole or absent and checked on read; the
// state restored from any snapshot plus the tail equals the projection of the whole log; retention
// never deletes what the oldest kept snapshot needs, and the sequence goes on after it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <rocksdb/db.h>

#include <random>

#include "events/state_codec.hpp"
#include "k8s/model/json_codec.hpp"
#include "storage/event_log.hpp"
#include "storage/restore.hpp"
#include "tests/events/test_events.hpp"
#include "tests/storage/temp_dir.hpp"
#include "tools/kai-gen/generator.hpp"

namespace kai::storage {
namespace {

using events::Event;
using ::testing::HasSubstr;
using testing::TempDir;

constexpr int64_t kDay = 86'400'000'000;  // microseconds
constexpr int64_t kNow = 1'800'000'000'000'000;

std::unique_ptr<EventLog> open_log(const std::string& dir, EventLogOptions o = {}) {
  o.sync = SyncPolicy::kNone;  // durability is the crash test's subject; this one is about content
  auto r = EventLog::open(dir, o);
  EXPECT_TRUE(r) << r.message();
  return r ? std::move(r).value() : nullptr;
}

template <class T>
Event watch(events::WatchType type, const std::string& kind, const T& obj, int64_t ts) {
  Event e;
  e.timestamp_us = ts;
  e.payload = events::WatchEvent{kind, type, model::encode(obj).dump(), obj.meta.resource_version};
  return e;
}

/// A generated cluster as ADDED events, then churn: pods modified and deleted, decisions opened and
/// closed, bookmarks. Timestamps one day apart per `days` slices, oldest first.
std::vector<Event> churn_stream(int days) {
  const model::ClusterObjects c = gen::generate(gen::ClusterSpec::scaled(0.004));
  std::vector<Event> out;
  int64_t ts = kNow - days * kDay;
  for (const auto& n : c.nodes) out.push_back(watch(events::WatchType::kAdded, "Node", n, ts));
  for (const auto& q : c.queues) out.push_back(watch(events::WatchType::kAdded, "Queue", q, ts));
  for (const auto& g : c.pod_groups) out.push_back(watch(events::WatchType::kAdded, "PodGroup", g, ts));
  for (const auto& p : c.pods) out.push_back(watch(events::WatchType::kAdded, "Pod", p, ts));
  std::mt19937_64 rng(3);
  const size_t base = out.size();
  for (int day = 0; day < days; ++day) {
    ts += kDay;
    for (int i = 0; i < 150; ++i) {
      model::Pod p = c.pods[rng() % c.pods.size()];
      switch (rng() % 4) {
        case 0:
          p.meta.labels["churn"] = std::to_string(i);
          p.meta.resource_version = std::to_string(base + out.size());
          out.push_back(watch(events::WatchType::kModified, "Pod", p, ts));
          break;
        case 1:
          out.push_back(watch(events::WatchType::kDeleted, "Pod", p, ts));
          break;
        case 2: {
          Event d = events::testing::decision_event(static_cast<uint64_t>(day), static_cast<uint64_t>(i),
                                                    p.meta.namespace_ + "/" + p.meta.name);
          d.timestamp_us = ts;
          out.push_back(d);
          break;
        }
        default: {
          Event b;
          b.timestamp_us = ts;
          // Closes the decision three records back when that one was a decision; harmless otherwise.
          b.payload = events::BinderOutcome{base + out.size() - 2, "ns/p", events::Outcome::kBound, ""};
          out.push_back(b);
        }
      }
    }
  }
  return out;
}

/// The projection of the first `upto` records of `stream` (seq = index + 1).
events::ClusterState fold(std::vector<Event> stream, uint64_t upto) {
  events::ClusterState s;
  for (size_t i = 0; i < stream.size() && i < upto; ++i) {
    stream[i].seq = i + 1;
    (void)events::apply(s, stream[i]);
  }
  s.seq = upto;
  return s;
}

std::string snapshot_bytes(const events::ClusterState& s) {
  std::string b;
  events::encode_state(s, b);
  return b;
}

/// Writes a snapshot of `stream` folded up to `seq`.
auto snapshot_at(EventLog& log, const std::vector<Event>& stream, uint64_t seq) {
  return log.write_snapshot(seq, snapshot_bytes(fold(stream, seq)));
}

/// The log in `dir` with `stream` appended and a snapshot at each of `seqs`; a failed write fails
/// the test.
std::unique_ptr<EventLog> log_with_snapshots(const std::string& dir, const std::vector<Event>& stream,
                                             std::initializer_list<uint64_t> seqs) {
  auto log = open_log(dir);
  EXPECT_TRUE(log->append(stream));
  for (uint64_t seq : seqs) EXPECT_TRUE(snapshot_at(*log, stream, seq)) << "snapshot at " << seq;
  return log;
}

/// Overwrites one raw key of a column family, bypassing the log (corruption tests).
void put_raw_cf(const std::string& dir, const std::string& cf, const std::string& key,
                const std::string& value) {
  rocksdb::DBOptions o;
  std::vector<rocksdb::ColumnFamilyDescriptor> cfs;
  for (const char* n : {"default", "events", "snapshots", "audit", "meta"}) cfs.push_back({n, {}});
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* db = nullptr;
  ASSERT_TRUE(rocksdb::DB::Open(o, dir, cfs, &handles, &db).ok());
  size_t index = 0;
  for (size_t i = 0; i < cfs.size(); ++i) index = cfs[i].name == cf ? i : index;
  EXPECT_TRUE(db->Put(rocksdb::WriteOptions(), handles[index], key, value).ok());
  for (auto* h : handles) db->DestroyColumnFamilyHandle(h);
  delete db;
}

TEST(Snapshots, WrittenWholeReadBackCheckedAndKeptAcrossReopen) {
  TempDir dir;
  const auto stream = churn_stream(1);
  std::string big(9u << 20, 'x');  // three parts
  for (size_t i = 0; i < big.size(); i += 4096) big[i] = static_cast<char>(i / 4096);
  {
    auto log = open_log(dir.str());
    ASSERT_TRUE(log->append(stream));
    EXPECT_THAT(log->write_snapshot(log->last_seq() + 1, "x").message(), HasSubstr("past the log's end"));
    ASSERT_TRUE(snapshot_at(*log, stream, 10));
    ASSERT_TRUE(log->write_snapshot(20, big));
    auto listed = log->snapshots();
    ASSERT_TRUE(listed);
    ASSERT_EQ(listed->size(), 2u);
    EXPECT_EQ((*listed)[0].seq, 10u);
    EXPECT_EQ((*listed)[1].seq, 20u);
    EXPECT_EQ((*listed)[1].bytes, big.size());
  }
  auto log = open_log(dir.str());
  auto back = log->read_snapshot(20);
  ASSERT_TRUE(back) << back.message();
  EXPECT_TRUE(*back == big);
  EXPECT_THAT(log->read_snapshot(15).message(), HasSubstr("not found"));
  auto v = log->verify();
  ASSERT_TRUE(v);
  EXPECT_EQ(v->snapshots, 2u);
  // The 9 MiB one is not a state snapshot: verify says so, with its seq.
  ASSERT_EQ(v->corrupt_snapshots.size(), 1u);
  EXPECT_EQ(v->corrupt_snapshots[0].seq, 20u);
  EXPECT_THAT(v->corrupt_snapshots[0].message, HasSubstr("bad magic"));
}

TEST(Snapshots, RestoreFromAnySnapshotEqualsTheProjectionOfTheWholeLog) {
  TempDir dir;
  const auto stream = churn_stream(4);
  auto log = open_log(dir.str());
  ASSERT_TRUE(log->append(stream));
  const uint64_t n = stream.size();
  for (uint64_t at : {n / 5, n / 2, n - 40}) ASSERT_TRUE(snapshot_at(*log, stream, at));
  for (uint64_t at : {uint64_t{1}, n / 5 - 1, n / 5, n / 5 + 7, n / 2 + 100, n - 40, n - 1, n}) {
    auto r = restore_state(*log, at);
    ASSERT_TRUE(r) << r.message();
    EXPECT_TRUE(r->state == fold(stream, at)) << "at " << at;
    EXPECT_LE(r->snapshot_seq, at);
    EXPECT_EQ(r->snapshot_seq + r->tail_events, at);
    EXPECT_TRUE(r->warnings.empty());
  }
  auto end = restore_state(*log);
  ASSERT_TRUE(end);
  EXPECT_EQ(end->snapshot_seq, n - 40);
  EXPECT_EQ(end->tail_events, 40u);
  EXPECT_FALSE(end->state.records.open_decisions().empty()) << "the stream should leave some decisions open";
}

TEST(Snapshots, ADamagedSnapshotIsReportedAndRestoreFallsBackToAnOlderOne) {
  TempDir dir;
  const auto stream = churn_stream(2);
  const uint64_t n = stream.size();
  {
    auto log = log_with_snapshots(dir.str(), stream, {n / 3, n / 2});
    ASSERT_FALSE(HasFailure());
  }
  auto part0 = seq_key(n / 2) + std::string("\0\0\0\0", 4);
  put_raw_cf(dir.str(), "snapshots", part0, "\1\2\3\4garbage");
  auto log = open_log(dir.str());
  auto v = log->verify();
  ASSERT_TRUE(v);
  EXPECT_FALSE(v->ok());
  ASSERT_EQ(v->corrupt_snapshots.size(), 1u);
  EXPECT_EQ(v->corrupt_snapshots[0].seq, n / 2);
  EXPECT_THAT(v->corrupt_snapshots[0].message, HasSubstr("checksum mismatch"));
  auto r = restore_state(*log);
  ASSERT_TRUE(r) << r.message();
  EXPECT_EQ(r->snapshot_seq, n / 3);
  ASSERT_FALSE(r->warnings.empty());
  EXPECT_THAT(r->warnings[0], HasSubstr("snapshot " + std::to_string(n / 2)));
  EXPECT_TRUE(r->state == fold(stream, n));
}

TEST(Retention, DeletesOldEventsButNeverPastTheOldestKeptSnapshot) {
  TempDir dir;
  const auto stream = churn_stream(10);  // days -10 .. 0
  const uint64_t n = stream.size();
  // First record of each day, to know where an age cut must land.
  std::vector<uint64_t> day_start;
  for (uint64_t i = 0; i < n; ++i)
    if (i == 0 || stream[i].timestamp_us != stream[i - 1].timestamp_us) day_start.push_back(i + 1);
  ASSERT_EQ(day_start.size(), 11u);
  auto log = open_log(dir.str());
  ASSERT_TRUE(log->append(stream));
  const uint64_t s1 = day_start[3] + 5, s2 = day_start[8] + 9;  // two snapshots
  ASSERT_TRUE(snapshot_at(*log, stream, s1));
  ASSERT_TRUE(snapshot_at(*log, stream, s2));

  // A pod with a decision among the first days: the audit index names it until retention.
  std::string audited_pod;
  uint64_t audited_seq = 0;
  for (uint64_t i = 0; i < n && audited_pod.empty(); ++i) {
    if (const auto* d = std::get_if<events::DecisionEvent>(&stream[i].payload)) {
      audited_pod = d->decision.pod;
      audited_seq = i + 1;
    }
  }
  ASSERT_LT(audited_seq, s1);
  auto before = log->audit(AuditKey::kPod, audited_pod);
  ASSERT_TRUE(before);
  ASSERT_THAT(*before, ::testing::Contains(audited_seq));

  RetentionPolicy keep_all_days;
  keep_all_days.max_age = std::chrono::hours(24 * 30);
  keep_all_days.max_bytes = 0;
  auto r0 = log->apply_retention(keep_all_days, kNow);
  ASSERT_TRUE(r0) << r0.message();
  EXPECT_EQ(r0->events_deleted, 0u);
  EXPECT_EQ(log->retained_from(), 1u);

  // Five days: events of days -10..-6 are old, but only those up to s1 (the oldest kept) may go.
  RetentionPolicy five_days;
  five_days.max_age = std::chrono::hours(24 * 5) - std::chrono::minutes(1);
  five_days.max_bytes = 0;
  auto r1 = log->apply_retention(five_days, kNow);
  ASSERT_TRUE(r1) << r1.message();
  EXPECT_EQ(r1->retained_from, s1 + 1);
  EXPECT_EQ(r1->events_deleted, s1);
  EXPECT_EQ(r1->snapshots_deleted, 0u);
  auto v = log->verify();
  ASSERT_TRUE(v);
  EXPECT_TRUE(v->ok()) << "deleted by retention is not a gap";
  EXPECT_EQ(v->first_seq, s1 + 1);
  EXPECT_EQ(v->retained_from, s1 + 1);

  // Keeping one snapshot moves the floor to s2; the age cut is now below it: days -10..-5 are older
  // than five days less a minute, day -4 is not.
  five_days.keep_snapshots = 1;
  auto r2 = log->apply_retention(five_days, kNow);
  ASSERT_TRUE(r2) << r2.message();
  EXPECT_EQ(r2->snapshots_deleted, 1u);
  EXPECT_EQ(r2->retained_from, day_start[6]);
  ASSERT_EQ(log->snapshots()->size(), 1u);

  // Whatever was deleted, restore still equals the projection of the whole stream.
  auto restored = restore_state(*log);
  ASSERT_TRUE(restored) << restored.message();
  EXPECT_TRUE(restored->state == fold(stream, n));
  // Before the kept snapshot there is nothing to start from.
  EXPECT_THAT(restore_state(*log, s2 - 1).message(), HasSubstr("deleted by retention"));
  // The audit index no longer names deleted events.
  auto after = log->audit(AuditKey::kPod, audited_pod);
  ASSERT_TRUE(after);
  for (uint64_t s : *after) EXPECT_GE(s, log->retained_from()) << audited_pod;
}

TEST(Retention, SizeLimitAndTheSequenceGoesOnAfterEverythingWasDeleted) {
  TempDir dir;
  const auto stream = churn_stream(2);
  const uint64_t n = stream.size();
  {
    auto log = log_with_snapshots(dir.str(), stream, {n});
    ASSERT_FALSE(HasFailure());
    RetentionPolicy tiny;
    tiny.max_age = std::chrono::seconds(0);
    tiny.max_bytes = 1;  // everything the snapshot covers may go
    auto r = log->apply_retention(tiny, kNow);
    ASSERT_TRUE(r) << r.message();
    EXPECT_EQ(r->retained_from, n + 1);
    EXPECT_EQ(r->events_deleted, n);
  }
  auto log = open_log(dir.str());
  EXPECT_EQ(log->last_seq(), n) << "the sequence must not restart at 1";
  auto a = log->append({events::testing::decision_event(1, 1)});
  ASSERT_TRUE(a);
  EXPECT_EQ(a->first_seq, n + 1);
  auto v = log->verify();
  ASSERT_TRUE(v);
  EXPECT_TRUE(v->ok());
  EXPECT_EQ(v->records, 1u);
  auto r = restore_state(*log);
  ASSERT_TRUE(r) << r.message();
  EXPECT_EQ(r->snapshot_seq, n);
  EXPECT_EQ(r->tail_events, 1u);
}

TEST(Retention, AHoleAfterTheRetainedStartIsStillAGap) {
  TempDir dir;
  auto log = open_log(dir.str());
  ASSERT_TRUE(log->append(events::testing::one_of_each()));
  const std::string dropped = seq_key(1);
  log.reset();
  {
    rocksdb::DBOptions o;
    std::vector<rocksdb::ColumnFamilyDescriptor> cfs;
    for (const char* name : {"default", "events", "snapshots", "audit", "meta"}) cfs.push_back({name, {}});
    std::vector<rocksdb::ColumnFamilyHandle*> handles;
    rocksdb::DB* db = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open(o, dir.str(), cfs, &handles, &db).ok());
    ASSERT_TRUE(db->Delete(rocksdb::WriteOptions(), handles[1], dropped).ok());
    for (auto* h : handles) db->DestroyColumnFamilyHandle(h);
    delete db;
  }
  log = open_log(dir.str());
  auto v = log->verify();
  ASSERT_TRUE(v);
  EXPECT_FALSE(v->ok());
  ASSERT_EQ(v->gaps.size(), 1u);
  EXPECT_EQ(v->gaps[0], (std::pair<uint64_t, uint64_t>{0, 2}));
}

}  // namespace
}  // namespace kai::storage
