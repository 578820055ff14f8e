// Topology-aware scheduling by the daemon against kai-apiserver (docs/topology.md): the Topology
// object is watched and logged like every input, a gang requiring a rack lands in one rack, a
// constraint naming a Topology that does not exist yet is a reason on the pods until it is created,
// a node relabelled into another rack counts there at the next cycle, /get-snapshot exports the
// Topology, and a cluster without the Topology CRD still syncs and schedules. Replay agrees (DaemonTest).
#include <gtest/gtest.h>

#include <set>

#include "k8s/client/kube_client.hpp"
#include "k8s/http/http_client.hpp"
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

TEST_F(TopologyDaemon, ANodeRelabelledIntoAnotherRackCountsThereAtTheNextCycle) {
  // r1 and r2 each hold two GPUs: a gang of three requiring a rack fits neither. Moving r1-b into
  // r2 (a label patch, as an operator re-cabling a node would) gives r2 three GPUs.
  rack_node("r1-a", 1, "r1");
  rack_node("r1-b", 1, "r1");
  rack_node("r2-a", 2, "r2");
  topology();
  start_daemon([](daemon::DaemonOptions& o) { o.metrics_port = 1; });  // ephemeral
  ASSERT_TRUE(daemon_);
  rack_gang("train", 3);
  ASSERT_TRUE(Cluster::eventually([&] {
    return Cluster::condition_message(cluster_.get_pod("team-a", "train-0")).find("can allocate only 2 of 3 required pods") !=
           std::string::npos;
  })) << Cluster::condition_message(cluster_.get_pod("team-a", "train-0"));

  k8s::KubeClient client(std::move(k8s::resolve_cluster_config(cluster_.server->kubeconfig_path())).value());
  auto r = client.merge_patch("/api/v1/nodes/r1-b", Json{{"metadata", {{"labels", {{"example.com/rack", "r2"}}}}}}.dump());
  ASSERT_TRUE(r.ok()) << r.describe();
  std::set<std::string> nodes;
  for (int i = 0; i < 3; ++i) {
    const std::string pod = "train-" + std::to_string(i);
    ASSERT_TRUE(Cluster::eventually([&] { return bound("team-a", pod); })) << pod;
    nodes.insert(node_of(pod));
  }
  EXPECT_EQ(nodes, (std::set<std::string>{"r1-b", "r2-a"}));

  // The operator's snapshot holds the Topology as the cluster does, levels and alias included.
  http::Endpoint ep;
  ep.port = daemon_->metrics_port();
  ep.tls = false;
  http::HttpClient local(ep);
  const auto snapshot = local.request("GET", "/get-snapshot");
  ASSERT_EQ(snapshot.status, 200);
  const Json list = Json::parse(snapshot.body);
  Json found;
  std::string kinds;
  for (const auto& item : list["items"]) {
    kinds += item.value("kind", "") + " ";
    if (item.value("kind", "") == "Topology") found = item;
  }
  ASSERT_FALSE(found.is_null()) << "no Topology in /get-snapshot, only " << kinds;
  EXPECT_EQ(found["apiVersion"], "kai.scheduler/v1alpha1");
  EXPECT_EQ(found["metadata"]["name"], "layout");
  EXPECT_EQ(found["spec"]["levels"],
            Json::parse(R"([{"nodeLabel":"example.com/zone"},{"nodeLabel":"example.com/rack","alias":"rack"}])"));
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
