#include "actors/scheduler/core/apply_session.hpp"

#include <set>

namespace kai::core {

void apply_session(model::ClusterObjects& objects, const Session& ssn) {
  std::set<size_t> gone;
  for (uint32_t id = 0; id < ssn.tasks.size(); ++id) {
    const TaskInfo& t = ssn.tasks[id];
    if (t.ghost || t.pod == nullptr) continue;
    const size_t index = static_cast<size_t>(t.pod - objects.pods.data());
    if (index >= objects.pods.size()) continue;
    model::Pod& pod = objects.pods[index];
    switch (t.status) {
      case PodStatus::kBinding:
      case PodStatus::kAllocated:
      case PodStatus::kBound:
        pod.node_name = t.node == kNoNode ? pod.node_name : ssn.nodes[t.node].name;
        pod.phase = "Running";
        if (t.gpu.is_shared()) {
          if (t.gpu_groups.size() == 1) {
            pod.meta.labels[model::kGpuGroupLabel] = t.gpu_groups.front();
          } else {
            for (const auto& g : t.gpu_groups) pod.meta.labels[std::string(model::kGpuGroupLabel) + "/" + g] = g;
          }
        }
        break;
      case PodStatus::kReleasing:
        if (ssn.moved_to(id) != nullptr) {
          // Moved by consolidation: its workload recreates it, pending, to land where it was pipelined.
          pod.node_name.clear();
          pod.phase = "Pending";
          pod.meta.deletion_timestamp.reset();
        } else {
          gone.insert(index);
        }
        break;
      default:
        break;
    }
  }
  // Bind requests are consumed by binding.
  objects.bind_requests.clear();
  for (const auto& [job_id, updates] : ssn.annotation_updates) {
    const model::PodGroup* pg = ssn.jobs[job_id].object;
    if (pg == nullptr) continue;
    const size_t index = static_cast<size_t>(pg - objects.pod_groups.data());
    if (index >= objects.pod_groups.size()) continue;
    auto& annotations = objects.pod_groups[index].meta.annotations;
    for (const auto& [key, value] : updates) {
      if (value) {
        annotations[key] = *value;
      } else {
        annotations.erase(key);
      }
    }
  }
  std::vector<model::Pod> kept;
  kept.reserve(objects.pods.size() - gone.size());
  for (size_t i = 0; i < objects.pods.size(); ++i) {
    if (!gone.count(i)) kept.push_back(std::move(objects.pods[i]));
  }
  objects.pods = std::move(kept);
}

}  // namespace kai::core
