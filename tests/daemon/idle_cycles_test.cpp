// Idle cycles (docs/performance-targets.md "Idle cycles"): once the cluster is settled, ticks run no
// session and log nothing; a new pod wakes the scheduler at once, and a namespace's label change (an
// input of pod affinity's namespaceSelector) does too. The deadlines that must fire with nothing
// else changing (a stale gang's grace, a min-runtime) are JobState's tests in one_truth_test.cpp.
// Replay agrees (DaemonTest).
#include <gtest/gtest.h>

#include <thread>

#include "k8s/client/kube_client.hpp"
#include "tests/daemon/cluster_fixture.hpp"

namespace kai::e2e {
namespace {

class IdleCycles : public DaemonTest {
 protected:
  void SetUp() override { cluster_.small(8); }
  /// Cycles that ran a session.
  uint64_t sessions() const { return daemon_->cycles() - daemon_->idle_cycles(); }
  /// Merge-patches namespace `name`'s labels as a user would.
  void label_namespace(const std::string& name, const Json& labels) {
    k8s::KubeClient client(std::move(k8s::resolve_cluster_config(cluster_.server->kubeconfig_path())).value());
    auto r = client.merge_patch("/api/v1/namespaces/" + name, Json{{"metadata", {{"labels", labels}}}}.dump());
    ASSERT_TRUE(r.ok()) << r.describe();
  }
  /// Waits until no session has run for `quiet` (the writes after binds have come back).
  bool settled(std::chrono::milliseconds quiet = 600ms) {
    return Cluster::eventually([&] {
      const uint64_t before = sessions();
      std::this_thread::sleep_for(quiet);
      return sessions() == before && daemon_->idle_cycles() > 0;
    }, 30s);
  }
};

TEST_F(IdleCycles, ASettledClusterRunsNoSessionAndANewPodWakesItAtOnce) {
  start_daemon({});
  ASSERT_TRUE(daemon_);
  cluster_.create(cluster_.pod("team-a", "first", "test", 1));
  ASSERT_TRUE(Cluster::eventually([&] { return bound("team-a", "first"); }));
  ASSERT_TRUE(settled()) << "sessions kept running: " << sessions();

  const uint64_t sessions_before = sessions(), idle_before = daemon_->idle_cycles();
  std::this_thread::sleep_for(1s);  // 20 periods of 50 ms
  EXPECT_EQ(sessions(), sessions_before) << "a session ran while nothing changed";
  EXPECT_GE(daemon_->idle_cycles(), idle_before + 10) << "the ticks stopped instead of idling";

  cluster_.create(cluster_.pod("team-a", "second", "test", 1));
  ASSERT_TRUE(Cluster::eventually([&] { return bound("team-a", "second"); }, 5s)) << "an idle daemon missed a new pod";
  EXPECT_GT(sessions(), sessions_before);
}

TEST_F(IdleCycles, ANamespaceLabelChangeIsAnInputThatWakesTheScheduler) {
  // A pod that avoids nodes running pods of namespaces labelled team=blue, and the only node runs a
  // pod of team-b, which is blue: the pod waits while the scheduler idles. Removing the label is the
  // only change, and the pod binds.
  cluster_.namespace_("team-b");
  start_daemon({});
  ASSERT_TRUE(daemon_);
  label_namespace("team-b", {{"team", "blue"}});
  cluster_.create(cluster_.pod("team-b", "web", "test", 1));
  ASSERT_TRUE(Cluster::eventually([&] { return bound("team-b", "web"); }));
  Json picky = cluster_.pod("team-a", "picky", "test", 1);
  picky["spec"]["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] =
      Json::array({{{"labelSelector", Json::object()},
                    {"namespaceSelector", {{"matchLabels", {{"team", "blue"}}}}},
                    {"topologyKey", "kubernetes.io/hostname"}}});
  cluster_.create(picky);
  ASSERT_TRUE(settled()) << "sessions kept running: " << sessions();
  EXPECT_FALSE(bound("team-a", "picky")) << "placed beside a pod of a blue namespace";

  label_namespace("team-b", {{"team", nullptr}});  // a merge patch removes a key with null
  ASSERT_TRUE(Cluster::eventually([&] { return bound("team-a", "picky"); }, 5s))
      << "the namespace's new labels did not reach the scheduler";
}

}  // namespace
}  // namespace kai::e2e
