#include "actors/scheduler/core/grouping.hpp"

#include <map>
#include <set>
#include <tuple>
#include <unordered_map>

namespace kai::core {
namespace {

// Workload kinds the pod grouper turns into one gang per workload.
const std::set<std::string>& gang_kinds() {
  static const std::set<std::string> kinds = {"PyTorchJob", "TFJob",  "MPIJob",          "XGBoostJob",
                                              "PaddleJob",  "JAXJob", "TrainJob",        "RayCluster",
                                              "RayJob",     "JobSet", "LeaderWorkerSet", "Notebook"};
  return kinds;
}

const model::OwnerReference* controller_owner(const model::Pod& pod) {
  for (const auto& o : pod.meta.owner_references) {
    if (o.controller) return &o;
  }
  return pod.meta.owner_references.empty() ? nullptr : &pod.meta.owner_references.front();
}

std::string label(const model::Pod& pod, const char* key) {
  auto it = pod.meta.labels.find(key);
  return it == pod.meta.labels.end() ? std::string() : it->second;
}

std::string default_priority_class(const model::OwnerReference* owner) {
  if (owner == nullptr) return "train";
  if (owner->kind == "ReplicaSet" || owner->kind == "Deployment" || owner->kind == "Service")
    return "inference";
  if (owner->kind == "Notebook") return "build";
  return "train";
}

}  // namespace

int32_t builtin_priority_class_value(const std::string& name) {
  if (name == "train") return 50;
  if (name == "build-preemptible") return 75;
  if (name == "build") return 100;
  if (name == "inference") return 125;
  return -1;
}

std::vector<PodGroupAssignment> group_pods(const model::ObjectRefs& objects,
                                           const std::string& scheduler_name,
                                           const std::string& default_queue) {
  std::vector<PodGroupAssignment> out;
  // "namespace/name" -> index into out; '/' cannot occur in either part.
  std::unordered_map<std::string, size_t> by_name;
  by_name.reserve(objects.pod_groups.size() + objects.pods.size());
  auto key_of = [](const std::string& ns, const std::string& name) {
    std::string k;
    k.reserve(ns.size() + name.size() + 1);
    k.append(ns).push_back('/');
    k.append(name);
    return k;
  };
  for (const model::PodGroup* pg_ptr : objects.pod_groups) {
    const model::PodGroup& pg = *pg_ptr;
    auto key = key_of(pg.meta.namespace_, pg.meta.name);
    if (by_name.count(key)) continue;  // duplicate object: the first one wins
    by_name[key] = out.size();
    PodGroupAssignment a;
    a.namespace_ = pg.meta.namespace_;
    a.name = pg.meta.name;
    a.pod_group = &pg;
    out.push_back(std::move(a));
  }
  for (uint32_t i = 0; i < objects.pods.size(); ++i) {
    const model::Pod& pod = *objects.pods[i];
    if (pod.scheduler_name != scheduler_name) continue;
    std::string group_name;
    bool synthesised = false;
    const model::OwnerReference* owner = controller_owner(pod);
    if (auto it = pod.meta.annotations.find(model::kPodGroupNameAnnotation);
        it != pod.meta.annotations.end() && !it->second.empty()) {
      group_name = it->second;
    } else if (owner != nullptr && gang_kinds().count(owner->kind)) {
      group_name = "pg-" + owner->name + "-" + owner->uid;
      synthesised = true;
    } else {
      group_name = "pg-" + pod.meta.name + "-" + pod.meta.uid;
      synthesised = true;
    }
    auto key = key_of(pod.meta.namespace_, group_name);
    auto it = by_name.find(key);
    if (it == by_name.end()) {
      PodGroupAssignment a;
      a.namespace_ = pod.meta.namespace_;
      a.name = group_name;
      a.missing_pod_group = !synthesised;
      a.uid = synthesised && owner && gang_kinds().count(owner->kind) ? owner->uid : pod.meta.uid;
      a.queue = label(pod, model::kQueueLabel);
      if (a.queue.empty()) a.queue = label(pod, "project");
      a.queue_defaulted = a.queue.empty();
      if (a.queue_defaulted) a.queue = default_queue;
      a.priority_class_name = pod.priority_class_name;
      if (a.priority_class_name.empty()) a.priority_class_name = label(pod, "priorityClassName");
      if (a.priority_class_name.empty()) a.priority_class_name = default_priority_class(owner);
      a.preemptibility = label(pod, model::kPreemptibilityLabel);
      a.creation_timestamp = pod.meta.creation_timestamp;
      it = by_name.emplace(std::move(key), out.size()).first;
      out.push_back(std::move(a));
    }
    PodGroupAssignment& a = out[it->second];
    a.pods.push_back(i);
    if (a.pod_group == nullptr && !a.missing_pod_group) {
      // A gang of a workload kind needs all of its pods; a per-pod group needs its one pod.
      a.min_member = static_cast<int32_t>(a.pods.size());
      a.creation_timestamp = std::min(a.creation_timestamp, pod.meta.creation_timestamp);
    }
  }
  return out;
}

}  // namespace kai::core
