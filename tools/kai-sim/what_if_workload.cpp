#include "tools/kai-sim/what_if_workload.hpp"

#include <set>

#include "k8s/model/codec.hpp"

namespace kai::sim {
namespace {

std::string key_of(const model::ObjectMeta& meta) { return meta.namespace_ + "/" + meta.name; }

void fill_meta(model::ObjectMeta& meta, const char* kind, int64_t now) {
  if (meta.namespace_.empty()) meta.namespace_ = "default";
  // The same file gives the same uid, so that two runs on the same input print the same answer.
  if (meta.uid.empty()) meta.uid = std::string("what-if-") + kind + "-" + meta.namespace_ + "-" + meta.name;
  if (meta.creation_timestamp == 0) meta.creation_timestamp = now;
}

/// The first object of another kind than Pod and PodGroup, named as "Kind namespace/name"; empty if none.
std::string other_kind(const model::ClusterObjects& w) {
  if (!w.skipped.empty()) return w.skipped.front();
  if (!w.nodes.empty()) return "Node " + w.nodes.front().meta.name;
  if (!w.queues.empty()) return "Queue " + w.queues.front().meta.name;
  if (!w.priority_classes.empty()) return "PriorityClass " + w.priority_classes.front().meta.name;
  if (!w.bind_requests.empty()) return "BindRequest " + key_of(w.bind_requests.front().meta);
  if (!w.owners.empty()) return w.owners.front().kind + " " + key_of(w.owners.front().meta);
  if (!w.topologies.empty()) return "Topology " + w.topologies.front().meta.name;
  if (!w.namespaces.empty()) return "Namespace " + w.namespaces.front().meta.name;
  return {};
}

template <class T>
model::Status check_names(const std::vector<T>& workload, const std::vector<T>& cluster, const char* kind) {
  std::set<std::string> existing;
  for (const T& x : cluster) existing.insert(key_of(x.meta));
  std::set<std::string> seen;
  for (const T& x : workload) {
    const std::string key = key_of(x.meta);
    if (existing.count(key) != 0) return model::Status::error(std::string(kind) + " " + key + ": already exists in the cluster");
    if (!seen.insert(key).second) return model::Status::error(std::string(kind) + " " + key + ": appears twice in the workload");
  }
  return model::Status::ok();
}

}  // namespace

model::Result<model::ClusterObjects> read_workload(std::string_view text, const model::ClusterObjects& cluster,
                                                   const WorkloadDefaults& defaults) {
  auto decoded = model::decode_snapshot(text);
  if (!decoded) return decoded.status();
  model::ClusterObjects w = std::move(decoded).value();
  if (auto other = other_kind(w); !other.empty()) {
    return model::Status::error(other + ": not a Pod or PodGroup (a workload holds only these)");
  }
  if (w.pods.empty()) return model::Status::error("no pods (a workload needs at least one Pod)");
  for (model::Pod& pod : w.pods) {
    fill_meta(pod.meta, "pod", defaults.now);
    if (!pod.node_name.empty()) {
      return model::Status::error("Pod " + key_of(pod.meta) + ": already bound to node " + pod.node_name +
                                  " (spec.nodeName): what-if places pods that are not submitted yet");
    }
    if (pod.phase.empty()) pod.phase = "Pending";
    if (pod.phase != "Pending") {
      return model::Status::error("Pod " + key_of(pod.meta) + ": phase " + pod.phase + ", not Pending");
    }
    if (pod.scheduler_name.empty()) pod.scheduler_name = defaults.scheduler_name;
  }
  for (model::PodGroup& group : w.pod_groups) fill_meta(group.meta, "podgroup", defaults.now);
  if (auto s = check_names(w.pods, cluster.pods, "Pod"); !s) return s;
  if (auto s = check_names(w.pod_groups, cluster.pod_groups, "PodGroup"); !s) return s;
  return w;
}

}  // namespace kai::sim
