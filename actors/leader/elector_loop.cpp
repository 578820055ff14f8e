#include "actors/leader/elector_loop.hpp"

#include <utility>

namespace kai::leader {

ElectorLoop::ElectorLoop(LeaderElector& elector, std::chrono::milliseconds retry_period, WallFn wall_us,
                         PublishFn publish, TransitionFn on_transition)
    : elector_(elector),
      retry_period_(retry_period),
      wall_us_(std::move(wall_us)),
      publish_(std::move(publish)),
      on_transition_(std::move(on_transition)) {}

ElectorLoop::~ElectorLoop() {
  stop();
}

void ElectorLoop::start() {
  thread_ = std::thread([this] { run(); });
}

void ElectorLoop::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void ElectorLoop::run() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    lock.unlock();
    const auto now = Clock::now();
    const Transition t = elector_.tick(now, wall_us_());
    publish_(elector_.act_until(), static_cast<uint64_t>(elector_.epoch()));
    if (t != Transition::kNone) {
      on_transition_(static_cast<uint64_t>(elector_.epoch()), elector_.observed_holder(),
                     t == Transition::kBecameLeader);
    }
    lock.lock();
    cv_.wait_until(lock, now + retry_period_, [&] { return stopping_; });
  }
}

}  // namespace kai::leader
