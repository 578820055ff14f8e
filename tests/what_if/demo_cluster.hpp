#pragma once
// The demo cluster (tools/kai-demo/manifests/cluster.yaml: 2 nodes x 4 GPUs, queues default ->
// {test, team-b}, quota 4 each) with running pods, as what-if's tests ask about it.

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "k8s/model/time.hpp"

namespace kai::sim::testing {

inline std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline std::string demo_cluster_yaml() {
  const char* root = std::getenv("KAI_SOURCE_DIR");
  return read_text(std::filesystem::path(root ? root : KAI_DEFAULT_SOURCE_DIR) / "tools" / "kai-demo" / "manifests" /
                   "cluster.yaml");
}

/// A running pod as YAML: `gpus` whole GPUs in `queue` on `node`; `extra_spec` / `extra_status` are
/// further flow-mapping fields (", activeDeadlineSeconds: 60"), `owner` the first owner's uid.
inline std::string running_pod(const std::string& ns, const std::string& name, const std::string& queue,
                               const std::string& node, int gpus, const std::string& created,
                               const std::string& extra_spec = "", const std::string& extra_status = "",
                               const std::string& owner = "") {
  std::string owners;
  if (!owner.empty()) owners = ", ownerReferences: [{apiVersion: batch/v1, kind: Job, name: " + owner + ", uid: " + owner + "}]";
  return "---\napiVersion: v1\nkind: Pod\nmetadata: {name: " + name + ", namespace: " + ns + ", uid: u-" + name +
         ", labels: {kai.scheduler/queue: " + queue + "}, creationTimestamp: \"" + created + "\"" + owners +
         "}\nspec: {schedulerName: kai-scheduler, nodeName: " + node +
         ", containers: [{name: main, resources: {limits: {nvidia.com/gpu: \"" + std::to_string(gpus) + "\"}}}]" +
         extra_spec + "}\nstatus: {phase: Running" + extra_status + "}\n";
}

/// A pending workload pod asking for `gpus` GPUs in `queue`, with only what a user writes.
inline std::string workload_pod(const std::string& name, const std::string& queue, int gpus) {
  return "apiVersion: v1\nkind: Pod\nmetadata: {name: " + name + ", labels: {kai.scheduler/queue: " + queue +
         "}}\nspec: {containers: [{name: main, resources: {limits: {nvidia.com/gpu: \"" + std::to_string(gpus) +
         "\"}}}]}\n";
}

/// Unix seconds of an RFC 3339 time the test spells out.
inline int64_t at(const char* rfc3339) { return model::parse_rfc3339(rfc3339).value(); }

}  // namespace kai::sim::testing
