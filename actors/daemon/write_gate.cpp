#include "actors/daemon/write_gate.hpp"

namespace kai::daemon {

void WriteGate::urgent_began(uint64_t n) {
  std::lock_guard lock(mu_);
  urgent_ += n;
}

void WriteGate::urgent_ended(uint64_t n) {
  bool idle = false;
  {
    std::lock_guard lock(mu_);
    urgent_ = n > urgent_ ? 0 : urgent_ - n;
    idle = urgent_ == 0;
  }
  if (idle) cv_.notify_all();
}

std::chrono::steady_clock::duration WriteGate::wait_turn() {
  const auto start = std::chrono::steady_clock::now();
  std::unique_lock lock(mu_);
  if (open_ || urgent_ == 0) return {};
  ++held_;
  cv_.wait_until(lock, start + max_hold_, [&] { return open_ || urgent_ == 0; });
  return std::chrono::steady_clock::now() - start;
}

void WriteGate::open() {
  {
    std::lock_guard lock(mu_);
    open_ = true;
  }
  cv_.notify_all();
}

uint64_t WriteGate::urgent() const {
  std::lock_guard lock(mu_);
  return urgent_;
}

uint64_t WriteGate::held() const {
  std::lock_guard lock(mu_);
  return held_;
}

}  // namespace kai::daemon
