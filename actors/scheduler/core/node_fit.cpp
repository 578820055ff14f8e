#include "actors/scheduler/core/node_fit.hpp"

#include <algorithm>

namespace kai::core {
namespace {

// cpu, memory, pods and scalars of the task against a + b (GPUs are checked separately); no temporaries
// because this runs for every node and task.
bool non_gpu_fits(const Resources& req, const Resources& a, const Resources* b) {
  const auto sum = [b](int64_t x, int64_t Resources::*f) { return b ? x + (*b).*f : x; };
  if (req.milli_cpu > sum(a.milli_cpu, &Resources::milli_cpu) ||
      req.memory > sum(a.memory, &Resources::memory) || req.pods > sum(a.pods, &Resources::pods)) {
    return false;
  }
  for (const auto& [id, v] : req.scalars) {
    if (v > a.scalar(id) + (b ? b->scalar(id) : 0)) return false;
  }
  return true;
}

// Whole devices free now and once releasing pods leave. Pipelined pods take from releasing capacity even
// when part of what they need is idle, so releasing may be negative: the sum is what is really free.
int64_t whole_free_devices(const NodeInfo& n) {
  return std::max<int64_t>(0, (n.idle.milli_gpu + n.releasing.milli_gpu) / 1000);
}
int64_t whole_idle_devices(const NodeInfo& n) {
  return std::min(whole_free_devices(n), std::max<int64_t>(0, n.idle.milli_gpu / 1000));
}

/// Devices a shared-GPU task could use on the node, counted without building the candidate list.
struct DeviceCounts {
  int64_t groups_later = 0;  ///< Existing groups with room once releasing pods leave.
  int64_t groups_now = 0;    ///< Existing groups with room now.
  int64_t whole_later = 0;
  int64_t whole_now = 0;
};

bool group_is_candidate(const SharedGpu& g, int64_t need) {
  // A device whose pods are all leaving is offered as a whole releasing device instead.
  return g.joinable(need);
}

DeviceCounts count_devices(const TaskInfo& task, const NodeInfo& node) {
  DeviceCounts c;
  const int64_t need = shared_portion_on(task, node);
  if (need <= 0 || need > 1000 || !node.has_gpus()) return c;
  for (const SharedGpu& g : node.shared_gpus) {
    if (!group_is_candidate(g, need)) continue;
    ++c.groups_later;
    c.groups_now += g.idle_portion() >= need;
  }
  c.whole_later = whole_free_devices(node);
  c.whole_now = whole_idle_devices(node);
  return c;
}

}  // namespace

int64_t shared_portion_on(const TaskInfo& task, const NodeInfo& node) {
  if (task.gpu.kind == GpuRequestKind::kFraction) return task.gpu.fraction_milli;
  if (task.gpu.kind == GpuRequestKind::kMemory) {
    if (task.gpu.memory_mib > node.gpu_memory_mib) return 1001;
    return memory_to_fraction_milli(task.gpu.memory_mib, node.gpu_memory_mib);
  }
  return 0;
}

GpuCandidates fitting_gpus(const TaskInfo& task, const NodeInfo& node) {
  GpuCandidates out;
  const int64_t need = shared_portion_on(task, node);
  if (need <= 0 || need > 1000 || !node.has_gpus()) return out;
  for (size_t i = 0; i < node.shared_gpus.size(); ++i) {
    const SharedGpu& g = node.shared_gpus[i];
    if (!group_is_candidate(g, need)) continue;
    out.candidates.push_back(GpuCandidate{static_cast<int32_t>(i), static_cast<double>(g.used) / 1000.0});
    out.fits_idle.push_back(g.idle_portion() >= need);
  }
  const int64_t idle = whole_idle_devices(node), free = whole_free_devices(node);
  for (int64_t i = 0; i < free; ++i) {
    out.candidates.push_back(GpuCandidate{-1, 0.0});
    out.fits_idle.push_back(i < idle);
  }
  return out;
}

bool has_fitting_shared_group(const TaskInfo& task, const NodeInfo& node) {
  const int64_t need = shared_portion_on(task, node);
  if (need <= 0 || need > 1000) return false;
  for (const SharedGpu& g : node.shared_gpus) {
    if (group_is_candidate(g, need)) return true;
  }
  return false;
}

bool fits_idle(const TaskInfo& task, const NodeInfo& node) {
  if (!task.gpu.is_shared())
    return task.req.milli_gpu <= node.idle.milli_gpu && non_gpu_fits(task.req, node.idle, nullptr);
  if (!non_gpu_fits(task.req, node.idle, nullptr)) return false;
  const DeviceCounts c = count_devices(task, node);
  return c.groups_now + c.whole_now >= task.gpu.num_devices;
}

bool fits_idle_or_releasing(const TaskInfo& task, const NodeInfo& node) {
  if (!task.gpu.is_shared()) {
    return task.req.milli_gpu <= node.idle.milli_gpu + node.releasing.milli_gpu &&
           non_gpu_fits(task.req, node.idle, &node.releasing);
  }
  if (!non_gpu_fits(task.req, node.idle, &node.releasing)) return false;
  const DeviceCounts c = count_devices(task, node);
  if (c.groups_later + c.whole_later < task.gpu.num_devices) return false;
  // A new shared device also needs a pod slot for its reservation pod.
  return c.groups_later >= task.gpu.num_devices || node.idle.pods + node.releasing.pods >= 2;
}

uint32_t resource_rejection_bits(const TaskInfo& task, const NodeInfo& node) {
  uint32_t why = 0;
  const Resources& i = node.idle;
  const Resources& r = node.releasing;
  if (task.gpu.is_shared()) {
    if (task.gpu.kind == GpuRequestKind::kMemory && task.gpu.memory_mib > node.gpu_memory_mib) {
      why |= kLackGpuMemory;
    } else {
      const DeviceCounts c = count_devices(task, node);
      if (c.groups_later + c.whole_later < task.gpu.num_devices) why |= kLackGpus;
    }
  } else if (task.req.milli_gpu > i.milli_gpu + r.milli_gpu) {
    why |= kLackGpus;
  }
  if (task.req.milli_cpu > i.milli_cpu + r.milli_cpu) why |= kLackCpu;
  if (task.req.memory > i.memory + r.memory) why |= kLackMemory;
  for (const auto& [id, v] : task.req.scalars) {
    if (v > i.scalar(id) + r.scalar(id)) why |= kLackScalar;
  }
  if (task.req.pods > i.pods + r.pods) why |= kLackPods;
  if (why == 0 && !fits_idle_or_releasing(task, node)) why |= task.gpu.is_shared() ? kLackPods : kLackGpus;
  return why;
}

std::vector<std::string> resource_rejections(const Session& ssn, const TaskInfo& task, const NodeInfo& node) {
  const uint32_t bits = resource_rejection_bits(task, node);
  std::vector<std::string> why;
  const std::string prefix = "node(s) didn't have enough resources: ";
  if (bits & kLackGpuMemory) why.push_back(prefix + "GPU memory");
  if (bits & kLackGpus) why.push_back(prefix + "GPUs");
  if (bits & kLackCpu) why.push_back(prefix + "CPU cores");
  if (bits & kLackMemory) why.push_back(prefix + "memory");
  if (bits & kLackScalar) {
    const Resources avail = node.idle + node.releasing;
    for (const auto& [id, v] : task.req.scalars) {
      if (v > avail.scalar(id)) why.push_back(prefix + ssn.scalar_name(id));
    }
  }
  if (bits & kLackPods) why.push_back("node(s) pod number exceeded");
  return why;
}

}  // namespace kai::core
