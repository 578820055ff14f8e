#pragma once
// Writes the scheduler actor's state snapshots and applies retention off the actor's thread (docs/event-log-format.md "Snapshots"):
// the actor encodes the state at a consistent seq and hands the bytes over; this worker stores them
// (RocksDB flush included) and then trims the log, so a cycle never waits on either.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "storage/event_log.hpp"

namespace kai::daemon {

/// When the daemon snapshots and what it keeps.
struct SnapshotOptions {
  /// Take a snapshot after this many logged events. Default: 100,000; 0 = never by count.
  uint64_t every_events = 100000;
  /// ... or after this long with at least one new event. Default: 10 min; 0 = never by time.
  std::chrono::seconds every{600};
  storage::RetentionPolicy retention;
};

class Snapshotter {
 public:
  Snapshotter(storage::EventLog& log, SnapshotOptions options);
  ~Snapshotter();
  Snapshotter(const Snapshotter&) = delete;
  Snapshotter& operator=(const Snapshotter&) = delete;

  /// True when a snapshot is due: enough events since the last one, or enough time with some.
  /// Called by the actor with the log's current last seq.
  bool due(uint64_t seq, std::chrono::steady_clock::time_point now) const;
  /// Hands over the state encoded at `seq`. False (and nothing kept) while the previous one is still
  /// being written: the actor tries again next cycle.
  bool offer(uint64_t seq, std::string bytes, std::chrono::steady_clock::time_point now);
  /// Finishes the snapshot being written, then stops.
  void stop();
  /// Snapshots written since the start, for tests and metrics.
  uint64_t written() const;

 private:
  void work();

  storage::EventLog& log_;
  SnapshotOptions options_;
  uint64_t last_seq_ = 0;  // actor thread only: the seq of the last snapshot offered
  std::chrono::steady_clock::time_point last_time_;  // actor thread only
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::optional<std::pair<uint64_t, std::string>> pending_;  // guarded by mu_
  bool busy_ = false;                                        // guarded by mu_
  bool stopping_ = false;                                    // guarded by mu_
  uint64_t written_ = 0;                                     // guarded by mu_
  std::thread thread_;
};

}  // namespace kai::daemon
