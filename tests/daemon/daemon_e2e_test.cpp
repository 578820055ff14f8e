// kai-scheduler end to end against kai-apiserver over verified HTTPS: whole-GPU pods, gangs (all or
// nothing, Unschedulable reported until they fit), GPU sharing placement, reclaim between queues,
// preemption by priority, pods of other schedulers, API faults, and bad input in the cluster.

#include <set>

#include "actors/daemon/daemon.hpp"
#include "tests/daemon/cluster_fixture.hpp"

namespace kai::e2e {
namespace {

// DaemonTest::TearDown ends every test here with expect_replay_matches on the daemon's log.
class DaemonE2E : public DaemonTest {
 protected:
  void SetUp() override {
    cluster_.namespace_("team-a");
    cluster_.namespace_("team-b");
    cluster_.namespace_("kai-resource-reservation");
    cluster_.priority_class("train", 50);
    cluster_.priority_class("inference", 125);
  }
  void start_daemon() {
    DaemonTest::start_daemon([](daemon::DaemonOptions& o) { o.metrics_port = 1; });  // ephemeral
  }
};

TEST_F(DaemonE2E, WholeGpuPodsAndAGangThatWaitsUntilItFits) {
  cluster_.node("n1", 4);
  cluster_.test_queues();
  start_daemon();
  for (int i = 0; i < 3; ++i)
    cluster_.create(cluster_.pod("team-a", "single-" + std::to_string(i), "test", 1));
  ASSERT_TRUE(Cluster::eventually([&] {
    return bound("team-a", "single-0") && bound("team-a", "single-1") && bound("team-a", "single-2");
  }));

  // A gang of 2 x 2 GPUs: 1 GPU free on n1, so neither pod may bind.
  cluster_.pod_group("team-a", "gang", "test", 2);
  for (int i = 0; i < 2; ++i) {
    cluster_.create(
        cluster_.pod("team-a", "gang-" + std::to_string(i), "test", 2, "", {{"pod-group-name", "gang"}}));
  }
  // The status writer writes one pod after the other: wait for both conditions.
  ASSERT_TRUE(Cluster::eventually([&] {
    return !Cluster::condition_message(cluster_.get_pod("team-a", "gang-0")).empty() &&
           Cluster::condition_message(cluster_.get_pod("team-a", "gang-1")).find("gang") != std::string::npos;
  }));
  EXPECT_FALSE(bound("team-a", "gang-0"));
  EXPECT_FALSE(bound("team-a", "gang-1"));
  EXPECT_NE(Cluster::condition_message(cluster_.get_pod("team-a", "gang-1")).find("gang"), std::string::npos)
      << Cluster::condition_message(cluster_.get_pod("team-a", "gang-1"));

  // A second node arrives: the whole gang binds.
  cluster_.node("n2", 4);
  ASSERT_TRUE(Cluster::eventually([&] { return bound("team-a", "gang-0") && bound("team-a", "gang-1"); }));
  EXPECT_EQ(cluster_.server->request_counts()["create pods/binding"], 5u);  // each pod bound once
}

TEST_F(DaemonE2E, FractionAndGpuMemoryPodsShareDevicesThroughReservationPods) {
  cluster_.node("n1", 2);
  cluster_.test_queues();
  start_daemon();
  // a and b tolerate a taint (as the pods of one workload do): whichever's bind makes the reservation
  // pod of their group gives it that toleration.
  for (const std::string name : {"a", "b"}) {
    Json p = cluster_.pod("team-a", name, "test", 0, "", {{"gpu-fraction", "0.5"}});
    p["spec"]["tolerations"] = Json::array({{{"key", "dedicated"}, {"operator", "Equal"}, {"value", "gpu"},
                                             {"effect", "NoSchedule"}}});
    cluster_.create(p);
  }
  cluster_.create(cluster_.pod("team-a", "m", "test", 0, "", {{"gpu-memory", "20480"}}));
  ASSERT_TRUE(Cluster::eventually(
      [&] { return bound("team-a", "a") && bound("team-a", "b") && bound("team-a", "m"); }));
  auto group = [&](const std::string& name) {
    return cluster_.get_pod("team-a", name)["metadata"]
        .value("labels", Json::object())
        .value("runai-gpu-group", "");
  };
  EXPECT_FALSE(group("a").empty());
  EXPECT_EQ(group("a"), group("b"));  // 0.5 + 0.5 fill one device
  EXPECT_NE(group("m"), group("a"));  // 20 GiB of 40 is half of the second device
  EXPECT_EQ(cluster_.pods("kai-resource-reservation").size(), 2u);
  // The reservation of a's group tolerates what a tolerates (KAI v0.17), besides nvidia.com/gpu.
  bool tolerates = false;
  for (const auto& r : cluster_.pods("kai-resource-reservation")) {
    if (r["metadata"]["labels"].value("runai-gpu-group", "") != group("a")) continue;
    for (const auto& t : r["spec"].value("tolerations", Json::array())) tolerates |= t.value("key", "") == "dedicated";
  }
  EXPECT_TRUE(tolerates) << "the reservation pod does not carry the fraction pod's toleration";
  // Deleting both pods of a group deletes its reservation pod.
  ASSERT_TRUE(cluster_.server->delete_object("v1", "Pod", "team-a", "a").is_ok());
  ASSERT_TRUE(cluster_.server->delete_object("v1", "Pod", "team-a", "b").is_ok());
  EXPECT_TRUE(Cluster::eventually([&] { return cluster_.pods("kai-resource-reservation").size() == 1; }));
}

TEST_F(DaemonE2E, ReclaimGivesTheSecondQueueItsQuota) {
  cluster_.node("n1", 4);
  cluster_.queue("default", "", -1);
  cluster_.queue("team-a", "default", 2);
  cluster_.queue("team-b", "default", 2);
  start_daemon();
  for (int i = 0; i < 4; ++i)
    cluster_.create(cluster_.pod("team-a", "a-" + std::to_string(i), "team-a", 1, "train"));
  ASSERT_TRUE(Cluster::eventually([&] {
    int n = 0;
    for (int i = 0; i < 4; ++i) n += bound("team-a", "a-" + std::to_string(i));
    return n == 4;
  }));
  cluster_.create(cluster_.pod("team-b", "b-0", "team-b", 2, "train"));
  ASSERT_TRUE(Cluster::eventually([&] { return bound("team-b", "b-0"); }));
  // Exactly two of team-a's pods made room; team-a keeps its quota of 2.
  int left = 0;
  for (int i = 0; i < 4; ++i) left += cluster_.get_pod("team-a", "a-" + std::to_string(i)).is_null() ? 0 : 1;
  EXPECT_EQ(left, 2);
}

TEST_F(DaemonE2E, PreemptionByPriorityWithinAQueue) {
  cluster_.node("n1", 2);
  cluster_.test_queues();
  start_daemon();
  cluster_.create(cluster_.pod("team-a", "low", "test", 2, "train"));
  ASSERT_TRUE(Cluster::eventually([&] { return bound("team-a", "low"); }));
  cluster_.create(cluster_.pod("team-a", "high", "test", 2, "inference"));
  ASSERT_TRUE(Cluster::eventually([&] { return bound("team-a", "high"); }));
  EXPECT_TRUE(cluster_.get_pod("team-a", "low").is_null());
}

TEST_F(DaemonE2E, PodsOfOtherSchedulersUseCapacity) {
  cluster_.node("n1", 2);
  cluster_.test_queues();
  Json foreign = cluster_.pod("team-a", "foreign", "test", 2);
  foreign["spec"]["schedulerName"] = "default-scheduler";
  foreign["spec"]["nodeName"] = "n1";
  cluster_.create(foreign);
  start_daemon();
  cluster_.create(cluster_.pod("team-a", "mine", "test", 1));
  ASSERT_TRUE(Cluster::eventually(
      [&] { return !Cluster::condition_message(cluster_.get_pod("team-a", "mine")).empty(); }));
  EXPECT_FALSE(bound("team-a", "mine"));
}

TEST_F(DaemonE2E, BadInputGetsAReasonAndEveryoneElseIsScheduled) {
  cluster_.node("n1", 4);
  cluster_.test_queues();
  // A queue cycle: both queues are ignored, with a warning, and their pods wait.
  cluster_.queue("loop-a", "loop-b", -1);
  cluster_.queue("loop-b", "loop-a", -1);
  start_daemon();
  cluster_.create(cluster_.pod("team-a", "bad-fraction", "test", 0, "", {{"gpu-fraction", "lots"}}));
  cluster_.pod_group("team-a", "too-big", "test", 3);
  cluster_.create(cluster_.pod("team-a", "lonely", "test", 1, "", {{"pod-group-name", "too-big"}}));
  cluster_.create(cluster_.pod("team-a", "in-loop", "loop-a", 1));
  cluster_.create(cluster_.pod("team-a", "good", "test", 1));
  ASSERT_TRUE(Cluster::eventually([&] { return bound("team-a", "good"); }));
  ASSERT_TRUE(Cluster::eventually([&] {
    return !Cluster::condition_message(cluster_.get_pod("team-a", "bad-fraction")).empty() &&
           !Cluster::condition_message(cluster_.get_pod("team-a", "in-loop")).empty();
  }));
  EXPECT_NE(Cluster::condition_message(cluster_.get_pod("team-a", "bad-fraction")).find("gpu-fraction"),
            std::string::npos)
      << Cluster::condition_message(cluster_.get_pod("team-a", "bad-fraction"));
  EXPECT_NE(Cluster::condition_message(cluster_.get_pod("team-a", "in-loop")).find("loop-a"),
            std::string::npos)
      << Cluster::condition_message(cluster_.get_pod("team-a", "in-loop"));
  EXPECT_FALSE(bound("team-a", "lonely"));
  EXPECT_FALSE(bound("team-a", "bad-fraction"));
}

TEST_F(DaemonE2E, ApiFaultsDuringSchedulingStillEndCorrectly) {
  cluster_.node("n1", 8);
  cluster_.node("n2", 8);
  cluster_.test_queues();
  start_daemon();
  ASSERT_TRUE(Cluster::eventually([&] { return daemon_->synced(); }));
  apiserver::Faults faults;
  faults.too_many_requests = 5;
  faults.internal_errors = 3;
  faults.expire_watches = 2;
  faults.close_mid_body = 2;
  faults.delay = std::chrono::milliseconds(20);
  cluster_.server->set_faults(faults);
  cluster_.server->drop_watches();
  for (int i = 0; i < 12; ++i) cluster_.create(cluster_.pod("team-a", "p-" + std::to_string(i), "test", 1));
  cluster_.server->drop_watches();
  ASSERT_TRUE(Cluster::eventually(
      [&] {
        int n = 0;
        for (int i = 0; i < 12; ++i) n += bound("team-a", "p-" + std::to_string(i));
        return n == 12;
      },
      60s));
  std::map<std::string, int> per_node;
  for (const auto& p : cluster_.pods("team-a")) ++per_node[Cluster::node_of(p)];
  EXPECT_LE(per_node["n1"], 8);
  EXPECT_LE(per_node["n2"], 8);
}

}  // namespace
}  // namespace kai::e2e

namespace kai::e2e {
namespace {

// A cycle starts early when enough changed (--early-cycle-changes, docs/configuration.md "Defaults"): with a 30 s period, a burst of new pods
// is bound at once when early cycles are on, and waits for the period when they are off.
class EarlyCycle : public ::testing::TestWithParam<uint64_t> {};

TEST_P(EarlyCycle, ABurstOfChangesStartsACycleBeforeThePeriod) {
  Cluster cluster;
  cluster.small(8);
  daemon::DaemonOptions o = cluster.daemon_options();
  o.schedule_period = std::chrono::seconds(30);
  o.early_cycle_changes = GetParam();
  daemon::Daemon d(o);
  ASSERT_TRUE(d.start().is_ok());
  ASSERT_TRUE(Cluster::eventually([&] { return d.synced(); }));
  std::this_thread::sleep_for(200ms);  // the first tick has passed: the next is 30 s away
  for (int i = 0; i < 4; ++i) cluster.create(cluster.pod("team-a", "p-" + std::to_string(i), "test", 1));
  auto all_bound = [&] {
    for (int i = 0; i < 4; ++i) {
      if (Cluster::node_of(cluster.get_pod("team-a", "p-" + std::to_string(i))).empty()) return false;
    }
    return true;
  };
  if (GetParam() > 0) {
    EXPECT_TRUE(Cluster::eventually(all_bound, 10s)) << "no early cycle";
  } else {
    std::this_thread::sleep_for(3s);
    EXPECT_FALSE(all_bound()) << "without early cycles the pods wait for the period";
  }
  d.stop();
}

INSTANTIATE_TEST_SUITE_P(OnAndOff, EarlyCycle, ::testing::Values(uint64_t{3}, uint64_t{0}));

}  // namespace
}  // namespace kai::e2e

namespace kai::e2e {
namespace {

// The server binds a fraction pod but its answer is lost: the binder must not take the bound pod's
// GPU-sharing chain back (group label, configmaps, reservation pod), or the kubelet would see a free
// GPU that the pod uses. It logs the pod as bound where it is.
TEST_F(DaemonE2E, ABindWhoseAnswerIsLostLeavesTheBoundPodsGpuAlone) {
  cluster_.node("n1", 2);
  cluster_.test_queues();
  apiserver::Faults lost;
  lost.match = "/binding";
  lost.close_without_answer = 1;
  cluster_.server->set_faults(lost);
  start_daemon();
  cluster_.create(cluster_.pod("team-a", "f", "test", 0, "", {{"gpu-fraction", "0.5"}}));
  ASSERT_TRUE(Cluster::eventually([&] { return bound("team-a", "f"); }));
  std::this_thread::sleep_for(500ms);  // the binder's outcome and any rollback
  const Json f = cluster_.get_pod("team-a", "f");
  const std::string group = f["metadata"].value("labels", Json::object()).value("runai-gpu-group", "");
  EXPECT_FALSE(group.empty()) << "the bound pod lost its GPU group label: " << f.dump();
  bool reserved = false;
  for (const auto& r : cluster_.pods("kai-resource-reservation"))
    reserved |= r["metadata"]["labels"].value("runai-gpu-group", "") == group;
  EXPECT_TRUE(reserved) << "the bound pod's reservation pod is gone";
  EXPECT_EQ(cluster_.server->request_counts()["create pods/binding"], 1u) << "a second bind was sent";
}

}  // namespace
}  // namespace kai::e2e
