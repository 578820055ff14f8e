// Workload owners (docs/pod-grouping.md "Owners"): decoded to the fields the groupers read, encoded
// back to the same, logged reduced, and told apart from the scheduler's own kinds.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "k8s/model/json_codec.hpp"
#include "k8s/model/log_redaction.hpp"
#include "k8s/model/watch_decode.hpp"

namespace kai::model {
namespace {

using nlohmann::json;

const char* kJobSet = R"({"apiVersion":"jobset.x-k8s.io/v1alpha2","kind":"JobSet",
  "metadata":{"name":"train","namespace":"ns1","uid":"u1","annotations":{"kai.scheduler/batch-min-member":"1"}},
  "spec":{"startupPolicy":{"startupPolicyOrder":"InOrder"},"replicatedJobs":[{"name":"workers","replicas":2,
  "template":{"metadata":{"annotations":{"a":"b"}},"spec":{"parallelism":4,"template":{"spec":{"containers":[
  {"name":"main","image":"x","env":[{"name":"TOKEN","value":"secret"}]}]}}}}}]}})";

TEST(OwnerCodec, AJobSetKeepsWhatTheGrouperReadsAndRoundTrips) {
  auto o = decode_workload_owner(json::parse(kJobSet));
  ASSERT_TRUE(o.is_ok()) << o.message();
  EXPECT_EQ(o->group_kind(), "JobSet.jobset.x-k8s.io");
  EXPECT_EQ(o->version, "v1alpha2");
  ASSERT_EQ(o->replicas.size(), 1u);
  EXPECT_EQ(o->replicas[0].name, "workers");
  EXPECT_EQ(o->replicas[0].replicas, 2);
  EXPECT_EQ(o->replicas[0].parallelism, 4);
  EXPECT_EQ(o->replicas[0].template_annotations.at("a"), "b");
  EXPECT_EQ(o->startup_policy, "InOrder");
  EXPECT_TRUE(o->errors.empty());
  auto again = decode_workload_owner(encode(*o));
  ASSERT_TRUE(again.is_ok());
  EXPECT_EQ(*again, *o);
}

TEST(OwnerCodec, TheLogKeepsNoPodTemplate) {
  const std::string logged = owner_for_log(kJobSet, "JobSet.jobset.x-k8s.io", "jobset.x-k8s.io/v1alpha2");
  EXPECT_EQ(logged.find("secret"), std::string::npos) << logged;
  EXPECT_EQ(logged.find("containers"), std::string::npos) << logged;
  EXPECT_NE(logged.find("parallelism"), std::string::npos) << logged;
}

TEST(OwnerCodec, KubeflowRayAndLeaderWorkerSetRoundTrip) {
  const char* texts[] = {
      R"({"apiVersion":"kubeflow.org/v1","kind":"PyTorchJob","metadata":{"name":"pt","namespace":"n"},"spec":{
        "pytorchReplicaSpecs":{"Worker":{"replicas":3},"Master":{"replicas":1}},
        "runPolicy":{"schedulingPolicy":{"minAvailable":2}},"elasticPolicy":{"minReplicas":3}}})",
      R"({"apiVersion":"kubeflow.org/v2beta1","kind":"MPIJob","metadata":{"name":"m","namespace":"n"},"spec":{
        "launcherCreationPolicy":"WaitForWorkersReady","mpiReplicaSpecs":{"Launcher":{"replicas":1},"Worker":{"replicas":2}}}})",
      R"({"apiVersion":"ray.io/v1","kind":"RayCluster","metadata":{"name":"r","namespace":"n"},"spec":{
        "headGroupSpec":{"template":{"metadata":{"annotations":{"x":"y"}}}},
        "workerGroupSpecs":[{"groupName":"g","replicas":3,"minReplicas":1,"numOfHosts":2,"suspend":true}]}})",
      R"({"apiVersion":"ray.io/v1","kind":"RayJob","metadata":{"name":"j","namespace":"n"},"status":{"rayClusterName":"r"}})",
      R"({"apiVersion":"leaderworkerset.x-k8s.io/v1","kind":"LeaderWorkerSet","metadata":{"name":"l","namespace":"n"},
        "spec":{"startupPolicy":"LeaderReady","leaderWorkerTemplate":{"size":4,
        "subGroupPolicy":{"subGroupSize":2,"subGroupPolicyType":"LeaderExcluded"},"workerTemplate":{"metadata":{}}}}})",
  };
  for (const char* text : texts) {
    auto o = decode_workload_owner(json::parse(text));
    ASSERT_TRUE(o.is_ok()) << text;
    EXPECT_TRUE(o->errors.empty()) << text;
    auto again = decode_workload_owner(encode(*o));
    ASSERT_TRUE(again.is_ok()) << text;
    EXPECT_EQ(*again, *o) << encode(*o).dump();
  }
}

TEST(OwnerCodec, AnyNamespacedObjectOfANamedGroupIsAnOwnerAndItsKindIsServed) {
  ClusterObjects out;
  ASSERT_TRUE(decode_objects_json(
                  R"({"kind":"List","items":[
                    {"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"j","namespace":"n","uid":"1"}},
                    {"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"n"}},
                    {"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole","metadata":{"name":"r"}},
                    {"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"PodGroup","metadata":{"name":"v","namespace":"n"}}]})",
                  "List", out)
                  .is_ok());
  ASSERT_EQ(out.owners.size(), 1u);
  EXPECT_EQ(out.owners[0].group_kind(), "Job.batch");
  EXPECT_EQ(out.served_owner_kinds, std::set<std::string>{"Job.batch"});
  EXPECT_EQ(out.skipped.size(), 3u);
}

TEST(OwnerCodec, AListItemWithoutApiVersionIsNamedByItsWatchKind) {
  ClusterObjects out;
  ASSERT_TRUE(decode_objects_json(R"({"metadata":{"name":"j","namespace":"n","uid":"1"}})", "Job.batch", out).is_ok());
  ASSERT_EQ(out.owners.size(), 1u);
  EXPECT_EQ(out.owners[0].kind, "Job");
  EXPECT_EQ(out.owners[0].group, "batch");
}

}  // namespace
}  // namespace kai::model
