#pragma once
// The thread and the lock of a daemon part that works off a queue of its own in the background: the
// status writer, the PodGroup writer and the snapshotter. The part keeps its queue under `mu_`, wakes
// the thread with `cv_` and returns from its work loop once `stopping_` is set (after draining, or at
// once, as the part decides).

#include <boost/core/noncopyable.hpp>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>

namespace kai::daemon {

class BackgroundWorker : private boost::noncopyable {
 public:
  /// Asks the work loop to end and waits for it. Idempotent.
  void stop();
  /// What the work loop counted as written since the start, for tests and metrics.
  uint64_t written() const;

 protected:
  BackgroundWorker() = default;
  /// The part's destructor calls stop() first: the loop reads the part's own members.
  ~BackgroundWorker() = default;

  /// Starts the work loop; called last in the part's constructor, once its members exist.
  void start(std::function<void()> loop) { thread_ = std::thread(std::move(loop)); }

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;  // guarded by mu_
  uint64_t written_ = 0;   // guarded by mu_

 private:
  std::thread thread_;
};

}  // namespace kai::daemon
