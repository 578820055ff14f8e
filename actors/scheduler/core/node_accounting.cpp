#include "actors/scheduler/core/node_accounting.hpp"

#include <algorithm>

namespace kai::core {
namespace {

// What one shared device takes from the node's whole-GPU idle and releasing capacity, by the state of
// the tasks on it. A device whose tasks are all releasing is releasing capacity; a device holding only
// pipelined tasks was carved from releasing capacity.
struct DeviceShare {
  int64_t idle_taken = 0;
  int64_t releasing_added = 0;
};

DeviceShare device_share(const SharedGpu& g) {
  if (g.empty()) return {};
  if (g.active_tasks > 0) return {1000, 0};
  if (g.releasing_tasks > 0) return {1000, g.pipelined_tasks > 0 ? 0 : 1000};
  // No task holds the device: an orphaned reservation pod does, or releases it while terminating.
  if (g.reservations > 0) return {1000, 0};
  if (g.releasing_reservations > 0) return {1000, g.pipelined_tasks > 0 ? 0 : 1000};
  return {0, -1000};
}

SharedGpu& group_of(NodeInfo& node, const std::string& group) {
  SharedGpu* g = node.find_group(group);
  if (g != nullptr) return *g;
  node.shared_gpus.push_back(SharedGpu{group});
  return node.shared_gpus.back();
}

/// Moves the node's whole-GPU figures by what the device's change of state takes or gives.
void account_device_change(NodeInfo& node, const DeviceShare& before, const SharedGpu& g) {
  const DeviceShare after = device_share(g);
  node.idle.milli_gpu -= after.idle_taken - before.idle_taken;
  node.used.milli_gpu += after.idle_taken - before.idle_taken;
  node.releasing.milli_gpu += after.releasing_added - before.releasing_added;
  if (g.empty()) node.shared_gpus.erase(node.shared_gpus.begin() + (&g - node.shared_gpus.data()));
}

void apply_shared(NodeInfo& node, const TaskInfo& task, int sign) {
  for (const auto& group : task.gpu_groups) {
    SharedGpu* g = &group_of(node, group);
    const DeviceShare before = device_share(*g);
    const int64_t portion = sign * task.placed_portion;
    switch (task.status) {
      case PodStatus::kReleasing:
        g->used += portion;
        g->releasing += portion;
        g->releasing_tasks += sign;
        break;
      case PodStatus::kPipelined:
        g->pipelined += portion;
        g->pipelined_tasks += sign;
        break;
      default:
        g->used += portion;
        g->active_tasks += sign;
        break;
    }
    account_device_change(node, before, *g);
  }
}

void apply(NodeInfo& node, const TaskInfo& task, int sign) {
  Resources req = task.req;
  if (sign < 0) {
    Resources zero;
    req = zero - req;
  }
  switch (task.status) {
    case PodStatus::kReleasing:
      node.releasing += req;
      node.idle -= req;
      break;
    case PodStatus::kPipelined:
      node.releasing -= req;
      break;
    default:
      node.idle -= req;
      break;
  }
  node.used += req;
  if (task.gpu.is_shared()) apply_shared(node, task, sign);
}

}  // namespace

void node_add_task(NodeInfo& node, const TaskInfo& task) {
  apply(node, task, +1);
}
void node_remove_task(NodeInfo& node, const TaskInfo& task) {
  apply(node, task, -1);
}

namespace {

void count_reservation(NodeInfo& node, const std::string& group, bool terminating, int sign) {
  SharedGpu& g = group_of(node, group);
  const DeviceShare before = device_share(g);
  (terminating ? g.releasing_reservations : g.reservations) += sign;
  account_device_change(node, before, g);
}

}  // namespace

void node_add_reservation(NodeInfo& node, const std::string& group, bool terminating) {
  count_reservation(node, group, terminating, +1);
}

void node_remove_reservation(NodeInfo& node, const std::string& group, bool terminating) {
  count_reservation(node, group, terminating, -1);
}

SharedGpu* NodeInfo::find_group(const std::string& group) {
  for (auto& g : shared_gpus) {
    if (g.group == group) return &g;
  }
  return nullptr;
}
const SharedGpu* NodeInfo::find_group(const std::string& group) const {
  return const_cast<NodeInfo*>(this)->find_group(group);
}

int64_t NodeInfo::non_allocated_gpu_milli() const {
  int64_t free = std::max<int64_t>(0, idle.milli_gpu + releasing.milli_gpu);
  for (const auto& g : shared_gpus) free += std::max<int64_t>(0, g.free_with_releasing());
  return free;
}

}  // namespace kai::core
