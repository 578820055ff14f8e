// A pod's request as kube-scheduler counts it (actors/scheduler/core/session_builder.cpp): native
// sidecars (init containers with restartPolicy Always) run beside the containers, and each ordinary
// init container beside the sidecars started before it; amd.com/gpu is a GPU, as KAI counts it.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "actors/scheduler/core/cycle.hpp"
#include "k8s/model/codec.hpp"

namespace kai::core {
namespace {

using Json = nlohmann::json;

Json node(const std::string& cpu) {
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata", {{"name", "n1"}, {"uid", "uid-n1"}}},
          {"status",
           {{"allocatable", {{"cpu", cpu}, {"memory", "64Gi"}, {"pods", "110"}}},
            {"conditions", Json::array({{{"type", "Ready"}, {"status", "True"}}})}}}};
}

Json container(const std::string& name, const std::string& cpu, bool sidecar = false) {
  Json c = {{"name", name}, {"resources", {{"requests", {{"cpu", cpu}}}}}};
  if (sidecar) c["restartPolicy"] = "Always";
  return c;
}

/// Containers of 2 CPUs; a 1-CPU sidecar, then a 3-CPU init container: 2 + 1 while running, 3 + 1
/// while initialising, so 4 CPUs.
Json pod() {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", "p"}, {"namespace", "ns"}, {"uid", "uid-p"}, {"creationTimestamp", "2027-01-15T08:00:00Z"}}},
          {"spec",
           {{"schedulerName", "kai-scheduler"},
            {"initContainers", Json::array({container("proxy", "1", true), container("setup", "3")})},
            {"containers", Json::array({container("main", "2")})}}},
          {"status", {{"phase", "Pending"}}}};
}

Json queue(int gpu_limit = -1) {
  Json r = {{"quota", -1}, {"limit", -1}, {"overQuotaWeight", 1}};
  Json gpu = r;
  gpu["limit"] = gpu_limit;
  return {{"apiVersion", "scheduling.run.ai/v2"},
          {"kind", "Queue"},
          {"metadata", {{"name", "default-queue"}, {"uid", "uid-q"}}},
          {"spec", {{"resources", {{"gpu", gpu}, {"cpu", r}, {"memory", r}}}}}};
}

size_t binds_on(const std::string& cpu) {
  auto o = model::decode_snapshot(
      Json{{"apiVersion", "v1"}, {"kind", "List"}, {"items", Json::array({node(cpu), queue(), pod()})}}.dump());
  EXPECT_TRUE(o) << o.message();
  const model::ClusterObjects objects = std::move(o).value();
  CycleInput in;
  in.objects = model::ObjectRefs::of(objects);
  in.options.now = 1'800'000'000;
  const CycleResult r = run_cycle(in);
  for (const auto& u : r.unschedulable) {
    for (const auto& why : u.reasons) EXPECT_EQ(why.message.find("does not support"), std::string::npos) << why.message;
  }
  return r.decisions.size();
}

/// A node with `gpus` amd.com/gpu and a pod asking `want` of them, in a queue limited to 1 GPU.
size_t amd_binds(int gpus, int want) {
  Json n = node("4");
  n["status"]["allocatable"]["amd.com/gpu"] = std::to_string(gpus);
  Json p = pod();
  p["spec"].erase("initContainers");
  p["spec"]["containers"][0]["resources"]["limits"] = {{"amd.com/gpu", std::to_string(want)}};
  auto o = model::decode_snapshot(Json{{"apiVersion", "v1"}, {"kind", "List"}, {"items", Json::array({n, queue(1), p})}}.dump());
  EXPECT_TRUE(o) << o.message();
  const model::ClusterObjects objects = std::move(o).value();
  CycleInput in;
  in.objects = model::ObjectRefs::of(objects);
  in.options.now = 1'800'000'000;
  return run_cycle(in).decisions.size();
}

TEST(PodRequest, AnAmdGpuIsAGpuOnTheNodeAndInTheQueuesLimit) {
  EXPECT_EQ(amd_binds(2, 1), 1u);
  EXPECT_EQ(amd_binds(2, 2), 0u) << "two GPUs in a queue limited to one (an extended resource would pass)";
  EXPECT_EQ(amd_binds(0, 1), 0u) << "no GPU on the node";
}

TEST(PodRequest, ANativeSidecarIsCountedBesideTheContainersAndTheInitContainersAfterIt) {
  EXPECT_EQ(binds_on("4"), 1u) << "fits in 4 CPUs";
  EXPECT_EQ(binds_on("3500m"), 0u) << "needs 4 CPUs: the 3-CPU init container runs beside the sidecar";
}

}  // namespace
}  // namespace kai::core
