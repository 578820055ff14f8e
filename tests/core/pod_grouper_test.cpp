// The pod grouper's segments and legacy PodGroups, as the cycle writes them on the PodGroup:
// - a PyTorchJob's workers split by kai.scheduler/segment-size, and a LeaderWorkerSet group split by
//   subGroupPolicy (LeaderWorker, LeaderExcluded), with each pod's segment, the segments' topology and
//   the sizes KAI refuses (actors/scheduler/core/segment_groupers.cpp);
// - the names and shapes an earlier KAI gave running workloads, kept where their PodGroups exist: a
//   Job's per-pod groups (--search-legacy-pg), a flat JobSet, a Ray cluster without subgroups, a
//   Knative revision grouped per pod (--knative-gang-schedule) (docs/pod-grouping.md "Legacy PodGroups").
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "actors/scheduler/core/cycle.hpp"
#include "actors/scheduler/core/pod_grouper.hpp"
#include "k8s/model/codec.hpp"

namespace kai::core {
namespace {

using Json = nlohmann::json;
constexpr int64_t kNow = 1'800'000'000;

Json node(const std::string& name, int gpus) {
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata", {{"name", name}}},
          {"status",
           {{"allocatable",
             {{"cpu", "64"}, {"memory", "256Gi"}, {"pods", "110"}, {"nvidia.com/gpu", std::to_string(gpus)}}},
            {"conditions", Json::array({{{"type", "Ready"}, {"status", "True"}}})}}}};
}

Json queue() {
  Json r = {{"quota", -1}, {"limit", -1}, {"overQuotaWeight", 1}};
  return {{"apiVersion", "scheduling.run.ai/v2"},
          {"kind", "Queue"},
          {"metadata", {{"name", "q"}}},
          {"spec", {{"resources", {{"gpu", r}, {"cpu", r}, {"memory", r}}}}}};
}

Json owner_ref(const std::string& api_version, const std::string& kind, const std::string& name) {
  return Json::array({{{"apiVersion", api_version}, {"kind", kind}, {"name", name}, {"uid", "uid-" + name},
                       {"controller", true}}});
}

Json pod(const std::string& name, Json labels, Json owners, Json annotations = Json::object()) {
  labels["kai.scheduler/queue"] = "q";
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata",
           {{"name", name},
            {"namespace", "ns"},
            {"uid", "uid-" + name},
            {"labels", labels},
            {"annotations", annotations},
            {"ownerReferences", owners},
            {"creationTimestamp", "2027-01-15T08:00:00Z"}}},
          {"spec",
           {{"schedulerName", "kai-scheduler"},
            {"containers",
             Json::array({{{"name", "main"}, {"resources", {{"limits", {{"nvidia.com/gpu", "1"}}}}}}})}}},
          {"status", {{"phase", "Pending"}}}};
}

/// A PyTorchJob with one Master and `workers` Workers whose template carries `worker_annotations`.
Json pytorch_job(int workers, Json worker_annotations, Json job_annotations = Json::object()) {
  return {{"apiVersion", "kubeflow.org/v1"},
          {"kind", "PyTorchJob"},
          {"metadata", {{"name", "pt"}, {"namespace", "ns"}, {"uid", "uid-pt"}, {"annotations", job_annotations}}},
          {"spec",
           {{"pytorchReplicaSpecs",
             {{"Master", {{"replicas", 1}, {"template", {{"spec", Json::object()}}}}},
              {"Worker",
               {{"replicas", workers},
                {"template", {{"metadata", {{"annotations", worker_annotations}}}, {"spec", Json::object()}}}}}}}}}};
}

Json pytorch_pod(const std::string& type, int index, Json annotations = Json::object()) {
  return pod("pt-" + type + "-" + std::to_string(index),
             {{"training.kubeflow.org/replica-type", type},
              {"training.kubeflow.org/replica-index", std::to_string(index)}},
             owner_ref("kubeflow.org/v1", "PyTorchJob", "pt"), annotations);
}

/// A LeaderWorkerSet of group `size` and its leader StatefulSet.
Json lws(int size, Json sub_group_policy = nullptr, Json annotations = Json::object(),
         Json worker_annotations = Json::object()) {
  Json lwt = {{"size", size},
              {"workerTemplate", {{"metadata", {{"annotations", worker_annotations}}}, {"spec", Json::object()}}}};
  if (!sub_group_policy.is_null()) lwt["subGroupPolicy"] = sub_group_policy;
  return {{"apiVersion", "leaderworkerset.x-k8s.io/v1"},
          {"kind", "LeaderWorkerSet"},
          {"metadata", {{"name", "lws"}, {"namespace", "ns"}, {"uid", "uid-lws"}, {"annotations", annotations}}},
          {"spec", {{"replicas", 1}, {"leaderWorkerTemplate", lwt}}}};
}

Json lws_pod(int worker_index) {
  return pod("lws-0-" + std::to_string(worker_index),
             {{"leaderworkerset.sigs.k8s.io/group-index", "0"},
              {"leaderworkerset.sigs.k8s.io/worker-index", std::to_string(worker_index)}},
             owner_ref("leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet", "lws"));
}

CycleResult cycle(const Json& items, const GrouperFlags& flags = {}) {
  auto objects = model::decode_snapshot(Json{{"apiVersion", "v1"}, {"kind", "List"}, {"items", items}}.dump());
  EXPECT_TRUE(objects) << objects.message();
  static model::ClusterObjects kept;  // the cycle's result points into its input
  kept = objects ? std::move(objects).value() : model::ClusterObjects{};
  CycleInput in;
  in.objects = model::ObjectRefs::of(kept);
  in.options.now = kNow;
  in.options.seed = 3;
  in.options.grouper = flags;
  in.cycle_id = 1;
  return run_cycle(in);
}

/// The written PodGroup's subgroups as "name:minMember" / "name:^minSubGroup", "/parent" and
/// "@required-level" appended, in order.
std::vector<std::string> sub_groups_of(const CycleResult& r) {
  std::vector<std::string> out;
  if (r.group_writes.empty() || r.group_writes.front().object_json.empty()) return out;
  const Json pg = Json::parse(r.group_writes.front().object_json);
  for (const Json& s : pg["spec"].value("subGroups", Json::array())) {
    std::string d = s["name"].get<std::string>() + ":";
    d += s.contains("minSubGroup") ? "^" + std::to_string(s["minSubGroup"].get<int>())
                                   : std::to_string(s["minMember"].get<int>());
    if (s.contains("parent")) d += "/" + s["parent"].get<std::string>();
    if (s.contains("topologyConstraint")) {
      d += "@" + s["topologyConstraint"].value("requiredTopologyLevel", std::string());
    }
    out.push_back(d);
  }
  return out;
}

/// Each pod's subgroup label as the write asks for it, by pod name.
std::map<std::string, std::string> pod_sub_groups(const CycleResult& r) {
  std::map<std::string, std::string> out;
  for (const auto& w : r.group_writes) {
    for (const auto& p : w.pods) out[p.pod] = p.sub_group;
  }
  return out;
}

/// Each pod's group as the write names it, by pod name.
std::map<std::string, std::string> pod_groups(const CycleResult& r) {
  std::map<std::string, std::string> out;
  for (const auto& w : r.group_writes) {
    for (const auto& p : w.pods) out[p.pod] = w.group;
  }
  return out;
}

/// The reason a group's pods wait with, for a grouper that refused the owner's spec.
std::string refusal(const CycleResult& r) {
  for (const auto& u : r.unschedulable) {
    for (const auto& reason : u.reasons) {
      if (reason.reason == "PodGrouperWarning") return reason.message;
    }
  }
  return {};
}

TEST(PyTorchSegments, WorkersSplitIntoSegmentsOfTheTemplatesSizeWithAPartialLastOne) {
  const CycleResult r = cycle({node("n1", 8), queue(), pytorch_job(5, {{"kai.scheduler/segment-size", "2"}}),
                               pytorch_pod("master", 0), pytorch_pod("worker", 0), pytorch_pod("worker", 3),
                               pytorch_pod("worker", 4)});
  EXPECT_EQ(sub_groups_of(r), (std::vector<std::string>{"master:1", "worker:^3", "worker-0:2/worker",
                                                        "worker-1:2/worker", "worker-2:1/worker"}));
  const auto pods = pod_sub_groups(r);
  EXPECT_EQ(pods.at("ns/pt-master-0"), "master");
  EXPECT_EQ(pods.at("ns/pt-worker-0"), "worker-0");
  EXPECT_EQ(pods.at("ns/pt-worker-3"), "worker-1");
  EXPECT_EQ(pods.at("ns/pt-worker-4"), "worker-2");
}

TEST(PyTorchSegments, SegmentsBeyondTheMinimumAreElasticAndTheGangBindsWithoutThem) {
  // minAvailable 3 = the master and 2 workers: only worker-0 is required; 3 pods present bind.
  Json job = pytorch_job(6, {{"kai.scheduler/segment-size", "2"}});
  job["spec"]["runPolicy"] = {{"schedulingPolicy", {{"minAvailable", 3}}}};
  const CycleResult r =
      cycle({node("n1", 8), queue(), job, pytorch_pod("master", 0), pytorch_pod("worker", 0), pytorch_pod("worker", 1)});
  EXPECT_EQ(sub_groups_of(r), (std::vector<std::string>{"master:1", "worker:^3", "worker-0:2/worker",
                                                        "worker-1:0/worker", "worker-2:0/worker"}));
  EXPECT_EQ(r.decisions.size(), 3u);
}

TEST(PyTorchSegments, ARequiredSegmentMissingAPodHoldsTheWholeGang) {
  // minAvailable 4 = the master and 3 workers: segments worker-0 and worker-1 are required, 2 pods
  // each, so 4 pods present (worker-1 has 1) bind nothing; one worker leaf of 3 would bind them.
  Json job = pytorch_job(4, {{"kai.scheduler/segment-size", "2"}});
  job["spec"]["runPolicy"] = {{"schedulingPolicy", {{"minAvailable", 4}}}};
  const Json pods = Json::array({pytorch_pod("master", 0), pytorch_pod("worker", 0), pytorch_pod("worker", 1),
                                 pytorch_pod("worker", 2)});
  Json items = {node("n1", 8), queue(), job};
  for (const Json& p : pods) items.push_back(p);
  EXPECT_EQ(cycle(items).decisions.size(), 0u);
  items[2] = pytorch_job(4, Json::object());
  items[2]["spec"]["runPolicy"] = {{"schedulingPolicy", {{"minAvailable", 4}}}};
  EXPECT_EQ(cycle(items).decisions.size(), 4u);
}

TEST(PyTorchSegments, ThePodsAnnotationWinsAndTheSegmentsCarryTheTopologyLevels) {
  const CycleResult r = cycle({node("n1", 8), queue(),
                               pytorch_job(4,
                                           {{"kai.scheduler/segment-size", "4"},
                                            {"kai.scheduler/segment-topology-required-placement", "rack"}},
                                           {{"kai.scheduler/topology", "dc"}}),
                               pytorch_pod("worker", 3, {{"kai.scheduler/segment-size", "2"}})});
  EXPECT_EQ(sub_groups_of(r), (std::vector<std::string>{"master:1", "worker:^2", "worker-0:2/worker@rack",
                                                        "worker-1:2/worker@rack"}));
  EXPECT_EQ(pod_sub_groups(r).at("ns/pt-worker-3"), "worker-1");
}

/// A node in rack `rack` of Topology "dc" (one level, the rack label).
Json rack_node(const std::string& name, int gpus, const std::string& rack) {
  Json n = node(name, gpus);
  n["metadata"]["labels"] = {{"kubernetes.io/hostname", name}, {"topology.kubernetes.io/rack", rack}};
  return n;
}

Json rack_topology() {
  return {{"apiVersion", "kai.scheduler/v1alpha1"},
          {"kind", "Topology"},
          {"metadata", {{"name", "dc"}, {"uid", "uid-dc"}}},
          {"spec", {{"levels", Json::array({{{"nodeLabel", "topology.kubernetes.io/rack"}, {"alias", "rack"}}})}}}};
}

TEST(PyTorchSegments, EachSegmentLandsInsideOneRackAndASegmentNoRackHoldsWaits) {
  // KAI's single-level example (docs/topology.md "Segments"): the Worker template names the topology
  // and segments of two workers that require a rack. Rack r1 holds 3 GPUs on one node, r2 a node of
  // 2 GPUs and one of 1: binpack puts the master on the 1-GPU node, and each segment needs a rack
  // of its own.
  const Json job = pytorch_job(4, {{"kai.scheduler/topology", "dc"},
                                   {"kai.scheduler/segment-size", "2"},
                                   {"kai.scheduler/segment-topology-required-placement", "rack"}});
  Json items = {rack_node("n1", 3, "r1"), rack_node("n2", 2, "r2"), rack_node("n3", 1, "r2"), rack_topology(), queue(),
                job, pytorch_pod("master", 0)};
  for (int i = 0; i < 4; ++i) items.push_back(pytorch_pod("worker", i));
  const CycleResult r = cycle(items);
  std::string reasons;
  for (const auto& u : r.unschedulable)
    for (const auto& reason : u.reasons) reasons += u.pod_group + " " + reason.reason + ": " + reason.message + "\n";
  ASSERT_EQ(r.decisions.size(), 5u) << reasons;
  std::map<std::string, std::string> rack_of_node = {{"n1", "r1"}, {"n2", "r2"}, {"n3", "r2"}};
  std::map<std::string, std::set<std::string>> racks_of_segment;
  const auto sub_groups = pod_sub_groups(r);
  for (const auto& d : r.decisions) racks_of_segment[sub_groups.at(d.pod)].insert(rack_of_node.at(d.node));
  EXPECT_EQ(racks_of_segment.at("worker-0").size(), 1u);
  EXPECT_EQ(racks_of_segment.at("worker-1").size(), 1u);
  EXPECT_NE(racks_of_segment.at("worker-0"), racks_of_segment.at("worker-1"));

  // Racks of one GPU each: no rack holds a segment, so nothing of the job is placed.
  items[0] = rack_node("n1", 1, "r1");
  items[1] = rack_node("n2", 1, "r2");
  items[2] = rack_node("n3", 1, "r3");
  items.push_back(rack_node("n4", 1, "r4"));
  items.push_back(rack_node("n5", 1, "r5"));
  EXPECT_EQ(cycle(items).decisions.size(), 0u);
}

TEST(PyTorchSegments, WithoutASegmentSizeTheWorkersAreOneLeaf) {
  const CycleResult r = cycle({node("n1", 8), queue(), pytorch_job(3, Json::object()), pytorch_pod("worker", 2)});
  EXPECT_EQ(sub_groups_of(r), (std::vector<std::string>{"master:1", "worker:3"}));
  EXPECT_EQ(pod_sub_groups(r).at("ns/pt-worker-2"), "worker");
}

TEST(PyTorchSegments, ASizeThatIsNotAPositiveIntegerOrAWorkerWithoutIndexIsRefusedWithAReason) {
  CycleResult r = cycle({node("n1", 8), queue(), pytorch_job(4, {{"kai.scheduler/segment-size", "0"}}),
                         pytorch_pod("worker", 0)});
  EXPECT_NE(refusal(r).find("segment-size \"0\" is not a positive integer"), std::string::npos) << refusal(r);
  EXPECT_EQ(r.decisions.size(), 0u);
  Json unindexed = pytorch_pod("worker", 0);
  unindexed["metadata"]["labels"].erase("training.kubeflow.org/replica-index");
  r = cycle({node("n1", 8), queue(), pytorch_job(4, {{"kai.scheduler/segment-size", "2"}}), unindexed});
  EXPECT_NE(refusal(r).find("no valid training.kubeflow.org/replica-index"), std::string::npos) << refusal(r);
}

TEST(LeaderWorkerSegments, LeaderWorkerPolicyPutsTheLeaderAndItsWorkersUnderTheFirstSegment) {
  // size 5: workers 1..4 divide into segments of 2, so the leader rides in segment-0 as an extra member.
  const CycleResult r = cycle({node("n1", 8), queue(), lws(5, {{"subGroupSize", 2}}), lws_pod(0), lws_pod(1),
                               lws_pod(3)});
  EXPECT_EQ(sub_groups_of(r), (std::vector<std::string>{"segment-0:^2", "segment-1:2", "leader:1/segment-0",
                                                        "workers:2/segment-0"}));
  const auto pods = pod_sub_groups(r);
  EXPECT_EQ(pods.at("ns/lws-0-0"), "leader");
  EXPECT_EQ(pods.at("ns/lws-0-1"), "workers");
  EXPECT_EQ(pods.at("ns/lws-0-3"), "segment-1");
}

TEST(LeaderWorkerSegments, UnevenWorkersLetTheLeaderTakeTheFirstPlace) {
  // size 4 in segments of 2: {0,1} {2,3}.
  const CycleResult r = cycle({node("n1", 8), queue(), lws(4, {{"subGroupSize", 2}}), lws_pod(2)});
  EXPECT_EQ(sub_groups_of(r), (std::vector<std::string>{"segment-0:^2", "segment-1:2", "leader:1/segment-0",
                                                        "workers:1/segment-0"}));
  EXPECT_EQ(pod_sub_groups(r).at("ns/lws-0-2"), "segment-1");
}

TEST(LeaderWorkerSegments, OneSegmentHoldsExactlyTheGroupsPods) {
  // size 3 in segments of 2: one segment, the leader and 2 workers (KAI asks 3 workers here: a
  // difference named in docs/pod-grouping.md).
  const CycleResult r = cycle({node("n1", 8), queue(), lws(3, {{"subGroupSize", 2}}), lws_pod(0), lws_pod(1),
                               lws_pod(2)});
  EXPECT_EQ(sub_groups_of(r), (std::vector<std::string>{"segment-0:^2", "leader:1/segment-0", "workers:2/segment-0"}));
  EXPECT_EQ(r.decisions.size(), 3u);
}

TEST(LeaderWorkerSegments, LeaderExcludedKeepsTheLeaderApartAndNeedsEvenSegments) {
  CycleResult r = cycle({node("n1", 8), queue(),
                         lws(5, {{"subGroupSize", 2}, {"subGroupPolicyType", "LeaderExcluded"}}), lws_pod(0),
                         lws_pod(2), lws_pod(3)});
  EXPECT_EQ(sub_groups_of(r), (std::vector<std::string>{"leader:1", "segment-0:2", "segment-1:2"}));
  const auto pods = pod_sub_groups(r);
  EXPECT_EQ(pods.at("ns/lws-0-0"), "leader");
  EXPECT_EQ(pods.at("ns/lws-0-2"), "segment-0");
  EXPECT_EQ(pods.at("ns/lws-0-3"), "segment-1");
  r = cycle({node("n1", 8), queue(), lws(4, {{"subGroupSize", 2}, {"subGroupPolicyType", "LeaderExcluded"}}),
             lws_pod(1)});
  EXPECT_NE(refusal(r).find("LeaderExcluded needs the 3 workers to divide into segments of 2"), std::string::npos)
      << refusal(r);
}

TEST(LeaderWorkerSegments, TheSizeComesFromTheAnnotationsWhenTheSpecHasNoneAndIsChecked) {
  CycleResult r = cycle({node("n1", 8), queue(), lws(5, nullptr, {{"kai.scheduler/segment-size", "2"}}), lws_pod(1)});
  EXPECT_EQ(sub_groups_of(r).size(), 4u);
  r = cycle({node("n1", 8), queue(), lws(5, nullptr, Json::object(), {{"kai.scheduler/segment-size", "4"}}),
             lws_pod(1)});
  EXPECT_EQ(sub_groups_of(r), (std::vector<std::string>{"segment-0:^2", "leader:1/segment-0", "workers:4/segment-0"}));
  r = cycle({node("n1", 8), queue(), lws(5, {{"subGroupSize", 6}}), lws_pod(1)});
  EXPECT_NE(refusal(r).find("segment size 6 must be above 1 and at most the group size 5"), std::string::npos)
      << refusal(r);
  r = cycle({node("n1", 8), queue(), lws(5, nullptr, {{"kai.scheduler/segment-size", "two"}}), lws_pod(1)});
  EXPECT_NE(refusal(r).find("\"two\" is not an integer"), std::string::npos) << refusal(r);
}

TEST(LeaderWorkerSegments, SegmentsCarryTheTopologyFromTheWorkerTemplate) {
  const CycleResult r = cycle({node("n1", 8), queue(),
                               lws(5, {{"subGroupSize", 2}}), lws_pod(1)});
  EXPECT_EQ(sub_groups_of(r)[1], "segment-1:2");
  const CycleResult t =
      cycle({node("n1", 8), queue(),
             lws(5, {{"subGroupSize", 2}}, {{"kai.scheduler/topology", "dc"}},
                 {{"kai.scheduler/segment-topology-required-placement", "rack"}}),
             lws_pod(1)});
  EXPECT_EQ(sub_groups_of(t), (std::vector<std::string>{"segment-0:^2@rack", "segment-1:2@rack",
                                                        "leader:1/segment-0", "workers:2/segment-0"}));
}

/// A PodGroup object an earlier KAI left: `sub_groups` empty for the flat shapes.
Json pod_group(const std::string& name, const std::string& owner_kind, Json sub_groups = Json::array()) {
  Json spec = {{"minMember", 1}, {"queue", "q"}};
  if (!sub_groups.empty()) spec["subGroups"] = sub_groups;
  return {{"apiVersion", "scheduling.run.ai/v2alpha2"},
          {"kind", "PodGroup"},
          {"metadata",
           {{"name", name},
            {"namespace", "ns"},
            {"uid", "uid-pg-" + name},
            {"ownerReferences", owner_ref(owner_kind == "Pod" ? "v1" : "x/v1", owner_kind, "owner")}}},
          {"spec", spec}};
}

Json batch_job() {
  return {{"apiVersion", "batch/v1"},
          {"kind", "Job"},
          {"metadata", {{"name", "batch"}, {"namespace", "ns"}, {"uid", "uid-batch"}}},
          {"spec", {{"parallelism", 2}}}};
}

Json job_pod(const std::string& name) { return pod(name, Json::object(), owner_ref("batch/v1", "Job", "batch")); }

TEST(LegacyPodGroups, AJobPodWithItsOwnEarlierPodGroupKeepsItTheOthersJoinTheJobsGroup) {
  const Json items = {node("n1", 8), queue(), batch_job(), pod_group("pg-batch-0-uid-batch", "Job"),
                      job_pod("batch-0"), job_pod("batch-1")};
  auto groups = pod_groups(cycle(items));
  EXPECT_EQ(groups.at("ns/batch-0"), "ns/pg-batch-0-uid-batch");
  EXPECT_EQ(groups.at("ns/batch-1"), "ns/pg-batch-uid-batch");
  GrouperFlags off;
  off.search_legacy_pod_groups = false;
  groups = pod_groups(cycle(items, off));
  EXPECT_EQ(groups.at("ns/batch-0"), "ns/pg-batch-uid-batch");
}

Json jobset(const std::string& startup_order) {
  Json rj = {{"name", "workers"},
             {"replicas", 2},
             {"template", {{"spec", {{"parallelism", 2}, {"template", {{"spec", Json::object()}}}}}}}};
  return {{"apiVersion", "jobset.x-k8s.io/v1alpha2"},
          {"kind", "JobSet"},
          {"metadata", {{"name", "js"}, {"namespace", "ns"}, {"uid", "uid-js"}}},
          {"spec", {{"replicatedJobs", Json::array({rj})}, {"startupPolicy", {{"startupPolicyOrder", startup_order}}}}}};
}

Json jobset_pod(int job_index) {
  return pod("js-workers-" + std::to_string(job_index),
             {{"jobset.sigs.k8s.io/replicatedjob-name", "workers"},
              {"jobset.sigs.k8s.io/job-index", std::to_string(job_index)}},
             owner_ref("jobset.x-k8s.io/v1alpha2", "JobSet", "js"));
}

TEST(LegacyPodGroups, AJobSetWithAFlatEarlierPodGroupStaysFlat) {
  CycleResult r = cycle({node("n1", 8), queue(), jobset("AnyOrder"), pod_group("pg-js-uid-js", "JobSet"),
                         jobset_pod(0)});
  ASSERT_EQ(r.group_writes.size(), 1u);
  EXPECT_EQ(r.group_writes[0].group, "ns/pg-js-uid-js");
  EXPECT_TRUE(sub_groups_of(r).empty());
  // InOrder: one flat group per replicatedJob.
  r = cycle({node("n1", 8), queue(), jobset("InOrder"), pod_group("pg-js-uid-js-workers", "JobSet"), jobset_pod(1)});
  EXPECT_EQ(pod_groups(r).at("ns/js-workers-1"), "ns/pg-js-uid-js-workers");
  EXPECT_TRUE(sub_groups_of(r).empty());
  // A PodGroup of the current shape (with subgroups) is not legacy.
  r = cycle({node("n1", 8), queue(), jobset("AnyOrder"),
             pod_group("pg-js-uid-js", "JobSet", Json::array({{{"name", "workers"}, {"minSubGroup", 2}}})),
             jobset_pod(0)});
  EXPECT_EQ(sub_groups_of(r).size(), 3u);
}

Json ray_cluster() {
  return {{"apiVersion", "ray.io/v1"},
          {"kind", "RayCluster"},
          {"metadata", {{"name", "rc"}, {"namespace", "ns"}, {"uid", "uid-rc"}}},
          {"spec",
           {{"headGroupSpec", {{"template", {{"spec", Json::object()}}}}},
            {"workerGroupSpecs",
             Json::array({{{"groupName", "gpu"}, {"replicas", 2}, {"template", {{"spec", Json::object()}}}}})}}}};
}

TEST(LegacyPodGroups, ARayClusterWithAnEarlierPodGroupWithoutSubgroupsKeepsThatShape) {
  const Json head = pod("rc-head", {{"ray.io/group", "headgroup"}}, owner_ref("ray.io/v1", "RayCluster", "rc"));
  CycleResult r = cycle({node("n1", 8), queue(), ray_cluster(), head});
  EXPECT_EQ(sub_groups_of(r), (std::vector<std::string>{"headgroup:1", "gpu:2"}));
  r = cycle({node("n1", 8), queue(), ray_cluster(), pod_group("pg-rc-uid-rc", "RayCluster"), head});
  ASSERT_EQ(r.group_writes.size(), 1u);
  EXPECT_TRUE(sub_groups_of(r).empty());
  EXPECT_EQ(Json::parse(r.group_writes[0].object_json)["spec"]["minMember"], 3);
}

Json revision() {
  return {{"apiVersion", "serving.knative.dev/v1"},
          {"kind", "Revision"},
          {"metadata",
           {{"name", "svc-001"},
            {"namespace", "ns"},
            {"uid", "uid-svc-001"},
            {"annotations", {{"autoscaling.knative.dev/min-scale", "2"}}},
            {"ownerReferences", owner_ref("serving.knative.dev/v1", "Configuration", "svc")}}}};
}

Json knative_pod(const std::string& name, const std::string& group = "") {
  Json annotations = Json::object();
  if (!group.empty()) annotations["pod-group-name"] = group;
  return pod(name, {{"serving.knative.dev/revision", "svc-001"}},
             owner_ref("serving.knative.dev/v1", "Service", "svc"), annotations);
}

Json knative_service() {
  return {{"apiVersion", "serving.knative.dev/v1"},
          {"kind", "Service"},
          {"metadata", {{"name", "svc"}, {"namespace", "ns"}, {"uid", "uid-svc"}}}};
}

TEST(LegacyPodGroups, AKnativeRevisionIsOneGangUnlessItsPodsAlreadyHaveOneGroupEach) {
  CycleResult r = cycle({node("n1", 8), queue(), knative_service(), revision(), knative_pod("a"), knative_pod("b")});
  EXPECT_EQ(pod_groups(r).at("ns/a"), "ns/pg-svc-001-uid-svc-001");
  EXPECT_EQ(pod_groups(r).at("ns/b"), "ns/pg-svc-001-uid-svc-001");
  // Two pods already in two groups of their own: the revision stays grouped per pod.
  r = cycle({node("n1", 8), queue(), knative_service(), revision(), pod_group("pg-a-uid-a", "Pod"),
             pod_group("pg-b-uid-b", "Pod"), knative_pod("a", "pg-a-uid-a"), knative_pod("b", "pg-b-uid-b"),
             knative_pod("c")});
  EXPECT_EQ(pod_groups(r).at("ns/c"), "ns/pg-c-uid-c");
  // One pod in a group owned by a Pod: per pod as well.
  r = cycle({node("n1", 8), queue(), knative_service(), revision(), pod_group("pg-a-uid-a", "Pod"),
             knative_pod("a", "pg-a-uid-a"), knative_pod("c")});
  EXPECT_EQ(pod_groups(r).at("ns/c"), "ns/pg-c-uid-c");
  // --knative-gang-schedule=false: per pod from the start.
  GrouperFlags off;
  off.knative_gang_schedule = false;
  r = cycle({node("n1", 8), queue(), knative_service(), revision(), knative_pod("a"), knative_pod("b")}, off);
  EXPECT_EQ(pod_groups(r).at("ns/a"), "ns/pg-a-uid-a");
  EXPECT_EQ(pod_groups(r).at("ns/b"), "ns/pg-b-uid-b");
  EXPECT_EQ(r.decisions.size(), 2u);
}

TEST(TopOwnerMetadata, NamesTheOwnerInKaisLinesWithEmptyValuesQuoted) {
  model::WorkloadOwner job;
  job.meta.name = "train-1";
  job.meta.uid = "u-1";
  job.group = "batch";
  job.version = "v1";
  job.kind = "Job";
  EXPECT_EQ(top_owner_metadata(job), "name: train-1\nuid: u-1\ngroup: batch\nversion: v1\nkind: Job\n");
  model::WorkloadOwner pod;
  pod.meta.name = "p";
  pod.version = "v1";
  pod.kind = "Pod";
  EXPECT_EQ(top_owner_metadata(pod), "name: p\nuid: \"\"\ngroup: \"\"\nversion: v1\nkind: Pod\n");
}

}  // namespace
}  // namespace kai::core
