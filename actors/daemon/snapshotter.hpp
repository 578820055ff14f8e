#pragma once
// Writes the scheduler actor's state snapshots and applies retention off the actor's thread (docs/event-log-format.md "Snapshots"):
// the actor encodes the state at a consistent seq and hands the bytes over; this worker stores them
// (RocksDB flush included) and then trims the log, so a cycle never waits on either.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <optional>
#include <string>

#include "actors/daemon/background_worker.hpp"
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

class Snapshotter : public BackgroundWorker {
 public:
  Snapshotter(storage::EventLog& log, SnapshotOptions options);
  ~Snapshotter();

  /// True when a snapshot is due: enough events since the last one, or enough time with some.
  /// Called by the actor with the log's current last seq.
  bool due(uint64_t seq, std::chrono::steady_clock::time_point now) const;
  /// Hands over the state encoded at `seq`. False (and nothing kept) while the previous one is still
  /// being written: the actor tries again next cycle.
  bool offer(uint64_t seq, std::string bytes, std::chrono::steady_clock::time_point now);
  /// Snapshots are on (either trigger) and events up to `seq` are not all in one yet (actor thread).
  bool behind(uint64_t seq) const {
    return (options_.every_events > 0 || options_.every.count() > 0) && seq > last_seq_;
  }
  /// The snapshot at a graceful stop: waits for the one being written, then hands this one over.
  /// False when the worker is stopping. Actor thread only, as offer().
  bool offer_last(uint64_t seq, std::string bytes);

 private:
  void work();

  storage::EventLog& log_;
  SnapshotOptions options_;
  uint64_t last_seq_ = 0;  // actor thread only: the seq of the last snapshot offered
  std::chrono::steady_clock::time_point last_time_;  // actor thread only
  std::optional<std::pair<uint64_t, std::string>> pending_;  // guarded by mu_
  bool busy_ = false;                                        // guarded by mu_
  std::condition_variable idle_;  ///< Signalled when a write ends (busy_ cleared), for offer_last.
};

}  // namespace kai::daemon
