// Topology-aware scheduling by the daemon against kai-apiserver (docs/topology.md): the Topology
// object is watched and logged like every input, a gang requiring a rack lands in one rack, a
// constraint naming a Topology that does not exist yet is a reason on the pods until it is created,
// and a cluster without the Topology CRD still syncs and schedules. Replay agrees (DaemonTest).
#include <gtest/gtest.h>

#include <set>

#include "tests/daemon/cluster_fixture.hpp"

namespace kai::e2e {
namespace {

class TopologyDaemon : public DaemonTest {
 protected:
  void SetUp() override {
    cluster_.namespace_("team-a");
    cluster_.test_queues();
  }
  void rack_node(const std::string& name, int gpus, const std::string& rack) {
    const std::string n = std::to_string(gpus);
    cluster_.create({{"apiVersion", "v1"},
                     {"kind", "Node"},
                     {"metadata",
                      {{"name", name},
                       {"labels", {{"kubernetes.io/hostname", name}, {"example.com/zone", "z1"}, {"example.com/rack", rack}}}}},
                     {"status",
                      {{"allocatable", {{"cpu", "32"}, {"memory", "256Gi"}, {"pods", "110"}, {"nvidia.com/gpu", n}}},
                       {"capacity", {{"cpu", "32"}, {"memory", "256Gi"}, {"pods", "110"}, {"nvidia.com/gpu", n}}},
                       {"conditions", Json::array({{{"type", "Ready"}, {"status", "True"}}})}}}});
  }
  void topology() {
    cluster_.create({{"apiVersion", "kai.scheduler/v1alpha1"},
                     {"kind", "Topology"},
                     {"metadata", {{"name", "layout"}}},
                     {"spec", {{"levels", Json::array({{{"nodeLabel", "example.com/zone"}},
                                                       {{"nodeLabel", "example.com/rack"}, {"alias", "rack"}}})}}}});
  }
  /// A gang of `n` one-GPU pods that requires one rack of topology "layout".
  void rack_gang(const std::string& name, int n) {
    cluster_.create({{"apiVersion", "scheduling.run.ai/v2alpha2"},
                     {"kind", "PodGroup"},
                     {"metadata", {{"name", name}, {"namespace", "team-a"}}},
                     {"spec",
                      {{"minMember", n},
                       {"queue", "test"},
                       {"topologyConstraint", {{"topology", "layout"}, {"requiredTopologyLevel", "rack"}}}}}});
    for (int i = 0; i < n; ++i) {
      cluster_.create(cluster_.pod("team-a", name + "-" + std::to_string(i), "test", 1, "", {{"pod-group-name", name}}));
    }
  }
  std::string node_of(const std::string& pod) { return Cluster::node_of(cluster_.get_pod("team-a", pod)); }
};

TEST_F(TopologyDaemon, AGangRequiringARackWaitsForItsTopologyThenLandsInOneRack) {
  // Rack r1 has two GPUs on two nodes, rack r2 four on two: only r2 holds the gang of four, though
  // binpack alone would fill r1's nodes first.
  rack_node("r1-a", 1, "r1");
  rack_node("r1-b", 1, "r1");
  rack_node("r2-a", 2, "r2");
  rack_node("r2-b", 2, "r2");
  start_daemon(nullptr);
  rack_gang("train", 4);
  ASSERT_TRUE(Cluster::eventually([&] {
    return Cluster::condition_message(cluster_.get_pod("team-a", "train-0")).find("Requested topology layout does not exist") !=
           std::string::npos;
  })) << Cluster::condition_message(cluster_.get_pod("team-a", "train-0"));
  EXPECT_TRUE(node_of("train-0").empty());

  topology();  // the watch brings it; the next cycle places the gang
  for (int i = 0; i < 4; ++i) {
    const std::string pod = "train-" + std::to_string(i);
    ASSERT_TRUE(Cluster::eventually([&] { return bound("team-a", pod); })) << pod;
  }
  std::set<std::string> nodes;
  for (int i = 0; i < 4; ++i) nodes.insert(node_of("train-" + std::to_string(i)));
  EXPECT_EQ(nodes, (std::set<std::string>{"r2-a", "r2-b"}));
}

TEST_F(TopologyDaemon, WithoutTheTopologyCrdTheDaemonSyncsAndSchedules) {
  ASSERT_TRUE(cluster_.server
                  ->delete_object("apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "topologies.kai.scheduler")
                  .is_ok());
  rack_node("r1-a", 1, "r1");
  start_daemon(nullptr);
  cluster_.create(cluster_.pod("team-a", "plain", "test", 1));
  ASSERT_TRUE(Cluster::eventually([&] { return bound("team-a", "plain"); }));
  EXPECT_TRUE(daemon_->synced());
}

}  // namespace
}  // namespace kai::e2e
