// The binder (actors/daemon/binder.hpp) against fakes of its API port (bind_api.hpp) and of the
// GPU-sharing chain's (tests/gpu_sharing/fake_sharing_api.hpp): the outcome it reports for every
// answer the API server may give, which calls it makes and which it must not make (a second bind of
// a bound pod, anything at all from a replica that lost its lease), deadlines, lane order, stop().

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "actors/daemon/binder.hpp"
#include "tests/daemon/writer_fakes.hpp"
#include "tests/gpu_sharing/fake_sharing_api.hpp"

namespace kai::daemon {
namespace {

using namespace std::chrono_literals;
using events::Outcome;
using gpu_sharing::fakes::FakeCluster;

/// The API server as the binder sees it: answers set by the test, every call recorded in order.
class FakeBindApi : public fakes::CallRecorder, public BindApi {
 public:
  /// Answers of the next binds, oldest first; ok once they run out.
  std::deque<model::Status> bind_answers;
  /// What pod_node answers per "ns/name": the node ("" = not bound); an error when absent.
  std::map<std::string, std::string> nodes;
  /// Answer of every delete.
  model::Status delete_answer = model::Status::ok();

  model::Status bind_pod(const std::string& ns, const std::string& name, const std::string& uid,
                         const std::string& node) override {
    record("bind " + ns + "/" + name + " " + uid + " " + node);
    std::lock_guard lock(answers_mu_);
    if (bind_answers.empty()) return model::Status::ok();
    model::Status s = bind_answers.front();
    bind_answers.pop_front();
    return s;
  }
  model::Result<std::string> pod_node(const std::string& ns, const std::string& name,
                                      const std::string& uid) override {
    record("pod_node " + ns + "/" + name + " " + uid);
    std::lock_guard lock(answers_mu_);
    auto it = nodes.find(ns + "/" + name);
    if (it == nodes.end()) return model::Status::error("pod " + ns + "/" + name + " not found");
    return it->second;
  }
  model::Status delete_pod(const std::string& ns, const std::string& name, const std::string& uid,
                           int64_t grace_seconds) override {
    record("delete " + ns + "/" + name + " " + uid + " grace " + std::to_string(grace_seconds));
    return delete_answer;
  }

 private:
  std::mutex answers_mu_;
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

/// A binder over the fakes, and the outcomes it reports; the binder is destroyed first, while its
/// chain and the outcomes are still there.
struct BinderOverFakes {
  BinderOverFakes(FakeBindApi& api, FakeCluster& cluster, int workers = 1, MayActFn may_act = [] { return true; },
                  BinderTiming timing = {}, std::chrono::milliseconds reservation_timeout = 5000ms)
      : chain(chain_over(cluster, reservation_timeout)),
        binder(api, chain, workers, outcomes.fn(), std::move(may_act), timing) {}

  gpu_sharing::SharingChain chain;
  Outcomes outcomes;
  Binder binder;
};

/// The one outcome of `job` run alone through a fresh binder of `workers` over `api` and `cluster`,
/// whose reservation pods may take `reservation_timeout` to report; nothing, and a failure of the
/// test, when the binder reported another number of outcomes.
std::optional<events::BinderOutcome> outcome_alone(FakeBindApi& api, FakeCluster& cluster, const BindJob& job,
                                                   BinderTiming timing = {}, int workers = 1,
                                                   std::chrono::milliseconds reservation_timeout = 5000ms) {
  BinderOverFakes rig(api, cluster, workers, [] { return true; }, timing, reservation_timeout);
  rig.binder.submit(job);
  const auto got = rig.outcomes.wait_for(1);
  rig.binder.stop();
  EXPECT_EQ(got.size(), 1u);
  if (got.size() != 1) return std::nullopt;
  return got[0];
}

/// Binds p1 to node-1 through a binder whose bind answers `answer` and whose read of the pod then
/// finds it on `found_on` ("" = not bound, nothing = an error); expects `outcome` for `reason`.
/// Answers the calls made.
std::vector<std::string> expect_bind_answered(model::Status answer, std::optional<std::string> found_on,
                                              Outcome outcome, const std::string& reason) {
  FakeBindApi api;
  api.bind_answers = {std::move(answer)};
  if (found_on) api.nodes["team-a/p1"] = *found_on;
  FakeCluster cluster;
  const auto got = outcome_alone(api, cluster, bind_job(7, "p1"));
  if (got) {  // else outcome_alone failed the test
    EXPECT_EQ(got->outcome, outcome);
    EXPECT_EQ(got->reason, reason);
  }
  return api.calls();
}

/// The one outcome of the shared bind of team-a/frac to GPU group g-1, with short polls.
std::optional<events::BinderOutcome> outcome_of_shared_frac(FakeBindApi& api, FakeCluster& cluster,
                                                            std::chrono::milliseconds reservation_timeout = 5000ms) {
  return outcome_alone(api, cluster, shared_job(5, "frac", "g-1"), kFastPolls, 1, reservation_timeout);
}

/// Fakes where team-a/frac is unbound and its reservation pods never report.
struct FracNeverReported {
  FracNeverReported() {
    api.nodes["team-a/frac"] = "";
    cluster.never_report = true;
  }
  FakeBindApi api;
  FakeCluster cluster;
};

/// Sets `api` to hold its first call, hands `binder` a bind of `name` as job 1, and waits until the
/// only worker is held in it.
bool first_bind_held(FakeBindApi& api, Binder& binder, const std::string& name) {
  api.hold_first_call = true;
  binder.submit(bind_job(1, name));
  return api.wait_held();
}

TEST(Binder, HoldsTheWriteGateFromTheFirstQueuedJobToTheLastOutcome) {
  // The deferred writers (status, Events, PodGroups) wait at the gate while a bind is queued or
  // running (actors/daemon/write_gate.hpp).
  WriteGate gate;
  FakeBindApi api;
  FakeCluster cluster;
  auto chain = chain_over(cluster);
  Outcomes outcomes;
  Binder binder(api, chain, 1, outcomes.fn(), [] { return true; }, BinderTiming{}, &gate);
  ASSERT_TRUE(first_bind_held(api, binder, "a"));
  binder.submit(bind_job(2, "b"));  // queued behind the first: the only worker is busy
  EXPECT_EQ(gate.urgent(), 2u);
  auto turn = std::async(std::launch::async, [&gate] { gate.wait_turn(); });
  EXPECT_EQ(turn.wait_for(50ms), std::future_status::timeout) << "a deferred write went while binds waited";
  api.release();
  EXPECT_EQ(turn.wait_for(5s), std::future_status::ready);
  EXPECT_EQ(outcomes.now().size(), 2u) << "the gate opened only after both outcomes";
  EXPECT_EQ(gate.urgent(), 0u);
  binder.stop();
}

TEST(Binder, ABindThatSucceedsReportsBoundToItsNode) {
  FakeBindApi api;
  FakeCluster cluster;
  const auto got = outcome_alone(api, cluster, bind_job(7, "p1"), {}, 2);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->decision_seq, 7u);
  EXPECT_EQ(got->outcome, Outcome::kBound);
  EXPECT_EQ(got->reason, "bound to node-1");
  EXPECT_EQ(api.calls(), std::vector<std::string>{"bind team-a/p1 uid-p1 node-1"});
}

TEST(Binder, AConflictOnAPodAlreadyBoundReportsItBoundWithoutASecondBind) {
  // An earlier bind whose answer was lost, or another replica's: the pod is bound elsewhere, and that
  // is where the log must say it is.
  const auto calls = expect_bind_answered(
      model::Status::error(model::Code::kConflict, "409 Conflict: pod p1 is already assigned to node \"node-2\""),
      "node-2", Outcome::kBound,
      "already bound to node-2 (the bind answered 409 Conflict: pod p1 is already assigned to node "
      "\"node-2\"); nothing of it was changed");
  EXPECT_EQ(calls, (std::vector<std::string>{"bind team-a/p1 uid-p1 node-1", "pod_node team-a/p1 uid-p1"}));
}

TEST(Binder, AConflictOnAnUnboundPodReportsBindFailedWithTheAnswer) {
  const auto calls =
      expect_bind_answered(model::Status::error(model::Code::kConflict, "409 Conflict: the uid precondition failed"),
                           "", Outcome::kBindFailed,
                           "binding to node-1 failed: 409 Conflict: the uid precondition failed");
  EXPECT_EQ(calls, (std::vector<std::string>{"bind team-a/p1 uid-p1 node-1", "pod_node team-a/p1 uid-p1"}));
}

TEST(Binder, ALostAnswerOfABindThatHappenedReportsItBound) {
  const auto calls = expect_bind_answered(
      model::Status::error(model::Code::kUnavailable, "no answer: connection reset by peer"), "node-1",
      Outcome::kBound,
      "already bound to node-1 (the bind answered no answer: connection reset by peer); nothing of it was changed");
  EXPECT_EQ(calls.size(), 2u) << "one bind, one read; no retry of the bind";
}

TEST(Binder, ATimedOutBindOfAPodThatIsNotBoundIsABindFailureNotAReservationTimeout) {
  // kReservationTimedOut is for a reservation pod that never reported (docs/gpu-sharing.md); an API
  // server that timed out on the bind itself is a failed bind.
  // pod_node answers an error: not known to be bound.
  expect_bind_answered(model::Status::error(model::Code::kTimedOut, "504 Gateway Timeout"), std::nullopt,
                       Outcome::kBindFailed, "binding to node-1 failed: 504 Gateway Timeout");
}

TEST(Binder, AJobNotStartedBeforeItsDeadlineIsCancelledWithoutACall) {
  FakeBindApi api;
  FakeCluster cluster;
  BinderOverFakes rig(api, cluster);
  ASSERT_TRUE(first_bind_held(api, rig.binder, "busy")) << "the only worker is busy with the first bind";
  BindJob late = bind_job(2, "late");
  late.deadline = std::chrono::steady_clock::now() + 20ms;
  rig.binder.submit(late);
  std::this_thread::sleep_for(60ms);
  EXPECT_EQ(rig.binder.queued(), 1u);
  api.release();
  const auto got = rig.outcomes.wait_for(2);
  rig.binder.stop();
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
  FakeCluster cluster;
  BinderOverFakes rig(api, cluster);
  ASSERT_TRUE(first_bind_held(api, rig.binder, "first"));
  rig.binder.submit(bind_job(2, "b1"));
  rig.binder.submit(bind_job(3, "b2"));
  rig.binder.submit(evict_job(4, "victim"));
  EXPECT_EQ(rig.binder.queued(), 3u);
  api.release();
  const auto got = rig.outcomes.wait_for(4);
  rig.binder.stop();
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
    const auto got = outcome_alone(api, cluster, evict_job(4, "victim"));
    ASSERT_TRUE(got);
    EXPECT_EQ(got->outcome, outcome) << answer.message();
    EXPECT_EQ(got->reason, reason);
    EXPECT_EQ(api.calls(), std::vector<std::string>{"delete team-a/victim uid-victim grace -1"})
        << "one DELETE with the pod's own grace period, never a read";
  }
}

TEST(Binder, AReplicaThatMayNotActCallsNothingAndAbandonsEveryJob) {
  FakeBindApi api;
  FakeCluster cluster;
  BinderOverFakes rig(api, cluster, 2, [] { return false; });
  rig.binder.submit(bind_job(1, "p1"));
  rig.binder.submit(evict_job(2, "victim"));
  rig.binder.submit(shared_job(3, "frac", "g-1"));
  const auto got = rig.outcomes.wait_for(3);
  rig.binder.stop();
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
  const auto got = outcome_of_shared_frac(api, cluster);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->outcome, Outcome::kBound);
  EXPECT_EQ(got->reason, "bound to node-1");
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
  const auto got = outcome_of_shared_frac(api, cluster);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->outcome, Outcome::kBound);
  EXPECT_EQ(got->reason, "already bound to node-3 (found before its GPU-sharing chain); nothing of it was changed");
  EXPECT_EQ(cluster.creates.load(), 0);
  EXPECT_TRUE(cluster.pod_labels.empty());
  EXPECT_EQ(api.calls(), std::vector<std::string>{"pod_node team-a/frac uid-frac"});
}

TEST(Binder, AFailedBindOfASharedPodRollsBackItsGroupLabel) {
  FakeBindApi api;
  api.nodes["team-a/frac"] = "";
  api.bind_answers = {model::Status::error(model::Code::kForbidden, "403 Forbidden: RuntimeClass not found")};
  FakeCluster cluster;
  const auto got = outcome_of_shared_frac(api, cluster);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->outcome, Outcome::kBindFailed);
  EXPECT_EQ(got->reason, "binding to node-1 failed: 403 Forbidden: RuntimeClass not found");
  EXPECT_EQ(cluster.pod_labels["team-a/frac"].count(model::kGpuGroupLabel), 0u);
}

TEST(Binder, ASharedBindWhoseReservationPodNeverReportsTimesOutUnbound) {
  FracNeverReported parked;
  const auto got = outcome_of_shared_frac(parked.api, parked.cluster, 50ms);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->outcome, Outcome::kReservationTimedOut);
  EXPECT_EQ(parked.cluster.reservations_on("node-1"), 0u) << "the unreported reservation pod it created goes";
  EXPECT_EQ(parked.api.calls(), std::vector<std::string>{"pod_node team-a/frac uid-frac"}) << "never bound";
}

TEST(Binder, AParkedSharedBindDoesNotHoldUpTheOtherBinds) {
  FracNeverReported parked;
  BinderOverFakes rig(parked.api, parked.cluster, 1, [] { return true; }, BinderTiming{50ms, 1000ms}, 10000ms);
  rig.binder.submit(shared_job(5, "frac", "g-1"));
  rig.binder.submit(bind_job(6, "whole"));
  const auto got = rig.outcomes.wait_for(1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].pod, "team-a/whole");
  EXPECT_EQ(got[0].outcome, Outcome::kBound);
  EXPECT_EQ(rig.binder.waiting(), 1u) << "the shared bind waits on a timer, not on the only worker";
  rig.binder.stop();
}

TEST(Binder, StopAbandonsSharedBindsWaitingForTheirReservationPods) {
  FracNeverReported parked;
  BinderOverFakes rig(parked.api, parked.cluster, 1, [] { return true; }, BinderTiming{1000ms, 1000ms}, 10000ms);
  rig.binder.submit(shared_job(5, "frac", "g-1"));
  for (int i = 0; i < 500 && rig.binder.waiting() == 0; ++i) std::this_thread::sleep_for(2ms);
  ASSERT_EQ(rig.binder.waiting(), 1u);
  EXPECT_TRUE(rig.outcomes.now().empty());
  rig.binder.stop();  // well before the 1 s poll and the 10 s reservation timeout
  const auto got = rig.outcomes.now();
  ASSERT_EQ(got.size(), 1u) << "reported by stop() itself";
  EXPECT_EQ(got[0].outcome, Outcome::kAbandoned);
  EXPECT_EQ(got[0].reason, "the scheduler stopped while the pod waited for its reservation pod; decided again");
  EXPECT_EQ(rig.binder.waiting(), 0u);
  EXPECT_EQ(parked.cluster.reservations_on("node-1"), 1u) << "kept, for the next leader to adopt";
  EXPECT_EQ(parked.api.calls(), std::vector<std::string>{"pod_node team-a/frac uid-frac"}) << "never bound";
}

}  // namespace
}  // namespace kai::daemon
