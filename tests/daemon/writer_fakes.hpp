#pragma once
// What the fakes of the daemon's API ports have in common (tests/daemon/binder_test.cpp,
// status_writer_test.cpp, pod_group_writer_test.cpp): each records every call as one line, and can
// hold the writer's only worker in its first call, so that a test can queue work behind it.

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace kai::daemon::fakes {

/// Every call as one line, in call order; with `hold_first_call`, the first call waits in record()
/// until release().
class CallRecorder {
 public:
  bool hold_first_call = false;

  std::vector<std::string> calls() {
    std::lock_guard lock(mu_);
    return calls_;
  }
  /// Waits until the held first call has begun.
  bool wait_held() {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, std::chrono::seconds(5), [&] { return holding_; });
  }
  void release() {
    {
      std::lock_guard lock(mu_);
      released_ = true;
    }
    cv_.notify_all();
  }

 protected:
  void record(std::string call) {
    std::unique_lock lock(mu_);
    calls_.push_back(std::move(call));
    if (hold_first_call && calls_.size() == 1) {
      holding_ = true;
      cv_.notify_all();
      cv_.wait(lock, [&] { return released_; });
    }
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::string> calls_;
  bool holding_ = false;
  bool released_ = false;
};

/// Waits up to 5 s until `writer` has made `n` writes; true when it made exactly `n`.
template <typename Writer>
bool wait_written(const Writer& writer, uint64_t n) {
  for (int i = 0; i < 2500 && writer.written() < n; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return writer.written() == n;
}

}  // namespace kai::daemon::fakes
