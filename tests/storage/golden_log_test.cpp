// A log from the previous schema (tests/fixtures/log-v4: event schema 4, snapshot format 1) still
// opens, verifies, restores from its snapshots and replays with this build (docs/one-truth.md,
// "Versions"): its cycles were decided by an older behaviour, so replay reports them as skipped,
// not as differences.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "events/projection.hpp"
#include "storage/event_log.hpp"
#include "storage/restore.hpp"
#include "tests/storage/temp_dir.hpp"
#include "tools/kai-log/replay.hpp"

namespace kai::storage {
namespace {

/// A copy of the fixture `name` (a directory under tests/fixtures): RocksDB writes to a directory
/// it opens.
std::string copy_fixture(const testing::TempDir& dir, const std::string& name = "log-v4") {
  const std::string to = dir.str() + "/log";
  const char* root = std::getenv("KAI_SOURCE_DIR");
  std::filesystem::copy(std::string(root != nullptr ? root : KAI_DEFAULT_SOURCE_DIR) + "/tests/fixtures/" + name, to);
  return to;
}

/// The report of verifying `log`: every record and snapshot readable, `records` and `snapshots` many.
void expect_verified(EventLog& log, uint64_t records, uint64_t snapshots) {
  auto report = log.verify();
  ASSERT_TRUE(report.is_ok()) << report.message();
  EXPECT_TRUE(report.value().ok());
  EXPECT_EQ(report.value().records, records);
  EXPECT_EQ(report.value().snapshots, snapshots);
}

/// `kai-log replay` of `log` exits 0 and its summary says `summary`.
void expect_replay_says(EventLog& log, const std::string& summary) {
  std::ostringstream out, err;
  const int code = kailog::replay(log, {}, out, err);
  EXPECT_EQ(code, 0) << out.str() << err.str();
  EXPECT_NE(out.str().find(summary), std::string::npos) << out.str() << err.str();
}

/// The projection folded over the records up to `at`.
events::ClusterState fold_upto(EventLog& log, uint64_t at) {
  events::ClusterState state;
  (void)log.read(1, at, [&](uint64_t, const Result<events::Event>& e) {
    (void)events::apply(state, e.value());
    return true;
  });
  return state;
}

TEST(GoldenLogV4, OpensVerifiesAndDecodesEveryRecord) {
  testing::TempDir dir;
  auto log = EventLog::open(copy_fixture(dir));
  ASSERT_TRUE(log.is_ok()) << log.message();
  expect_verified(*log.value(), 160, 2);
  std::map<std::string, int> kinds;
  ASSERT_TRUE(log.value()->read(1, UINT64_MAX, [&](uint64_t seq, const Result<events::Event>& e) {
    EXPECT_TRUE(e.is_ok()) << seq << ": " << e.message();
    if (e.is_ok()) ++kinds[events::kind_name(e.value().payload)];
    return true;
  }));
  EXPECT_GT(kinds["watch"], 0);
  EXPECT_GT(kinds["decision"], 0);
  EXPECT_GT(kinds["outcome"], 0);
  EXPECT_GT(kinds["cycle_start"], 0);
  EXPECT_GT(kinds["config"], 0);
}

TEST(GoldenLogV4, ItsSnapshotsRestoreToTheFoldOfItsEvents) {
  testing::TempDir dir;
  auto log = EventLog::open(copy_fixture(dir));
  ASSERT_TRUE(log.is_ok()) << log.message();
  events::ClusterState folded;
  ASSERT_TRUE(log.value()->read(1, UINT64_MAX, [&](uint64_t, const Result<events::Event>& e) {
    (void)events::apply(folded, e.value());
    return true;
  }));
  for (uint64_t at : {95ull, 135ull, 160ull}) {
    auto from_snapshot = restore_state(*log.value(), at);
    ASSERT_TRUE(from_snapshot.is_ok()) << from_snapshot.message();
    EXPECT_TRUE(from_snapshot.value().warnings.empty());
    events::ClusterState upto = fold_upto(*log.value(), at);
    // Format 1 kept no condition transition times and only the pods of open decisions; everything
    // else is whole.
    const bool after_snapshot = at > 135;
    for (auto& [key, pod] : upto.pods) {
      for (auto& c : pod.conditions) {
        if (!after_snapshot) c.last_transition_time.reset();
      }
    }
    if (!after_snapshot) {
      EXPECT_TRUE(from_snapshot.value().state.pods == upto.pods) << at;
    }
    EXPECT_TRUE(from_snapshot.value().state.nodes == upto.nodes) << at;
    EXPECT_TRUE(from_snapshot.value().state.pod_groups == upto.pod_groups) << at;
    EXPECT_EQ(from_snapshot.value().state.records.open_decisions(), upto.records.open_decisions()) << at;
  }
  EXPECT_FALSE(folded.pods.empty());
}

TEST(GoldenLogV4, ReplaysWithItsCyclesReportedAsOlderBehaviour) {
  testing::TempDir dir;
  auto log = EventLog::open(copy_fixture(dir));
  ASSERT_TRUE(log.is_ok()) << log.message();
  expect_replay_says(*log.value(), "replayed 0 cycles, 0 records, 0 differences, 5 cycles skipped (recorded by an "
                                   "older scheduling behaviour)");
}

// The kai-demo log of the build before the pod grouper (behaviour 2): it opens and verifies, and its
// cycles are reported as recorded by an older behaviour, since grouping by top owner decides
// differently (core/behaviour_version.hpp 3).
TEST(GoldenLogV5, OpensVerifiesAndReportsItsCyclesAsOlderBehaviour) {
  testing::TempDir dir;
  auto log = EventLog::open(copy_fixture(dir, "log-v5"));
  ASSERT_TRUE(log.is_ok()) << log.message();
  expect_verified(*log.value(), 140, 2);
  expect_replay_says(*log.value(),
                     "replayed 0 cycles, 0 records, 0 differences, 13 cycles skipped (recorded by an older "
                     "scheduling behaviour)");
}

TEST(GoldenLogV5, ItsSnapshotsRestoreToTheFoldOfItsEvents) {
  testing::TempDir dir;
  auto log = EventLog::open(copy_fixture(dir, "log-v5"));
  ASSERT_TRUE(log.is_ok()) << log.message();
  for (uint64_t at : {63ull, 125ull, 140ull}) {
    auto from_snapshot = restore_state(*log.value(), at);
    ASSERT_TRUE(from_snapshot.is_ok()) << from_snapshot.message();
    EXPECT_TRUE(from_snapshot.value().warnings.empty());
    // Its snapshots are of an older format: a restart from one lists every kind again.
    EXPECT_EQ(from_snapshot.value().upgraded, from_snapshot.value().snapshot_seq > 0) << at;
    events::ClusterState upto = fold_upto(*log.value(), at);
    EXPECT_TRUE(from_snapshot.value().state.pods == upto.pods) << at;
    EXPECT_TRUE(from_snapshot.value().state.nodes == upto.nodes) << at;
    EXPECT_TRUE(from_snapshot.value().state.pod_groups == upto.pod_groups) << at;
    EXPECT_TRUE(from_snapshot.value().state.queues == upto.queues) << at;
    EXPECT_EQ(from_snapshot.value().state.records.open_decisions(), upto.records.open_decisions()) << at;
  }
}

}  // namespace
}  // namespace kai::storage
