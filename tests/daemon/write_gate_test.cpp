// The gate that holds the deferred writers while the binder has work (actors/daemon/write_gate.hpp),
// alone and as the binder drives it (actors/daemon/binder.hpp).

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>

#include "actors/daemon/binder.hpp"
#include "actors/daemon/write_gate.hpp"
#include "tests/daemon/writer_fakes.hpp"
#include "tests/gpu_sharing/fake_sharing_api.hpp"

namespace kai::daemon {
namespace {

using namespace std::chrono_literals;

/// Whether a deferred call started now is still waiting after `after`.
bool still_waiting(std::future<void>& turn, std::chrono::milliseconds after) {
  return turn.wait_for(after) == std::future_status::timeout;
}

std::future<void> deferred_call(WriteGate& gate) {
  return std::async(std::launch::async, [&gate] { gate.wait_turn(); });
}

TEST(WriteGate, ADeferredWriteGoesAtOnceWhileTheBinderIsIdle) {
  WriteGate gate;
  EXPECT_EQ(gate.wait_turn(), std::chrono::steady_clock::duration::zero());
  EXPECT_EQ(gate.held(), 0u);
}

TEST(WriteGate, ADeferredWriteWaitsUntilTheLastBindPathWorkEnds) {
  WriteGate gate;
  gate.urgent_began(2);
  auto turn = deferred_call(gate);
  EXPECT_TRUE(still_waiting(turn, 50ms));
  gate.urgent_ended();
  EXPECT_TRUE(still_waiting(turn, 50ms)) << "one unit of work is still outstanding";
  gate.urgent_ended();
  EXPECT_EQ(turn.wait_for(5s), std::future_status::ready);
  EXPECT_EQ(gate.held(), 1u);
  EXPECT_EQ(gate.urgent(), 0u);
}

TEST(WriteGate, ABinderKeptBusyHoldsADeferredWriteNoLongerThanTheLimit) {
  WriteGate gate(100ms);
  gate.urgent_began();
  const auto waited = gate.wait_turn();
  EXPECT_GE(waited, 100ms);
  EXPECT_LT(waited, 5s);
  EXPECT_EQ(gate.urgent(), 1u);
}

TEST(WriteGate, OpeningLetsWaitingAndLaterWritesThrough) {
  WriteGate gate;
  gate.urgent_began();
  auto turn = deferred_call(gate);
  EXPECT_TRUE(still_waiting(turn, 20ms));
  gate.open();
  EXPECT_EQ(turn.wait_for(5s), std::future_status::ready);
  EXPECT_EQ(gate.wait_turn(), std::chrono::steady_clock::duration::zero());
}

TEST(WriteGate, MoreEndsThanBeginningsLeaveTheGateOpenNotWrapped) {
  WriteGate gate;
  gate.urgent_ended(3);
  EXPECT_EQ(gate.urgent(), 0u);
  EXPECT_EQ(gate.wait_turn(), std::chrono::steady_clock::duration::zero());
}

/// A bind port whose binds wait until the test lets them go.
class HeldBinds : public BindApi {
 public:
  model::Status bind_pod(const std::string&, const std::string&, const std::string&, const std::string&) override {
    std::unique_lock lock(mu_);
    ++started_;
    cv_.notify_all();
    cv_.wait(lock, [&] { return released_; });
    return model::Status::ok();
  }
  model::Result<std::string> pod_node(const std::string&, const std::string&, const std::string&) override {
    return std::string();
  }
  model::Status delete_pod(const std::string&, const std::string&, const std::string&, int64_t) override {
    return model::Status::ok();
  }
  bool wait_started(int n) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, 5s, [&] { return started_ >= n; });
  }
  void release() {
    {
      std::lock_guard lock(mu_);
      released_ = true;
    }
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int started_ = 0;
  bool released_ = false;
};

BindJob bind_of(uint64_t seq, const std::string& name) {
  BindJob j;
  j.log_seq = seq;
  j.decision.action = "allocate";
  j.decision.kind = events::DecisionKind::kBind;
  j.decision.pod = "team-a/" + name;
  j.decision.pod_uid = "uid-" + name;
  j.decision.node = "node-1";
  return j;
}

TEST(WriteGate, TheBinderHoldsDeferredWritesFromTheFirstQueuedJobToTheLastOutcome) {
  WriteGate gate;
  HeldBinds api;
  gpu_sharing::fakes::FakeCluster cluster;
  gpu_sharing::SharingChain chain(cluster, gpu_sharing::ChainOptions{}, gpu_sharing::fakes::counter_suffix());
  std::atomic<int> outcomes{0};
  {
    Binder binder(
        api, chain, 1, [&](const BindJob&, events::BinderOutcome) { ++outcomes; }, [] { return true; },
        BinderTiming{}, &gate);
    binder.submit(bind_of(1, "a"));
    binder.submit(bind_of(2, "b"));  // queued behind the first: the only worker is busy
    ASSERT_TRUE(api.wait_started(1));
    EXPECT_EQ(gate.urgent(), 2u);
    auto turn = deferred_call(gate);
    EXPECT_TRUE(still_waiting(turn, 50ms));
    api.release();
    EXPECT_EQ(turn.wait_for(5s), std::future_status::ready);
    EXPECT_EQ(outcomes.load(), 2) << "the gate opened only after both outcomes";
    EXPECT_EQ(gate.urgent(), 0u);
    binder.stop();
  }
}

}  // namespace
}  // namespace kai::daemon
