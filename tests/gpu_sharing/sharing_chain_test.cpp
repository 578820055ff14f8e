// The binder's GPU-sharing chain against an in-memory cluster that plays the reservation pods (they
// report a GPU UUID after a while, or never): reservation per group, reuse, no double reservation
// under concurrency, configmaps, labels, timeouts with rollback, unmutated pods, steps that never wait.

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <thread>

#include "actors/gpu_sharing/sharing_chain.hpp"
#include "tests/gpu_sharing/fake_sharing_api.hpp"

namespace kai::gpu_sharing {
namespace {

using namespace std::chrono_literals;
using fakes::counter_suffix;
using fakes::FakeCluster;

/// What the binder does with the chain, without its timer: steps until ready (then finishes) or
/// failed, giving up after the reservation timeout.
struct Prepared {
  model::Status status = model::Status::ok();
  std::vector<std::string> gpu_uuids;
  std::vector<std::string> created_reservations;
  int steps = 0;
};
Prepared prepare(SharingChain& chain, const SharedBind& bind) {
  Prepared out;
  ChainState state;
  const auto give_up_at = std::chrono::steady_clock::now() + chain.options().reservation_timeout;
  for (;;) {
    ++out.steps;
    StepResult r = chain.advance(bind, state);
    out.created_reservations = state.created_reservations;
    if (r.step == ChainStep::kFailed) {
      out.status = r.status;
      return out;
    }
    if (r.step == ChainStep::kReady) break;
    if (std::chrono::steady_clock::now() >= give_up_at) {
      out.status = chain.give_up(bind, state);
      return out;
    }
    std::this_thread::sleep_for(1ms);
  }
  out.gpu_uuids = state.gpu_uuids();
  out.status = chain.finish(bind, state);
  return out;
}

SharedBind fraction_pod(const std::string& name, const std::string& group, double portion) {
  SharedBind b;
  b.ns = "team-a";
  b.name = name;
  b.uid = "uid-" + name;
  b.node = "node-1";
  b.groups = {group};
  b.portion = portion;
  b.config_map_prefix = name + "-abcdefg-shared-gpu";
  b.tolerations = {model::Toleration{"dedicated", "Equal", "gpu", "NoSchedule"}};
  return b;
}

TEST(SharingChain, TwoPodsOfOneGroupShareOneReservationAndOneGpu) {
  FakeCluster cluster;
  SharingChain chain(cluster, {}, counter_suffix());
  auto a = prepare(chain, fraction_pod("vllm-a", "g-1", 0.7));
  ASSERT_TRUE(a.status.is_ok()) << a.status.message();
  auto b = prepare(chain, fraction_pod("vllm-b", "g-1", 0.2));
  ASSERT_TRUE(b.status.is_ok()) << b.status.message();
  EXPECT_EQ(cluster.creates, 1);
  ASSERT_EQ(a.gpu_uuids.size(), 1u);
  EXPECT_EQ(a.gpu_uuids, b.gpu_uuids);
  EXPECT_EQ(a.created_reservations, std::vector<std::string>{"gpu-reservation-node-1-00000"});
  EXPECT_TRUE(b.created_reservations.empty());
  const auto& spec = cluster.spec_of("gpu-reservation-node-1-00000");
  EXPECT_EQ(spec.node, "node-1");
  EXPECT_EQ(spec.group, "g-1");
  ASSERT_EQ(spec.tolerations.size(), 1u) << "the fraction pod's tolerations are the reservation's";
  EXPECT_EQ(spec.tolerations[0].key, "dedicated");

  const auto& cm = cluster.config_maps.at("team-a/vllm-a-abcdefg-shared-gpu-0");
  EXPECT_EQ(cm.owner, "vllm-a/uid-vllm-a");
  EXPECT_EQ(cm.data.at("NVIDIA_VISIBLE_DEVICES"), a.gpu_uuids[0]);
  EXPECT_EQ(cm.data.at("GPU_PORTION"), "0.7");
  EXPECT_EQ(cm.data.at("RUNAI_NUM_OF_GPUS"), "0.7");
  EXPECT_TRUE(cluster.config_maps.count("team-a/vllm-a-abcdefg-shared-gpu-0-evar"));
  EXPECT_EQ(cluster.config_maps.at("team-a/vllm-b-abcdefg-shared-gpu-0").data.at("GPU_PORTION"), "0.2");
  EXPECT_EQ(cluster.pod_labels["team-a/vllm-a"]["runai-gpu-group"], "g-1");
  EXPECT_EQ(cluster.pod_labels["team-a/vllm-b"]["runai-gpu-group"], "g-1");

  // A third pod on a new group opens a second reservation and a second GPU.
  auto c = prepare(chain, fraction_pod("vllm-c", "g-2", 0.5));
  ASSERT_TRUE(c.status.is_ok());
  EXPECT_EQ(cluster.creates, 2);
  EXPECT_NE(c.gpu_uuids, a.gpu_uuids);
}

TEST(SharingChain, ConcurrentBindsOnANewGroupCreateOneReservation) {
  FakeCluster cluster;
  cluster.report_after = 30ms;
  SharingChain chain(cluster, {}, counter_suffix());
  std::vector<std::thread> threads;
  std::vector<Prepared> results(6);
  for (int i = 0; i < 6; ++i) {
    threads.emplace_back([&, i] { results[i] = prepare(chain, fraction_pod("p" + std::to_string(i), "g-new", 0.1)); });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(cluster.creates, 1);
  for (const auto& r : results) {
    ASSERT_TRUE(r.status.is_ok()) << r.status.message();
    EXPECT_EQ(r.gpu_uuids, results[0].gpu_uuids);
  }
}

TEST(SharingChain, ReservationThatNeverReportsTimesOutCleanly) {
  FakeCluster cluster;
  cluster.never_report = true;
  ChainOptions options;
  options.reservation_timeout = 50ms;
  SharingChain chain(cluster, options, counter_suffix());
  auto r = prepare(chain, fraction_pod("p", "g-1", 0.5));
  ASSERT_FALSE(r.status.is_ok());
  EXPECT_EQ(r.status.code(), model::Code::kTimedOut) << r.status.message();
  EXPECT_NE(r.status.message().find("team-a/p"), std::string::npos);
  EXPECT_EQ(cluster.deleted, std::vector<std::string>{"gpu-reservation-node-1-00000"});
  EXPECT_EQ(cluster.reservations_on("node-1"), 0u);  // the device is free again
  EXPECT_FALSE(cluster.pod_labels["team-a/p"].count("runai-gpu-group"));
  EXPECT_TRUE(cluster.config_maps.empty());
}

TEST(SharingChain, AReservationLeftByACrashIsReusedNotDoubled) {
  FakeCluster cluster;
  cluster.add_reservation("gpu-reservation-node-1-old01", "node-1", "g-1", "");  // not yet reported
  SharingChain chain(cluster, {}, counter_suffix());
  auto r = prepare(chain, fraction_pod("p", "g-1", 0.5));
  ASSERT_TRUE(r.status.is_ok()) << r.status.message();
  EXPECT_EQ(cluster.creates, 0);
  EXPECT_EQ(cluster.reservations_on("node-1"), 1u);
}

TEST(SharingChain, UnmutatedPodStillBindsWithAWarning) {
  FakeCluster cluster;
  SharingChain chain(cluster, {}, counter_suffix());
  SharedBind b = fraction_pod("plain", "g-1", 0.5);
  b.config_map_prefix.clear();
  auto r = prepare(chain, b);
  ASSERT_TRUE(r.status.is_ok());
  EXPECT_TRUE(cluster.config_maps.empty());
  EXPECT_EQ(cluster.warnings, std::vector<std::string>{"team-a/plain GPUSharingNotConfigured"});
  EXPECT_EQ(cluster.pod_labels["team-a/plain"]["runai-gpu-group"], "g-1");
}

TEST(SharingChain, MultiDeviceFractionsGetOneLabelPerGroupAndAllUuids) {
  FakeCluster cluster;
  SharingChain chain(cluster, {}, counter_suffix());
  SharedBind b = fraction_pod("multi", "g-1", 0.25);
  b.groups = {"g-1", "g-2"};
  b.container_suffix = "i1";
  auto r = prepare(chain, b);
  ASSERT_TRUE(r.status.is_ok());
  ASSERT_EQ(r.gpu_uuids.size(), 2u);
  EXPECT_EQ(cluster.pod_labels["team-a/multi"]["runai-gpu-group/g-1"], "g-1");
  EXPECT_EQ(cluster.pod_labels["team-a/multi"]["runai-gpu-group/g-2"], "g-2");
  EXPECT_FALSE(cluster.pod_labels["team-a/multi"].count("runai-gpu-group"));
  EXPECT_EQ(cluster.config_maps.at("team-a/multi-abcdefg-shared-gpu-i1").data.at("NVIDIA_VISIBLE_DEVICES"),
            r.gpu_uuids[0] + "," + r.gpu_uuids[1]);
}

TEST(SharingChain, ConfigMapFailureRollsBackTheLabels) {
  FakeCluster cluster;
  cluster.fail_config_maps = true;
  SharingChain chain(cluster, {}, counter_suffix());
  auto r = prepare(chain, fraction_pod("p", "g-1", 0.5));
  ASSERT_FALSE(r.status.is_ok());
  EXPECT_NE(r.status.message().find("configmaps"), std::string::npos);
  EXPECT_FALSE(cluster.pod_labels["team-a/p"].count("runai-gpu-group"));
}

TEST(SharingChain, AStepNeverWaitsForAReservationPod) {
  FakeCluster cluster;
  cluster.never_report = true;
  SharingChain chain(cluster, {}, counter_suffix());  // a 40 s reservation timeout
  ChainState state;
  const SharedBind bind = fraction_pod("p", "g-1", 0.5);
  const auto t0 = std::chrono::steady_clock::now();
  StepResult r = chain.advance(bind, state);
  EXPECT_EQ(r.step, ChainStep::kWaiting);
  r = chain.advance(bind, state);
  EXPECT_EQ(r.step, ChainStep::kWaiting);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 1s) << "advance() read once, it did not wait";
  EXPECT_EQ(cluster.creates, 1) << "the second step reads the reservation pod the first created";
  EXPECT_EQ(cluster.reads, 2);
  EXPECT_TRUE(cluster.pod_labels["team-a/p"].empty()) << "nothing is written to the pod before its GPU is known";

  // The binder's timer ran out: the stuck reservation pod goes, with a timed-out code.
  const model::Status s = chain.give_up(bind, state);
  EXPECT_EQ(s.code(), model::Code::kTimedOut);
  EXPECT_NE(s.message().find("gpu-reservation-node-1-00000"), std::string::npos) << s.message();
  EXPECT_EQ(cluster.reservations_on("node-1"), 0u);
}

TEST(SharingChain, AnApiServerThatDoesNotAnswerIsWaitedForAndAGoneReservationFails) {
  FakeCluster cluster;
  cluster.never_report = true;
  SharingChain chain(cluster, {}, counter_suffix());
  ChainState state;
  const SharedBind bind = fraction_pod("p", "g-1", 0.5);
  ASSERT_EQ(chain.advance(bind, state).step, ChainStep::kWaiting);
  cluster.api_down = true;
  EXPECT_EQ(chain.advance(bind, state).step, ChainStep::kWaiting) << "unavailable is worth another read";
  cluster.api_down = false;
  cluster.remove("gpu-reservation-node-1-00000");
  StepResult r = chain.advance(bind, state);
  EXPECT_EQ(r.step, ChainStep::kFailed);
  EXPECT_EQ(r.status.code(), model::Code::kNotFound);
  EXPECT_NE(r.status.message().find("team-a/p"), std::string::npos) << r.status.message();
}

TEST(SharingChain, ATerminatingOrOtherNodesReservationIsNotUsed) {
  FakeCluster cluster;
  cluster.add_reservation("r-elsewhere", "node-2", "g-1", "GPU-9");
  SharingChain chain(cluster, {}, counter_suffix());
  auto r = prepare(chain, fraction_pod("p", "g-1", 0.5));
  ASSERT_TRUE(r.status.is_ok()) << r.status.message();
  EXPECT_EQ(cluster.creates, 1);
  ASSERT_EQ(r.gpu_uuids.size(), 1u);
  EXPECT_NE(r.gpu_uuids[0], "GPU-9");
}

TEST(SharingChain, NamesAndPortions) {
  FakeCluster cluster;
  SharingChain chain(cluster, {}, [] { return std::string("x7k2q"); });
  EXPECT_EQ(chain.reservation_name("node-1"), "gpu-reservation-node-1-x7k2q");
  EXPECT_EQ(chain.reservation_name("Node_A.example"), "gpu-reservation-node-a.example-x7k2q");
  EXPECT_LE(chain.reservation_name(std::string(300, 'n')).size(), 253u);
  EXPECT_EQ(SharingChain::format_portion(0.7), "0.7");
  EXPECT_EQ(SharingChain::format_portion(0.25), "0.25");
  EXPECT_EQ(SharingChain::format_portion(1), "1");
  EXPECT_EQ(SharingChain::format_portion(0.1 + 0.2), "0.30000000000000004");
}

}  // namespace
}  // namespace kai::gpu_sharing
