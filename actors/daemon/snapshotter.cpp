#include "actors/daemon/snapshotter.hpp"

#include <spdlog/spdlog.h>

namespace kai::daemon {

Snapshotter::Snapshotter(storage::EventLog& log, SnapshotOptions options)
    : log_(log), options_(options), last_time_(std::chrono::steady_clock::now()) {
  // Events count from the last snapshot, or from the first retained event when there is none, across
  // restarts: counting from the log's end at each start, a daemon that restarts often never took one.
  last_seq_ = log.retained_from() - 1;
  if (auto snaps = log.snapshots(); snaps && !snaps->empty()) last_seq_ = snaps->back().seq;
  start([this] { work(); });
}

Snapshotter::~Snapshotter() {
  stop();
}

bool Snapshotter::due(uint64_t seq, std::chrono::steady_clock::time_point now) const {
  if (seq <= last_seq_) return false;
  if (options_.every_events > 0 && seq - last_seq_ >= options_.every_events) return true;
  return options_.every.count() > 0 && now - last_time_ >= options_.every;
}

bool Snapshotter::offer(uint64_t seq, std::string bytes, std::chrono::steady_clock::time_point now) {
  {
    std::lock_guard lock(mu_);
    if (busy_ || pending_ || stopping_) return false;
    pending_.emplace(seq, std::move(bytes));
  }
  last_seq_ = seq;
  last_time_ = now;
  cv_.notify_one();
  return true;
}

bool Snapshotter::offer_last(uint64_t seq, std::string bytes) {
  {
    std::unique_lock lock(mu_);
    // The worker signals each write's end; a stop ends the wait at that write's end at the latest.
    idle_.wait(lock, [&] { return stopping_ || (!busy_ && !pending_); });
    if (stopping_) return false;
  }
  return offer(seq, std::move(bytes), std::chrono::steady_clock::now());
}

void Snapshotter::work() {
  std::unique_lock lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return stopping_ || pending_; });
    if (!pending_) return;  // stopping, nothing left
    auto [seq, bytes] = std::move(*pending_);
    pending_.reset();
    busy_ = true;
    lock.unlock();
    const auto started = std::chrono::steady_clock::now();
    const size_t size = bytes.size();
    storage::Status st = log_.write_snapshot(seq, std::move(bytes));
    const auto ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started);
    if (!st) {
      spdlog::error("snapshot at {}: {}", seq, st.message());
    } else {
      spdlog::info("snapshot at {} written: {} bytes in {} ms", seq, size, ms.count());
      const int64_t now_us = std::chrono::duration_cast<std::chrono::microseconds>(
                                 std::chrono::system_clock::now().time_since_epoch())
                                 .count();
      auto kept = log_.apply_retention(options_.retention, now_us);
      if (!kept) {
        spdlog::error("retention: {}", kept.message());
      } else if (kept->events_deleted > 0 || kept->snapshots_deleted > 0) {
        spdlog::info("retention: {} events and {} snapshots deleted; the log starts at {}",
                     kept->events_deleted, kept->snapshots_deleted, kept->retained_from);
      }
    }
    lock.lock();
    busy_ = false;
    if (st) ++written_;
    idle_.notify_all();
  }
}

}  // namespace kai::daemon
