// The gate that holds the deferred writers while the binder has work (actors/daemon/write_gate.hpp);
// tests/daemon/binder_test.cpp has the binder driving it.

#include <gtest/gtest.h>

#include <chrono>
#include <future>

#include "actors/daemon/write_gate.hpp"

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

}  // namespace
}  // namespace kai::daemon
