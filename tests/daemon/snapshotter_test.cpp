// Snapshot triggers count from the last snapshot's position, across restarts: a daemon that restarts
// more often than it logs --snapshot-events events still takes snapshots.
#include "actors/daemon/snapshotter.hpp"

#include <gtest/gtest.h>


#include "events/event.hpp"
#include "tests/storage/temp_dir.hpp"

namespace kai::daemon {
namespace {

void append_events(storage::EventLog& log, int n) {
  std::vector<events::Event> batch(static_cast<size_t>(n));
  for (auto& e : batch) e.payload = events::LeadershipChange{1, "x", true};
  ASSERT_TRUE(log.append(std::move(batch)).is_ok());
}

TEST(Snapshotter, EventsCountFromTheLastSnapshotAcrossRestarts) {
  storage::testing::TempDir dir;
  SnapshotOptions o;
  o.every_events = 3000;
  o.every = std::chrono::seconds(0);
  const auto now = std::chrono::steady_clock::now();
  // Ten runs of 400 events each, none reaching 3,000 on its own.
  for (int run = 0; run < 10; ++run) {
    auto log = std::move(storage::EventLog::open(dir.str())).value();
    Snapshotter s(*log, o);
    append_events(*log, 400);
    if (s.due(log->last_seq(), now)) {
      EXPECT_GE(log->last_seq(), 3000u) << "run " << run;
      ASSERT_TRUE(s.offer(log->last_seq(), "state", now));
      s.stop();
      EXPECT_EQ(s.written(), 1u);
      auto snaps = log->snapshots();
      ASSERT_TRUE(snaps.is_ok());
      ASSERT_EQ(snaps.value().size(), 1u);
      EXPECT_EQ(snaps.value().back().seq, log->last_seq());
      // From here on, the count starts at that snapshot.
      Snapshotter again(*log, o);
      EXPECT_FALSE(again.due(log->last_seq(), now));
      return;
    }
  }
  ADD_FAILURE() << "4,000 events over ten restarts and no snapshot was due";
}

// The snapshot at a graceful stop: wanted whenever events came after the last snapshot (not only
// once a trigger is due), never when the user turned both triggers off, and handed over even while
// another is being written (it waits for that one).
TEST(Snapshotter, TheSnapshotAtStopIsWantedAfterAnyEventUnlessSnapshotsAreOff) {
  storage::testing::TempDir dir;
  auto log = std::move(storage::EventLog::open(dir.str())).value();
  SnapshotOptions o;
  o.every_events = 100000;
  Snapshotter s(*log, o);
  EXPECT_FALSE(s.behind(log->last_seq()));
  append_events(*log, 3);
  EXPECT_FALSE(s.due(log->last_seq(), std::chrono::steady_clock::now()));
  EXPECT_TRUE(s.behind(log->last_seq()));
  ASSERT_TRUE(s.offer(log->last_seq() - 1, "state", std::chrono::steady_clock::now()));
  EXPECT_TRUE(s.offer_last(log->last_seq(), "state")) << "waits for the one being written";
  EXPECT_FALSE(s.behind(log->last_seq()));
  s.stop();
  EXPECT_EQ(s.written(), 2u);

  SnapshotOptions off;
  off.every_events = 0;
  off.every = std::chrono::seconds(0);
  Snapshotter none(*log, off);
  append_events(*log, 3);
  EXPECT_FALSE(none.behind(log->last_seq()));
}

}  // namespace
}  // namespace kai::daemon
