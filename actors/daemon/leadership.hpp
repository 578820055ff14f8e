#pragma once
// Whether this replica may act now, readable from any thread (the scheduler actor before a cycle,
// binder workers before every API write) while the elector thread alone talks to the Lease.

#include <atomic>
#include <chrono>
#include <cstdint>

namespace kai::daemon {

class Leadership {
 public:
  using Clock = std::chrono::steady_clock;

  /// Without leader election a replica always acts, with epoch 0.
  explicit Leadership(bool electing) : electing_(electing) {}

  bool electing() const { return electing_; }
  bool may_act() const {
    return !electing_ || Clock::now().time_since_epoch().count() < act_until_.load(std::memory_order_acquire);
  }
  uint64_t epoch() const { return epoch_.load(std::memory_order_acquire); }

  /// Published by the elector thread after each tick.
  void publish(Clock::time_point act_until, uint64_t epoch) {
    epoch_.store(epoch, std::memory_order_release);
    act_until_.store(act_until.time_since_epoch().count(), std::memory_order_release);
  }
  void revoke() { act_until_.store(0, std::memory_order_release); }

 private:
  const bool electing_;
  std::atomic<Clock::rep> act_until_{0};
  std::atomic<uint64_t> epoch_{0};
};

}  // namespace kai::daemon
