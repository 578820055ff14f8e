// The status writer (actors/daemon/status_writer.hpp) against a fake of its port (status_api.hpp):
// what users read with kubectl is written when it changes and only then, one Scheduled event per
// bound pod, after the other writes, and a flood drops the oldest writes instead of growing a queue.

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "actors/daemon/status_writer.hpp"
#include "tests/daemon/writer_fakes.hpp"

namespace kai::daemon {
namespace {

using namespace std::chrono_literals;

/// Records every write as one line; can hold the writer's thread in its first write.
class FakeStatusApi : public fakes::CallRecorder, public StatusApi {
 public:
  model::Status set_pod_condition(const std::string& ns, const std::string& name, const std::string& type,
                                  const std::string& status, const std::string& reason,
                                  const std::string& message) override {
    record("condition " + ns + "/" + name + " " + type + "=" + status + " " + reason + ": " + message);
    return model::Status::ok();
  }
  model::Status create_event(const EventNote& e) override {
    record("event " + e.ns + "/" + e.name + " " + e.uid + " " + e.type + " " + e.reason + " " + e.action + ": " +
           e.note);
    EXPECT_EQ(e.kind, "Pod");
    EXPECT_EQ(e.api_version, "v1");
    return model::Status::ok();
  }
};

// A pending pod's condition and its event count as one write.
using fakes::wait_written;

PendingPod pending(const std::string& name, const std::string& message, const std::string& reason = "Unschedulable") {
  PendingPod p;
  p.pod = "team-a/" + name;
  p.uid = "uid-" + name;
  p.group = "team-a/pg-" + name;
  p.message = message;
  p.reason = reason;
  return p;
}

CycleOutput cycle_with(std::vector<PendingPod> pods) {
  CycleOutput out;
  out.pending = std::move(pods);
  return out;
}

/// Hands `writer` a cycle with `pods` pending and waits until it has made `n` writes in all.
bool cycle_written(StatusWriter& writer, std::vector<PendingPod> pods, uint64_t n) {
  writer.after_cycle(cycle_with(std::move(pods)));
  return wait_written(writer, n);
}

/// Sets `api` to hold its first call, hands `writer` a cycle with `name` pending for want of a GPU,
/// and waits until it holds it.
bool first_write_held(FakeStatusApi& api, StatusWriter& writer, const std::string& name) {
  api.hold_first_call = true;
  writer.after_cycle(cycle_with({pending(name, "no GPU")}));
  return api.wait_held();
}

std::string condition(const std::string& name, const std::string& message, const std::string& reason = "Unschedulable") {
  return "condition team-a/" + name + " PodScheduled=False " + reason + ": " + message;
}
std::string warning(const std::string& name, const std::string& message, const std::string& reason = "Unschedulable") {
  return "event team-a/" + name + " uid-" + name + " Warning " + reason + " Scheduling: " + message;
}
std::string scheduled(const std::string& name, const std::string& node) {
  return "event team-a/" + name + " uid-" + name + " Normal Scheduled Binding: Successfully assigned team-a/" + name +
         " to " + node;
}

TEST(StatusWriter, APendingPodsConditionIsWrittenOnceAndNotAgainForTheSameReasons) {
  FakeStatusApi api;
  StatusWriter writer(api);
  ASSERT_TRUE(cycle_written(writer, {pending("p1", "0/4 nodes have a free GPU")}, 1));
  writer.after_cycle(cycle_with({pending("p1", "0/4 nodes have a free GPU")}));
  writer.after_cycle(cycle_with({pending("p1", "0/4 nodes have a free GPU")}));
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(writer.written(), 1u);
  writer.stop();
  EXPECT_EQ(api.calls(), (std::vector<std::string>{condition("p1", "0/4 nodes have a free GPU"),
                                                   warning("p1", "0/4 nodes have a free GPU")}));
}

TEST(StatusWriter, ChangedReasonsAreWrittenAgain) {
  FakeStatusApi api;
  StatusWriter writer(api);
  ASSERT_TRUE(cycle_written(writer, {pending("p1", "0/4 nodes have a free GPU")}, 1));
  ASSERT_TRUE(cycle_written(writer, {pending("p1", "queue q1 is over its limit")}, 2));
  // The same message under another reason (a group backing off after failed binds) is a change too.
  ASSERT_TRUE(cycle_written(writer, {pending("p1", "queue q1 is over its limit", "BindingError")}, 3));
  writer.stop();
  EXPECT_EQ(api.calls(), (std::vector<std::string>{
                             condition("p1", "0/4 nodes have a free GPU"), warning("p1", "0/4 nodes have a free GPU"),
                             condition("p1", "queue q1 is over its limit"), warning("p1", "queue q1 is over its limit"),
                             condition("p1", "queue q1 is over its limit", "BindingError"),
                             warning("p1", "queue q1 is over its limit", "BindingError")}));
}

TEST(StatusWriter, APodPendingAgainAfterACycleWithoutItIsWrittenAgain) {
  // A pod that stopped being pending (it was bound, or its group was decided) may have had its
  // condition replaced since: the writer forgets it and writes the same reasons again.
  FakeStatusApi api;
  StatusWriter writer(api);
  ASSERT_TRUE(cycle_written(writer, {pending("p1", "no GPU")}, 1));
  writer.after_cycle(cycle_with({}));
  ASSERT_TRUE(cycle_written(writer, {pending("p1", "no GPU")}, 2));
  writer.stop();
  EXPECT_EQ(api.calls().size(), 4u);
}

TEST(StatusWriter, APodWhoseConditionAlreadyShowsTheReasonsIsNotWrittenUntilTheyChange) {
  // After a restart the pod carries the condition the last run wrote: writing it again (and another
  // Warning event) would be a write per pending pod for nothing.
  FakeStatusApi api;
  StatusWriter writer(api);
  PendingPod shown = pending("p1", "no GPU");
  shown.shown = true;
  writer.after_cycle(cycle_with({shown}));
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(writer.written(), 0u);
  ASSERT_TRUE(cycle_written(writer, {pending("p1", "queue q1 is over its limit")}, 1));
  writer.stop();
  EXPECT_EQ(api.calls(), (std::vector<std::string>{condition("p1", "queue q1 is over its limit"),
                                                   warning("p1", "queue q1 is over its limit")}));
}

TEST(StatusWriter, APodGroupThatSaysMarkUnschedulableFalseGetsTheEventWithoutTheCondition) {
  // KAI's status updater: the Warning event always, the PodScheduled condition only when the
  // PodGroup's markUnschedulable is not false (cycle.hpp PendingPod::mark_condition).
  FakeStatusApi api;
  StatusWriter writer(api);
  PendingPod unmarked = pending("p1", "no GPU");
  unmarked.mark_condition = false;
  ASSERT_TRUE(cycle_written(writer, {unmarked, pending("p2", "no GPU")}, 2));
  writer.stop();
  EXPECT_EQ(api.calls(), (std::vector<std::string>{warning("p1", "no GPU"), condition("p2", "no GPU"),
                                                   warning("p2", "no GPU")}));
}

TEST(StatusWriter, AnEvictionIsAnEvictEventWithItsReasonOrWhoEvicted) {
  FakeStatusApi api;
  StatusWriter writer(api);
  CycleOutput out;
  events::Decision bind;
  bind.kind = events::DecisionKind::kBind;
  bind.pod = "team-a/new";
  out.decisions.push_back(bind);
  events::Decision evict;
  evict.kind = events::DecisionKind::kEvict;
  evict.action = "reclaim";
  evict.pod = "team-b/victim";
  evict.pod_uid = "uid-victim";
  evict.by = "team-a/pg";
  out.decisions.push_back(evict);
  evict.pod = "team-b/other";
  evict.pod_uid = "uid-other";
  evict.reason = "Pod team-b/other was preempted by higher priority pod team-a/p";
  out.decisions.push_back(evict);
  writer.after_cycle(out);
  ASSERT_TRUE(wait_written(writer, 2));
  writer.stop();
  EXPECT_EQ(api.calls(),
            (std::vector<std::string>{
                "event team-b/victim uid-victim Normal Evict Evicting: Evicted by reclaim for team-a/pg",
                "event team-b/other uid-other Normal Evict Evicting: Pod team-b/other was preempted by higher "
                "priority pod team-a/p"}))
      << "a bind decision writes nothing: its Scheduled event waits for the bind";
}

TEST(StatusWriter, ABoundPodGetsOneScheduledEventAfterTheOtherWrites) {
  FakeStatusApi api;
  StatusWriter writer(api);
  ASSERT_TRUE(first_write_held(api, writer, "first"));
  // Reported twice (a bind whose answer was lost, then found bound): one event, where it is bound.
  writer.pod_bound("team-a/p1", "uid-p1", "node-1");
  writer.pod_bound("team-a/p2", "uid-p2", "node-2");
  writer.pod_bound("team-a/p1", "uid-p1", "node-3");
  writer.after_cycle(cycle_with({pending("first", "no GPU"), pending("second", "no GPU")}));
  api.release();
  ASSERT_TRUE(wait_written(writer, 4));
  std::this_thread::sleep_for(30ms);
  EXPECT_EQ(writer.written(), 4u);
  writer.stop();
  EXPECT_EQ(api.calls(), (std::vector<std::string>{condition("first", "no GPU"), warning("first", "no GPU"),
                                                   condition("second", "no GPU"), warning("second", "no GPU"),
                                                   scheduled("p1", "node-3"), scheduled("p2", "node-2")}));
}

TEST(StatusWriter, AFloodDropsTheOldestWritesBeyondTheQueueBound) {
  FakeStatusApi api;
  StatusWriter writer(api, 2);
  ASSERT_TRUE(first_write_held(api, writer, "p0"));
  writer.after_cycle(cycle_with({pending("p0", "no GPU"), pending("p1", "no GPU"), pending("p2", "no GPU"),
                                 pending("p3", "no GPU")}));
  writer.pod_bound("team-a/b1", "uid-b1", "node-1");
  writer.pod_bound("team-a/b2", "uid-b2", "node-1");
  writer.pod_bound("team-a/b3", "uid-b3", "node-1");
  api.release();
  ASSERT_TRUE(wait_written(writer, 5));
  std::this_thread::sleep_for(30ms);
  EXPECT_EQ(writer.written(), 5u);
  writer.stop();
  EXPECT_EQ(api.calls(),
            (std::vector<std::string>{condition("p0", "no GPU"), warning("p0", "no GPU"), condition("p2", "no GPU"),
                                      warning("p2", "no GPU"), condition("p3", "no GPU"), warning("p3", "no GPU"),
                                      scheduled("b2", "node-1"), scheduled("b3", "node-1")}))
      << "p1 and b1, the oldest beyond the bound of 2, gave way";
}

}  // namespace
}  // namespace kai::daemon
