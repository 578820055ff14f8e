#pragma once
// The elector's own thread: ticks the LeaderElector every retry period and hands each result on,
// so that the scheduler and the binder read leadership without touching the Lease.

#include <boost/core/noncopyable.hpp>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "actors/leader/leader_elector.hpp"

namespace kai::leader {

class ElectorLoop : private boost::noncopyable {
 public:
  /// After every tick: until when this replica may act, and its epoch.
  using PublishFn = std::function<void(Clock::time_point act_until, uint64_t epoch)>;
  /// When leadership was taken or lost: the epoch, the lease's holder and whether it was taken.
  using TransitionFn = std::function<void(uint64_t epoch, const std::string& holder, bool acquired)>;
  /// The wall clock in microseconds (what the lease records).
  using WallFn = std::function<int64_t()>;

  ElectorLoop(LeaderElector& elector, std::chrono::milliseconds retry_period, WallFn wall_us, PublishFn publish,
              TransitionFn on_transition);
  ~ElectorLoop();

  void start();
  /// Ends the thread after its current tick.
  void stop();

 private:
  void run();

  LeaderElector& elector_;
  std::chrono::milliseconds retry_period_;
  WallFn wall_us_;
  PublishFn publish_;
  TransitionFn on_transition_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace kai::leader
