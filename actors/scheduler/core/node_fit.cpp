#include "actors/scheduler/core/node_fit.hpp"

#include <algorithm>

namespace kai::core {
namespace {

// cpu, memory, pods and scalars of the task against `avail` (GPUs are checked separately).
bool non_gpu_fits(const Resources& req, const Resources& avail) {
  Resources r = req;
  r.milli_gpu = 0;
  Resources a = avail;
  a.milli_gpu = 0;
  return r.fits_in(a);
}

// Whole devices free now and once releasing pods leave. Pipelined pods take from releasing capacity even
// when part of what they need is idle, so releasing may be negative: the sum is what is really free.
int64_t whole_free_devices(const NodeInfo& n) {
  return std::max<int64_t>(0, (n.idle.milli_gpu + n.releasing.milli_gpu) / 1000);
}
int64_t whole_idle_devices(const NodeInfo& n) {
  return std::min(whole_free_devices(n), std::max<int64_t>(0, n.idle.milli_gpu / 1000));
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
    if (g.empty() || g.free_with_releasing() < need) continue;
    // A device whose pods are all leaving is offered as a whole releasing device instead.
    if (g.active_tasks == 0 && g.pipelined_tasks == 0) continue;
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

bool fits_idle(const TaskInfo& task, const NodeInfo& node) {
  if (!task.gpu.is_shared()) return task.req.fits_in(node.idle);
  if (!non_gpu_fits(task.req, node.idle)) return false;
  const GpuCandidates c = fitting_gpus(task, node);
  return std::count(c.fits_idle.begin(), c.fits_idle.end(), true) >= task.gpu.num_devices;
}

bool fits_idle_or_releasing(const TaskInfo& task, const NodeInfo& node) {
  const Resources avail = node.idle + node.releasing;
  if (!task.gpu.is_shared()) return task.req.fits_in(avail);
  if (!non_gpu_fits(task.req, avail)) return false;
  const GpuCandidates c = fitting_gpus(task, node);
  if (static_cast<int64_t>(c.candidates.size()) < task.gpu.num_devices) return false;
  int64_t existing = 0;
  for (const auto& cand : c.candidates) existing += cand.group_index >= 0;
  // A new shared device also needs a pod slot for its reservation pod.
  return existing >= task.gpu.num_devices || avail.pods >= 2;
}

std::vector<std::string> resource_rejections(const Session& ssn, const TaskInfo& task, const NodeInfo& node) {
  std::vector<std::string> why;
  const Resources avail = node.idle + node.releasing;
  const std::string prefix = "node(s) didn't have enough resources: ";
  if (task.gpu.is_shared()) {
    if (task.gpu.kind == GpuRequestKind::kMemory && task.gpu.memory_mib > node.gpu_memory_mib) {
      why.push_back(prefix + "GPU memory");
    } else {
      const GpuCandidates c = fitting_gpus(task, node);
      if (static_cast<int64_t>(c.candidates.size()) < task.gpu.num_devices) why.push_back(prefix + "GPUs");
    }
  } else if (task.req.milli_gpu > avail.milli_gpu) {
    why.push_back(prefix + "GPUs");
  }
  if (task.req.milli_cpu > avail.milli_cpu) why.push_back(prefix + "CPU cores");
  if (task.req.memory > avail.memory) why.push_back(prefix + "memory");
  for (const auto& [id, v] : task.req.scalars) {
    if (v > avail.scalar(id)) why.push_back(prefix + ssn.scalar_name(id));
  }
  const int64_t pods_needed = task.gpu.is_shared() && why.empty() && !fits_idle_or_releasing(task, node) ? 2 : 1;
  if (avail.pods < pods_needed) why.push_back("node(s) pod number exceeded");
  if (why.empty() && !fits_idle_or_releasing(task, node)) why.push_back(prefix + "GPUs");
  return why;
}

}  // namespace kai::core
