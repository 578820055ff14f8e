// The daemon groups pods by their top owner as KAI's pod grouper does, with the owners watched
// through API discovery and logged (docs/pod-grouping.md): a JobSet that does not fit binds none of
// its pods, also when its Jobs and pods arrive before the JobSet's CRD is served; a PyTorchJob created pod
// by pod binds nothing before its 4th pod; the PodGroup is written and the pods annotated; replay agrees.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <thread>

#include "k8s/model/json_codec.hpp"
#include "tests/daemon/cluster_fixture.hpp"
#include "tests/daemon/daemon_harness.hpp"

namespace kai::e2e {
namespace {

using namespace std::chrono_literals;
using Json = nlohmann::json;

Json fixture_crd(const std::string& file) {
  std::ifstream in(source_dir() + "/tests/fixtures/crds/" + file);
  std::stringstream text;
  text << in.rdbuf();
  auto j = model::yaml_to_json(text.str());
  EXPECT_TRUE(j.is_ok()) << file << ": " << j.message();
  return j.is_ok() ? *j : Json();
}

Json owner_ref(const Json& o) {
  return {{"apiVersion", o["apiVersion"]},
          {"kind", o["kind"]},
          {"name", o["metadata"]["name"]},
          {"uid", o["metadata"]["uid"]},
          {"controller", true}};
}

class PodGrouperDaemon : public DaemonTest {
 protected:
  void SetUp() override {
    cluster_.namespace_("team-a");
    cluster_.test_queues();
  }
  Json read(const std::string& api_version, const std::string& kind, const std::string& name) {
    auto r = cluster_.server->get_object(api_version, kind, "team-a", name);
    return r.is_ok() ? Json::parse(r.value()) : Json();
  }
  /// JobSet `train`: replicatedJob `workers`, 2 replicas x parallelism 2, as its controller makes it:
  /// the JobSet, a Job per replica owned by it, 2 pods of 3 GPUs per Job owned by the Job.
  void create_jobset() {
    cluster_.create({{"apiVersion", "jobset.x-k8s.io/v1alpha2"},
                     {"kind", "JobSet"},
                     {"metadata", {{"name", "train"}, {"namespace", "team-a"}}},
                     {"spec",
                      {{"replicatedJobs",
                        Json::array({{{"name", "workers"},
                                      {"replicas", 2},
                                      {"template", {{"spec", {{"parallelism", 2}, {"completions", 2}}}}}}})}}}});
    const Json js = read("jobset.x-k8s.io/v1alpha2", "JobSet", "train");
    for (int j = 0; j < 2; ++j) {
      const std::string job_name = "train-workers-" + std::to_string(j);
      cluster_.create({{"apiVersion", "batch/v1"},
                       {"kind", "Job"},
                       {"metadata", {{"name", job_name}, {"namespace", "team-a"}, {"ownerReferences", {owner_ref(js)}}}},
                       {"spec", {{"parallelism", 2}, {"template", {{"spec", {{"containers", Json::array()}}}}}}}});
      const Json job = read("batch/v1", "Job", job_name);
      for (int k = 0; k < 2; ++k) {
        Json p = cluster_.pod("team-a", job_name + "-" + std::to_string(k), "test", 3);
        p["metadata"]["labels"]["jobset.sigs.k8s.io/replicatedjob-name"] = "workers";
        p["metadata"]["labels"]["jobset.sigs.k8s.io/job-index"] = std::to_string(j);
        p["metadata"]["ownerReferences"] = {owner_ref(job)};
        cluster_.create(p);
      }
    }
  }
  /// 20 cycles bind none of the JobSet's pods on three nodes; a fourth node binds all 4.
  void expect_none_then_all_with_a_fourth_node() {
    const uint64_t cycles = daemon_->cycles();
    ASSERT_TRUE(Cluster::eventually([&] { return daemon_->cycles() >= cycles + 20; }));
    EXPECT_EQ(bound_count(), 0) << "a JobSet that does not fit held GPUs";
    cluster_.node("n4", 4);
    ASSERT_TRUE(Cluster::eventually([&] { return bound_count() == 4; })) << "bound " << bound_count() << " of 4";
  }
  int bound_count() {
    int n = 0;
    for (int j = 0; j < 2; ++j)
      for (int k = 0; k < 2; ++k) n += bound("team-a", "train-workers-" + std::to_string(j) + "-" + std::to_string(k));
    return n;
  }
};

TEST_F(PodGrouperDaemon, AJobSetOnThreeNodesBindsNothingAndAllFourWhenAFourthNodeAppears) {
  for (int i = 1; i <= 3; ++i) cluster_.node("n" + std::to_string(i), 4);
  cluster_.create(fixture_crd("jobset.x-k8s.io_jobsets.yaml"));
  start_daemon(nullptr);
  create_jobset();
  expect_none_then_all_with_a_fourth_node();
}

// KAI's pod grouper writes the PodGroup (its name, gang, subgroups, owner) and names it on every pod;
// the daemon does too, from its logged records, and the pods' group is the same before and after.
TEST_F(PodGrouperDaemon, TheJobSetsPodGroupIsWrittenAndItsPodsAnnotatedAsKaisPodGrouperDoes) {
  for (int i = 1; i <= 4; ++i) cluster_.node("n" + std::to_string(i), 4);
  cluster_.create(fixture_crd("jobset.x-k8s.io_jobsets.yaml"));
  start_daemon(nullptr);
  create_jobset();
  const std::string group = "pg-train-" + read("jobset.x-k8s.io/v1alpha2", "JobSet", "train")["metadata"]["uid"].get<std::string>();
  Json pg;
  ASSERT_TRUE(Cluster::eventually([&] {
    pg = read("scheduling.run.ai/v2alpha2", "PodGroup", group);
    return pg.is_object();
  })) << "no PodGroup " << group;
  EXPECT_EQ(pg["metadata"]["ownerReferences"][0]["kind"], "JobSet");
  EXPECT_EQ(pg["spec"]["queue"], "test");
  ASSERT_TRUE(pg["spec"]["subGroups"].is_array()) << pg.dump();
  EXPECT_GE(pg["spec"]["subGroups"].size(), 1u);
  ASSERT_TRUE(Cluster::eventually([&] {
    for (int j = 0; j < 2; ++j) {
      for (int k = 0; k < 2; ++k) {
        const Json p = read("v1", "Pod", "train-workers-" + std::to_string(j) + "-" + std::to_string(k));
        if (p["metadata"]["annotations"].value("pod-group-name", "") != group) return false;
        if (!p["metadata"]["labels"].contains("kai.scheduler/subgroup-name")) return false;
      }
    }
    return true;
  })) << "pods not annotated with pod-group-name " << group;
  ASSERT_TRUE(Cluster::eventually([&] { return bound_count() == 4; })) << "bound " << bound_count() << " of 4";
}

// A PyTorchJob whose operator creates its pods one at a time: the gang is the spec's 4 (Master 1 +
// Worker 3), never the pods seen so far, so nothing binds until the 4th pod exists.
TEST_F(PodGrouperDaemon, APyTorchJobCreatedPodByPodBindsNothingUntilItsFourthPodThenAll) {
  for (int i = 1; i <= 4; ++i) cluster_.node("n" + std::to_string(i), 4);
  cluster_.create(fixture_crd("kubeflow.org_pytorchjobs.yaml"));
  start_daemon(nullptr);
  Json replica = {{"template", {{"spec", {{"containers", Json::array({{{"name", "pytorch"}, {"image", "busybox"}}})}}}}}};
  Json master = replica, worker = replica;
  master["replicas"] = 1;
  worker["replicas"] = 3;
  cluster_.create({{"apiVersion", "kubeflow.org/v1"},
                   {"kind", "PyTorchJob"},
                   {"metadata", {{"name", "pt"}, {"namespace", "team-a"}}},
                   {"spec", {{"pytorchReplicaSpecs", {{"Master", master}, {"Worker", worker}}}}}});
  const Json job = read("kubeflow.org/v1", "PyTorchJob", "pt");
  const std::vector<std::pair<std::string, int>> pods = {{"master", 0}, {"worker", 0}, {"worker", 1}, {"worker", 2}};
  auto bound_now = [&] {
    int n = 0;
    for (const auto& [type, index] : pods) n += bound("team-a", "pt-" + type + "-" + std::to_string(index));
    return n;
  };
  for (size_t i = 0; i < pods.size(); ++i) {
    const auto& [type, index] = pods[i];
    Json p = cluster_.pod("team-a", "pt-" + type + "-" + std::to_string(index), "test", 4);
    p["metadata"]["labels"]["training.kubeflow.org/replica-type"] = type;
    p["metadata"]["labels"]["training.kubeflow.org/replica-index"] = std::to_string(index);
    p["metadata"]["ownerReferences"] = {owner_ref(job)};
    cluster_.create(p);
    if (i + 1 == pods.size()) break;
    const uint64_t cycles = daemon_->cycles();
    ASSERT_TRUE(Cluster::eventually([&] { return daemon_->cycles() >= cycles + 5; }));
    EXPECT_EQ(bound_now(), 0) << "bound with " << i + 1 << " of the 4 pods";
  }
  ASSERT_TRUE(Cluster::eventually([&] { return bound_now() == 4; })) << "bound " << bound_now() << " of 4";
}

// The CRD arrives after the daemon started (an operator installed later): the kind is discovered from
// the CRD watch and its objects are watched from then on.
TEST_F(PodGrouperDaemon, AKindServedLaterIsDiscoveredFromTheCrdWatch) {
  for (int i = 1; i <= 3; ++i) cluster_.node("n" + std::to_string(i), 4);
  start_daemon(nullptr);
  const uint64_t started = daemon_->cycles();
  ASSERT_TRUE(Cluster::eventually([&] { return daemon_->cycles() >= started + 5; }));
  cluster_.create(fixture_crd("jobset.x-k8s.io_jobsets.yaml"));
  std::this_thread::sleep_for(500ms);  // the CRD watch's event and the discovery it starts
  create_jobset();
  expect_none_then_all_with_a_fourth_node();
}

}  // namespace
}  // namespace kai::e2e
