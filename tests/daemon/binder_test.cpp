// The binder (actors/daemon/binder.hpp) against fakes of its API port (bind_api.hpp) and of the
// GPU-sharing chain's (tests/gpu_sharing/fake_sharing_api.hpp): the outcome it reports for every
// answer the API server may give, which calls it makes and which it must not make (a second bind of
// a bound pod, anything at all from a replica that lost its lease), deadlines, lane order, stop().

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "actors/daemon/binder.hpp"
#include "tests/gpu_sharing/fake_sharing_api.hpp"

namespace kai::daemon {
namespace {

using namespace std::chrono_literals;
using events::Outcome;
using gpu_sharing::fakes::FakeCluster;

/// The API server as the binder sees it: answers set by the test, every call recorded in order.
class FakeBindApi : public BindApi {
 public:
  /// Answers of the next binds, oldest first; ok once they run out.
  std::deque<model::Status> bind_answers;
  /// What pod_node answers per "ns/name": the node ("" = not bound); an error when absent.
  std::map<std::string, std::string> nodes;
  /// Answer of every delete.
  model::Status delete_answer = model::Status::ok();
  /// When set, the first call waits here until release() (to hold the only worker busy).
  bool hold_first_call = false;

  model::Status bind_pod(const std::string& ns, const std::string& name, const std::string& uid,
                         const std::string& node) override {
    called("bind " + ns + "/" + name + " " + uid + " " + node);
    std::lock_guard lock(mu_);
    if (bind_answers.empty()) return model::Status::ok();
    model::Status s = bind_answers.front();
    bind_answers.pop_front();
    return s;
  }
  model::Result<std::string> pod_node(const std::string& ns, const std::string& name,
                                      const std::string& uid) override {
    called("pod_node " + ns + "/" + name + " " + uid);
    std::lock_guard lock(mu_);
    auto it = nodes.find(ns + "/" + name);
    if (it == nodes.end()) return model::Status::error("pod " + ns + "/" + name + " not found");
    return it->second;
  }
  model::Status delete_pod(const std::string& ns, const std::string& name, const std::string& uid,
                           int64_t grace_seconds) override {
    called("delete " + ns + "/" + name + " " + uid + " grace " + std::to_string(grace_seconds));
    return delete_answer;
  }

  std::vector<std::string> calls() {
    std::lock_guard lock(mu_);
    return calls_;
  }
  /// Waits until the held first call has begun.
  bool wait_held() {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, 5s, [&] { return holding_; });
  }
  void release() {
    {
      std::lock_guard lock(mu_);
      released_ = true;
    }
    cv_.notify_all();
  }

 private:
  void called(std::string call) {
    std::unique_lock lock(mu_);
    calls_.push_back(std::move(call));
    if (hold_first_call && calls_.size() == 1) {
      holding_ = true;
      cv_.notify_all();
      cv_.wait(lock, [&] { return released_; });
    }
  }
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::string> calls_;
  bool holding_ = false;
  bool released_ = false;
};

/// The outcomes the binder reports, from its worker threads.
class Outcomes {
 public:
  OutcomeFn fn() {
    return [this](const BindJob& job, events::BinderOutcome o) {
      {
        std::lock_guard lock(mu_);
        EXPECT_EQ(o.decision_seq, job.log_seq);
        EXPECT_EQ(o.pod, job.decision.pod);
        got_.push_back(std::move(o));
      }
      cv_.notify_all();
    };
  }
  /// The first `n` outcomes, in report order; fails the test when they do not come within 10 s.
  std::vector<events::BinderOutcome> wait_for(size_t n) {
    std::unique_lock lock(mu_);
    EXPECT_TRUE(cv_.wait_for(lock, 10s, [&] { return got_.size() >= n; }))
        << "only " << got_.size() << " of " << n << " outcomes";
    return got_;
  }
  std::vector<events::BinderOutcome> now() {
    std::lock_guard lock(mu_);
    return got_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<events::BinderOutcome> got_;
};

BindJob bind_job(uint64_t seq, const std::string& name, const std::string& node = "node-1") {
  BindJob j;
  j.log_seq = seq;
  j.decision.action = "allocate";
  j.decision.kind = events::DecisionKind::kBind;
  j.decision.pod = "team-a/" + name;
  j.decision.pod_uid = "uid-" + name;
  j.decision.node = node;
  return j;
}

BindJob evict_job(uint64_t seq, const std::string& name) {
  BindJob j = bind_job(seq, name);
  j.decision.action = "reclaim";
  j.decision.kind = events::DecisionKind::kEvict;
  return j;
}

BindJob shared_job(uint64_t seq, const std::string& name, const std::string& group) {
  BindJob j = bind_job(seq, name);
  j.decision.gpu_groups = {group};
  j.decision.gpu_fraction = 0.5;
  j.config_map_prefix = name + "-shared-gpu";
  return j;
}

/// A chain over `cluster` whose reservation pods may take `timeout` to report.
gpu_sharing::SharingChain chain_over(FakeCluster& cluster, std::chrono::milliseconds timeout = 5000ms) {
  gpu_sharing::ChainOptions options;
  options.reservation_timeout = timeout;
  return gpu_sharing::SharingChain(cluster, options, gpu_sharing::fakes::counter_suffix());
}

/// Short reservation polls, so that shared binds finish fast.
constexpr BinderTiming kFastPolls{1ms, 5ms};

TEST(Binder, ABindThatSucceedsReportsBoundToItsNode) {
  FakeBindApi api;
  FakeCluster cluster;
  auto chain = chain_over(cluster);
  Outcomes outcomes;
  Binder binder(api, chain, 2, outcomes.fn());
  binder.submit(bind_job(7, "p1"));
  const auto got = outcomes.wait_for(1);
  binder.stop();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].decision_seq, 7u);
  EXPECT_EQ(got[0].outcome, Outcome::kBound);
  EXPECT_EQ(got[0].reason, "bound to node-1");
  EXPECT_EQ(api.calls(), std::vector<std::string>{"bind team-a/p1 uid-p1 node-1"});
}

TEST(Binder, AConflictOnAPodAlreadyBoundReportsItBoundWithoutASecondBind) {
  // An earlier bind whose answer was lost, or another replica's: the pod is bound elsewhere, and that
  // is where the log must say it is.
  FakeBindApi api;
  api.bind_answers = {model::Status::error(model::Code::kConflict,
                                           "409 Conflict: pod p1 is already assigned to node \"node-2\"")};
  api.nodes["team-a/p1"] = "node-2";
  FakeCluster cluster;
  auto chain = chain_over(cluster);
  Outcomes outcomes;
  Binder binder(api, chain, 1, outcomes.fn());
  binder.submit(bind_job(7, "p1"));
  const auto got = outcomes.wait_for(1);
  binder.stop();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].outcome, Outcome::kBound);
  EXPECT_EQ(got[0].reason,
            "already bound to node-2 (the bind answered 409 Conflict: pod p1 is already assigned to node "
            "\"node-2\"); nothing of it was changed");
  EXPECT_EQ(api.calls(), (std::vector<std::string>{"bind team-a/p1 uid-p1 node-1", "pod_node team-a/p1 uid-p1"}));
}

TEST(Binder, AConflictOnAnUnboundPodReportsBindFailedWithTheAnswer) {
  FakeBindApi api;
  api.bind_answers = {model::Status::error(model::Code::kConflict, "409 Conflict: the uid precondition failed")};
  api.nodes["team-a/p1"] = "";
  FakeCluster cluster;
  auto chain = chain_over(cluster);
  Outcomes outcomes;
  Binder binder(api, chain, 1, outcomes.fn());
  binder.submit(bind_job(7, "p1"));
  const auto got = outcomes.wait_for(1);
  binder.stop();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].outcome, Outcome::kBindFailed);
  EXPECT_EQ(got[0].reason, "binding to node-1 failed: 409 Conflict: the uid precondition failed");
  EXPECT_EQ(api.calls(), (std::vector<std::string>{"bind team-a/p1 uid-p1 node-1", "pod_node team-a/p1 uid-p1"}));
}

TEST(Binder, ALostAnswerOfABindThatHappenedReportsItBound) {
  FakeBindApi api;
  api.bind_answers = {model::Status::error(model::Code::kUnavailable, "no answer: connection reset by peer")};
  api.nodes["team-a/p1"] = "node-1";
  FakeCluster cluster;
  auto chain = chain_over(cluster);
  Outcomes outcomes;
  Binder binder(api, chain, 1, outcomes.fn());
  binder.submit(bind_job(7, "p1"));
  const auto got = outcomes.wait_for(1);
  binder.stop();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].outcome, Outcome::kBound);
  EXPECT_EQ(got[0].reason,
            "already bound to node-1 (the bind answered no answer: connection reset by peer); nothing of it was "
            "changed");
  EXPECT_EQ(api.calls().size(), 2u) << "one bind, one read; no retry of the bind";
}

TEST(Binder, ATimedOutBindOfAPodThatIsNotBoundIsABindFailureNotAReservationTimeout) {
  // kReservationTimedOut is for a reservation pod that never reported (docs/gpu-sharing.md); an API
  // server that timed out on the bind itself is a failed bind.
  FakeBindApi api;
  api.bind_answers = {model::Status::error(model::Code::kTimedOut, "504 Gateway Timeout")};
  FakeCluster cluster;
  auto chain = chain_over(cluster);
  Outcomes outcomes;
  Binder binder(api, chain, 1, outcomes.fn());
  binder.submit(bind_job(7, "p1"));  // pod_node answers an error: not known to be bound
  const auto got = outcomes.wait_for(1);
  binder.stop();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].outcome, Outcome::kBindFailed);
  EXPECT_EQ(got[0].reason, "binding to node-1 failed: 504 Gateway Timeout");
}

TEST(Binder, AJobNotStartedBeforeItsDeadlineIsCancelledWithoutACall) {
  FakeBindApi api;
  api.hold_first_call = true;
  FakeCluster cluster;
  auto chain = chain_over(cluster);
  Outcomes outcomes;
  Binder binder(api, chain, 1, outcomes.fn());
  binder.submit(bind_job(1, "busy"));
  ASSERT_TRUE(api.wait_held()) << "the only worker is busy with the first bind";
  BindJob late = bind_job(2, "late");
  late.deadline = std::chrono::steady_clock::now() + 20ms;
  binder.submit(late);
  std::this_thread::sleep_for(60ms);
  EXPECT_EQ(binder.queued(), 1u);
  api.release();
  const auto got = outcomes.wait_for(2);
  binder.stop();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].pod, "team-a/busy");
  EXPECT_EQ(got[0].outcome, Outcome::kBound);
  EXPECT_EQ(got[1].pod, "team-a/late");
  EXPECT_EQ(got[1].outcome, Outcome::kCancelled);
  EXPECT_EQ(got[1].reason,
            "not started before its deadline (the binder was busy or the API server slow); decided again");
  EXPECT_EQ(api.calls(), std::vector<std::string>{"bind team-a/busy uid-busy node-1"})
      << "the cancelled job made no call";
}

TEST(Binder, EvictionsAreServedBeforeBindsQueuedEarlier) {
  FakeBindApi api;
  api.hold_first_call = true;
  FakeCluster cluster;
  auto chain = chain_over(cluster);
  Outcomes outcomes;
  Binder binder(api, chain, 1, outcomes.fn());
  binder.submit(bind_job(1, "first"));
  ASSERT_TRUE(api.wait_held());
  binder.submit(bind_job(2, "b1"));
  binder.submit(bind_job(3, "b2"));
  binder.submit(evict_job(4, "victim"));
  EXPECT_EQ(binder.queued(), 3u);
  api.release();
  const auto got = outcomes.wait_for(4);
  binder.stop();
  EXPECT_EQ(api.calls(), (std::vector<std::string>{"bind team-a/first uid-first node-1",
                                                   "delete team-a/victim uid-victim grace -1",
                                                   "bind team-a/b1 uid-b1 node-1", "bind team-a/b2 uid-b2 node-1"}));
  ASSERT_EQ(got.size(), 4u);
  EXPECT_EQ(got[1].pod, "team-a/victim");
  EXPECT_EQ(got[1].outcome, Outcome::kBound);
  EXPECT_EQ(got[1].reason, "evicted");
}

TEST(Binder, AnEvictionOfAPodGoneOrReplacedIsDoneAndARefusedOneFails) {
  for (const auto& [answer, outcome, reason] :
       std::vector<std::tuple<model::Status, Outcome, std::string>>{
           {model::Status::error(model::Code::kNotFound, "404 NotFound: pods \"victim\" not found"), Outcome::kBound,
            "already gone (404 NotFound: pods \"victim\" not found)"},
           {model::Status::error(model::Code::kConflict, "409 Conflict: the uid precondition failed"),
            Outcome::kBound, "already gone (409 Conflict: the uid precondition failed)"},
           {model::Status::error(model::Code::kForbidden, "403 Forbidden: no"), Outcome::kBindFailed,
            "eviction failed: 403 Forbidden: no"}}) {
    FakeBindApi api;
    api.delete_answer = answer;
    FakeCluster cluster;
    auto chain = chain_over(cluster);
    Outcomes outcomes;
    Binder binder(api, chain, 1, outcomes.fn());
    binder.submit(evict_job(4, "victim"));
    const auto got = outcomes.wait_for(1);
    binder.stop();
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].outcome, outcome) << answer.message();
    EXPECT_EQ(got[0].reason, reason);
    EXPECT_EQ(api.calls(), std::vector<std::string>{"delete team-a/victim uid-victim grace -1"})
        << "one DELETE with the pod's own grace period, never a read";
  }
}

TEST(Binder, AReplicaThatMayNotActCallsNothingAndAbandonsEveryJob) {
  FakeBindApi api;
  FakeCluster cluster;
  auto chain = chain_over(cluster);
  Outcomes outcomes;
  Binder binder(api, chain, 2, outcomes.fn(), [] { return false; });
  binder.submit(bind_job(1, "p1"));
  binder.submit(evict_job(2, "victim"));
  binder.submit(shared_job(3, "frac", "g-1"));
  const auto got = outcomes.wait_for(3);
  binder.stop();
  ASSERT_EQ(got.size(), 3u);
  for (const auto& o : got) {
    EXPECT_EQ(o.outcome, Outcome::kAbandoned) << o.pod;
    EXPECT_EQ(o.reason, "this replica is no longer the leader; the new leader decides again") << o.pod;
  }
  EXPECT_TRUE(api.calls().empty());
  EXPECT_EQ(cluster.creates.load(), 0) << "no reservation pod either";
}

TEST(Binder, ASharedBindRunsItsChainThenBindsThePod) {
  FakeBindApi api;
  api.nodes["team-a/frac"] = "";  // not bound yet
  FakeCluster cluster;
  auto chain = chain_over(cluster);
  Outcomes outcomes;
  Binder binder(api, chain, 1, outcomes.fn(), [] { return true; }, kFastPolls);
  binder.submit(shared_job(5, "frac", "g-1"));
  const auto got = outcomes.wait_for(1);
  binder.stop();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].outcome, Outcome::kBound);
  EXPECT_EQ(got[0].reason, "bound to node-1");
  EXPECT_EQ(cluster.reservations_on("node-1"), 1u);
  EXPECT_EQ(cluster.pod_labels["team-a/frac"][model::kGpuGroupLabel], "g-1");
  ASSERT_EQ(cluster.config_maps.count("team-a/frac-shared-gpu-0"), 1u);
  EXPECT_EQ(cluster.config_maps.at("team-a/frac-shared-gpu-0").data.at("NVIDIA_VISIBLE_DEVICES"), "GPU-node-1-0");
  EXPECT_EQ(api.calls(), (std::vector<std::string>{"pod_node team-a/frac uid-frac", "bind team-a/frac uid-frac node-1"}))
      << "read once before the chain (a bound pod keeps its GPU), then bound";
}

TEST(Binder, ASharedPodFoundBoundBeforeItsChainIsReportedBoundAndLeftAlone) {
  FakeBindApi api;
  api.nodes["team-a/frac"] = "node-3";
  FakeCluster cluster;
  auto chain = chain_over(cluster);
  Outcomes outcomes;
  Binder binder(api, chain, 1, outcomes.fn(), [] { return true; }, kFastPolls);
  binder.submit(shared_job(5, "frac", "g-1"));
  const auto got = outcomes.wait_for(1);
  binder.stop();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].outcome, Outcome::kBound);
  EXPECT_EQ(got[0].reason, "already bound to node-3 (found before its GPU-sharing chain); nothing of it was changed");
  EXPECT_EQ(cluster.creates.load(), 0);
  EXPECT_TRUE(cluster.pod_labels.empty());
  EXPECT_EQ(api.calls(), std::vector<std::string>{"pod_node team-a/frac uid-frac"});
}

TEST(Binder, AFailedBindOfASharedPodRollsBackItsGroupLabel) {
  FakeBindApi api;
  api.nodes["team-a/frac"] = "";
  api.bind_answers = {model::Status::error(model::Code::kForbidden, "403 Forbidden: RuntimeClass not found")};
  FakeCluster cluster;
  auto chain = chain_over(cluster);
  Outcomes outcomes;
  Binder binder(api, chain, 1, outcomes.fn(), [] { return true; }, kFastPolls);
  binder.submit(shared_job(5, "frac", "g-1"));
  const auto got = outcomes.wait_for(1);
  binder.stop();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].outcome, Outcome::kBindFailed);
  EXPECT_EQ(got[0].reason, "binding to node-1 failed: 403 Forbidden: RuntimeClass not found");
  EXPECT_EQ(cluster.pod_labels["team-a/frac"].count(model::kGpuGroupLabel), 0u);
}

TEST(Binder, ASharedBindWhoseReservationPodNeverReportsTimesOutUnbound) {
  FakeBindApi api;
  api.nodes["team-a/frac"] = "";
  FakeCluster cluster;
  cluster.never_report = true;
  auto chain = chain_over(cluster, 50ms);
  Outcomes outcomes;
  Binder binder(api, chain, 1, outcomes.fn(), [] { return true; }, kFastPolls);
  binder.submit(shared_job(5, "frac", "g-1"));
  const auto got = outcomes.wait_for(1);
  binder.stop();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].outcome, Outcome::kReservationTimedOut);
  EXPECT_EQ(cluster.reservations_on("node-1"), 0u) << "the unreported reservation pod it created goes";
  EXPECT_EQ(api.calls(), std::vector<std::string>{"pod_node team-a/frac uid-frac"}) << "never bound";
}

TEST(Binder, AParkedSharedBindDoesNotHoldUpTheOtherBinds) {
  FakeBindApi api;
  api.nodes["team-a/frac"] = "";
  FakeCluster cluster;
  cluster.never_report = true;
  auto chain = chain_over(cluster, 10000ms);
  Outcomes outcomes;
  Binder binder(api, chain, 1, outcomes.fn(), [] { return true; }, BinderTiming{50ms, 1000ms});
  binder.submit(shared_job(5, "frac", "g-1"));
  binder.submit(bind_job(6, "whole"));
  const auto got = outcomes.wait_for(1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].pod, "team-a/whole");
  EXPECT_EQ(got[0].outcome, Outcome::kBound);
  EXPECT_EQ(binder.waiting(), 1u) << "the shared bind waits on a timer, not on the only worker";
  binder.stop();
}

TEST(Binder, StopAbandonsSharedBindsWaitingForTheirReservationPods) {
  FakeBindApi api;
  api.nodes["team-a/frac"] = "";
  FakeCluster cluster;
  cluster.never_report = true;
  auto chain = chain_over(cluster, 10000ms);
  Outcomes outcomes;
  Binder binder(api, chain, 1, outcomes.fn(), [] { return true; }, BinderTiming{1000ms, 1000ms});
  binder.submit(shared_job(5, "frac", "g-1"));
  for (int i = 0; i < 500 && binder.waiting() == 0; ++i) std::this_thread::sleep_for(2ms);
  ASSERT_EQ(binder.waiting(), 1u);
  EXPECT_TRUE(outcomes.now().empty());
  binder.stop();  // well before the 1 s poll and the 10 s reservation timeout
  const auto got = outcomes.now();
  ASSERT_EQ(got.size(), 1u) << "reported by stop() itself";
  EXPECT_EQ(got[0].outcome, Outcome::kAbandoned);
  EXPECT_EQ(got[0].reason, "the scheduler stopped while the pod waited for its reservation pod; decided again");
  EXPECT_EQ(binder.waiting(), 0u);
  EXPECT_EQ(cluster.reservations_on("node-1"), 1u) << "kept, for the next leader to adopt";
  EXPECT_EQ(api.calls(), std::vector<std::string>{"pod_node team-a/frac uid-frac"}) << "never bound";
}

}  // namespace
}  // namespace kai::daemon
