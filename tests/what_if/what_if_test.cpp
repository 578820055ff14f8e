// kai-sim --what-if on a snapshot of the demo cluster with running pods (docs/what-if.md).
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <random>
#include <set>

#include "actors/scheduler/core/simulation.hpp"
#include "k8s/model/codec.hpp"
#include "k8s/model/time.hpp"
#include "tests/what_if/demo_cluster.hpp"
#include "tools/kai-sim/sim_report.hpp"
#include "tools/kai-sim/what_if_command.hpp"
#include "tools/kai-sim/what_if_report.hpp"
#include "tools/kai-sim/what_if_workload.hpp"

namespace kai::sim {
namespace {

using testing::demo_cluster_yaml;
using testing::running_pod;
using testing::at;
using testing::workload_pod;

/// team-b holds all of gpu-node-1 until its deadline (started 08:00, 2 h; created at 07:50, so a
/// deadline counted from the creation would say 09:50) and 2 GPUs of gpu-node-2 with no known end.
std::string cluster_yaml() {
  return demo_cluster_yaml() +
         running_pod("team-b", "b-1", "team-b", "gpu-node-1", 4, "2027-01-15T07:50:00Z", ", activeDeadlineSeconds: 7200",
                     ", startTime: \"2027-01-15T08:00:00Z\"") +
         running_pod("team-b", "b-2", "team-b", "gpu-node-2", 2, "2027-01-15T08:00:00Z");
}

model::Result<WhatIfAnswer> ask(const std::string& workload) {
  const std::string snapshot = cluster_yaml();
  auto cluster = model::decode_snapshot(snapshot);
  if (!cluster) return cluster.status();
  core::SessionOptions options;
  options.now = at("2027-01-15T09:00:00Z");
  WhatIfRequest request;
  request.workload_path = "workload.yaml";
  request.snapshot_text = snapshot;
  auto in = what_if_input(request, workload, std::move(cluster).value(), {}, options);
  if (!in) return in.status();
  return what_if(*in);
}

TEST(WhatIf, FitsNowOnTheNodeWithRoom) {
  auto a = ask(workload_pod("train", "test", 2));
  ASSERT_TRUE(a) << a.message();
  ASSERT_TRUE(a->first.fits);
  ASSERT_EQ(a->first.placements.size(), 1u);
  EXPECT_EQ(a->first.placements[0].pod, "default/train");
  EXPECT_EQ(a->first.placements[0].node, "gpu-node-2");
  EXPECT_EQ(a->first.placements[0].kind, "bind");
  EXPECT_TRUE(a->first.victims.empty());
  EXPECT_FALSE(a->earliest);
  EXPECT_EQ(render_what_if_text(*a),
            "If submitted at 2027-01-15T09:00:00Z:\nIt fits now:\n  default/train -> gpu-node-2 (bind)\n");
}

TEST(WhatIf, TheEarliestOfManyCompletionsIsFoundBySearching) {
  // Eight 1-GPU pods of queue test fill both nodes, started at 08:00; gpu-node-1's end at 10:00,
  // 11:00, 12:00 and 13:00, gpu-node-2's at 10:30, 11:30, 12:30 and 13:30. A 3-GPU pod fits once
  // three GPUs are free: at 11:00 (two on gpu-node-1, one on gpu-node-2), consolidation moves two
  // of gpu-node-2's pods onto gpu-node-1 and the pod takes gpu-node-2. Eight moments: the search
  // tries the last, then 10:00, 11:00 (fits), then 10:30 and halves down to 11:00.
  std::string snapshot = demo_cluster_yaml();
  const char* nodes[] = {"gpu-node-1", "gpu-node-2"};
  for (int n = 0; n < 2; ++n) {
    for (int i = 0; i < 4; ++i) {
      const int minutes = 120 + 60 * i + 30 * n;
      snapshot += running_pod("team-a", "r-" + std::to_string(n) + std::to_string(i), "test", nodes[n], 1,
                              "2027-01-15T08:00:00Z", ", activeDeadlineSeconds: " + std::to_string(minutes * 60),
                              ", startTime: \"2027-01-15T08:00:00Z\"");
    }
  }
  auto cluster = model::decode_snapshot(snapshot);
  ASSERT_TRUE(cluster) << cluster.message();
  core::SessionOptions options;
  options.now = at("2027-01-15T09:00:00Z");
  WhatIfRequest request;
  request.workload_path = "workload.yaml";
  request.snapshot_text = snapshot;
  auto in = what_if_input(request, workload_pod("big", "test", 3), std::move(cluster).value(), {}, options);
  ASSERT_TRUE(in) << in.message();
  const WhatIfAnswer a = what_if(*in);
  ASSERT_FALSE(a.first.fits);
  ASSERT_TRUE(a.earliest);
  EXPECT_EQ(a.earliest->at, at("2027-01-15T11:00:00Z"));
  ASSERT_EQ(a.earliest->placements.size(), 1u);
  EXPECT_EQ(a.earliest->placements[0].node, "gpu-node-2");
  ASSERT_EQ(a.earliest->victims.size(), 2u);
  for (const Victim& v : a.earliest->victims) EXPECT_EQ(v.action, "consolidation") << v.pod;
  EXPECT_EQ(a.finished, (std::vector<std::string>{"team-a/r-00", "team-a/r-10", "team-a/r-01"}));
}

TEST(WhatIf, ReclaimNamesTheVictimsAndWhy) {
  // test is under its quota of 4 and team-b over its own (6 of 4): test reclaims b-2's 2 GPUs.
  auto a = ask("apiVersion: v1\nkind: Pod\nmetadata: {name: claim, namespace: team-a, labels: "
               "{kai.scheduler/queue: test}}\nspec: {containers: [{name: main, resources: {limits: "
               "{nvidia.com/gpu: \"4\"}}}]}\n");
  ASSERT_TRUE(a) << a.message();
  ASSERT_TRUE(a->first.fits);
  ASSERT_EQ(a->first.victims.size(), 1u);
  const Victim& v = a->first.victims[0];
  EXPECT_EQ(v.pod, "team-b/b-2");
  EXPECT_EQ(v.queue, "team-b");
  EXPECT_EQ(v.action, "reclaim");
  EXPECT_NE(v.reason.find("Pod team-b/b-2 was preempted by workload team-a/"), std::string::npos) << v.reason;
  EXPECT_NE(v.reason.find("team-b uses <GPU: 6, CPU: "), std::string::npos) << v.reason;
  EXPECT_NE(v.reason.find("> with a quota of <GPU: 4, CPU: "), std::string::npos) << v.reason;
  ASSERT_EQ(a->first.placements.size(), 1u);
  EXPECT_EQ(a->first.placements[0].node, "gpu-node-2");
  EXPECT_EQ(a->first.placements[0].kind, "pipeline");
  EXPECT_NE(render_what_if_text(*a).find("It evicts 1 pod(s):\n  team-b/b-2 (queue team-b), reclaim for team-a/"),
            std::string::npos);
}

TEST(WhatIf, FitsWhenARunningPodsDeadlineEnds) {
  // team-b is over its quota, so it cannot reclaim: it waits for b-1's deadline, 08:00 + 2 h.
  auto a = ask(workload_pod("big", "team-b", 4));
  ASSERT_TRUE(a) << a.message();
  EXPECT_FALSE(a->first.fits);
  ASSERT_EQ(a->first.waiting.size(), 1u);
  EXPECT_EQ(a->first.waiting[0].queue, "team-b");
  ASSERT_FALSE(a->first.waiting[0].reasons.empty());
  EXPECT_NE(a->first.waiting[0].reasons[0].find("didn't have enough resources"), std::string::npos);
  ASSERT_TRUE(a->earliest);
  EXPECT_EQ(a->earliest->at, at("2027-01-15T10:00:00Z"));
  EXPECT_EQ(a->finished, std::vector<std::string>{"team-b/b-1"});
  ASSERT_EQ(a->earliest->placements.size(), 1u);
  EXPECT_EQ(a->earliest->placements[0].node, "gpu-node-1");
  const std::string text = render_what_if_text(*a);
  EXPECT_NE(text.find("Earliest at 2027-01-15T10:00:00Z (in 1h), after team-b/b-1 finish:\n"
                      "  default/big -> gpu-node-1 (bind)\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("No expected end: team-b/b-2\n"), std::string::npos) << text;
}

TEST(WhatIf, NeverFitsSaysHowManyGpusMustFreeUp) {
  // 9 GPUs on 8: after b-1 ends 6 are idle (b-2 keeps 2 with no known end), 3 short.
  auto a = ask(workload_pod("huge", "test", 9));
  ASSERT_TRUE(a) << a.message();
  EXPECT_FALSE(a->first.fits);
  EXPECT_FALSE(a->earliest);
  ASSERT_TRUE(a->last);
  EXPECT_EQ(a->last->at, at("2027-01-15T10:00:00Z"));
  ASSERT_EQ(a->last->waiting.size(), 1u);
  EXPECT_EQ(a->last->waiting[0].missing_gpus, 3);
  EXPECT_EQ(a->last->waiting[0].queue, "test");
  const std::string text = render_what_if_text(*a);
  EXPECT_NE(text.find("runs when 3 GPUs free up in queue test."), std::string::npos) << text;
  EXPECT_NE(text.find("didn't have enough resources"), std::string::npos) << text;
}

TEST(WhatIf, TheSameQuestionGivesTheSameAnswer) {
  auto a = ask(workload_pod("big", "team-b", 4));
  auto b = ask(workload_pod("big", "team-b", 4));
  ASSERT_TRUE(a && b);
  EXPECT_EQ(render_what_if_json(*a), render_what_if_json(*b));
  EXPECT_NE(render_what_if_json(*a).find("\"basis\": \"activeDeadlineSeconds\""), std::string::npos);
}

TEST(WhatIfWorkload, FillsWhatTheUserLeavesOut) {
  auto w = read_workload(workload_pod("train", "test", 1), {}, WorkloadDefaults{1234, "kai-scheduler"});
  ASSERT_TRUE(w) << w.message();
  ASSERT_EQ(w->pods.size(), 1u);
  const model::Pod& p = w->pods[0];
  EXPECT_EQ(p.meta.namespace_, "default");
  EXPECT_FALSE(p.meta.uid.empty());
  EXPECT_EQ(p.meta.creation_timestamp, 1234);
  EXPECT_EQ(p.phase, "Pending");
  EXPECT_EQ(p.scheduler_name, "kai-scheduler");
  auto again = read_workload(workload_pod("train", "test", 1), {}, WorkloadDefaults{1234, "kai-scheduler"});
  ASSERT_TRUE(again);
  EXPECT_EQ(again->pods[0].meta.uid, p.meta.uid);
}

TEST(WhatIfWorkload, RefusesNamingTheObject) {
  auto cluster = model::decode_snapshot(cluster_yaml());
  ASSERT_TRUE(cluster);
  const WorkloadDefaults d{1, "kai-scheduler"};
  auto message = [&](const std::string& text) {
    auto w = read_workload(text, *cluster, d);
    return w ? std::string("accepted") : w.message();
  };
  EXPECT_EQ(message("apiVersion: scheduling.run.ai/v2alpha2\nkind: PodGroup\nmetadata: {name: pg}\nspec: {minMember: 1}\n"),
            "no pods (a workload needs at least one Pod)");
  EXPECT_EQ(message("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: team-a}\n"),
            "Deployment team-a/web: not a Pod or PodGroup (a workload holds only these)");
  EXPECT_EQ(message(running_pod("team-a", "x", "test", "gpu-node-1", 1, "2027-01-15T08:00:00Z")),
            "Pod team-a/x: already bound to node gpu-node-1 (spec.nodeName): what-if places pods that are not "
            "submitted yet");
  EXPECT_EQ(message("apiVersion: v1\nkind: Pod\nmetadata: {name: b-1, namespace: team-b}\nspec: {containers: []}\n"),
            "Pod team-b/b-1: already exists in the cluster");
}

/// kai-sim's report lists pods and PodGroups by namespace/name, whatever order the snapshot gives
/// them in: names chosen so that the order of the strings differs from the order of their parts
/// ("a-1" < "a/..." < "a1") and from the snapshot's, many enough for the radix sort's own passes.
TEST(SimReport, ListsPodsAndPodGroupsByNamespaceThenName) {
  std::mt19937 rng(7);
  const std::vector<std::string> namespaces = {"a", "a-1", "a1", "b", "team-b", "team-b-2"};
  std::string snapshot = demo_cluster_yaml();
  std::vector<std::string> names;
  names.reserve(600);
  for (int i = 0; i < 600; ++i)
    names.push_back("p" + std::to_string(rng() % 100000) + "-" + std::to_string(i));
  for (const auto& name : names) {
    const std::string& ns = namespaces[rng() % namespaces.size()];
    snapshot += "---\napiVersion: v1\nkind: Pod\nmetadata: {name: " + name + ", namespace: " + ns +
                ", uid: u-" + ns + "-" + name +
                ", labels: {kai.scheduler/queue: test}}\nspec: {schedulerName: kai-scheduler, " +
                "containers: [{name: main, resources: {requests: {cpu: 10m}}}]}\nstatus: {phase: Pending}\n";
  }
  auto cluster = model::decode_snapshot(snapshot);
  ASSERT_TRUE(cluster) << cluster.message();
  core::SessionOptions options;
  options.now = at("2027-01-15T09:00:00Z");
  const auto sim = core::simulate(std::move(cluster).value(), options, 1);
  const auto report = nlohmann::json::parse(render_json(*sim.session, &sim.decisions));
  const auto keys_of = [](const nlohmann::json& list) {
    std::vector<std::string> keys;
    for (const auto& item : list)
      keys.push_back(item["namespace"].get<std::string>() + "/" + item["name"].get<std::string>());
    return keys;
  };
  const std::vector<std::string> pods = keys_of(report["pods"]);
  const std::vector<std::string> groups = keys_of(report["podGroups"]);
  ASSERT_EQ(pods.size(), names.size());
  ASSERT_GE(groups.size(), names.size());
  EXPECT_TRUE(std::is_sorted(pods.begin(), pods.end()));
  EXPECT_TRUE(std::is_sorted(groups.begin(), groups.end()));
  EXPECT_EQ(std::set<std::string>(pods.begin(), pods.end()).size(), pods.size());
}

}  // namespace
}  // namespace kai::sim
