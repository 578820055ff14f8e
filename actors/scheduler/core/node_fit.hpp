#pragma once
// Whether a task fits a node's free resources now (idle) or once releasing pods have left (idle +
// releasing), including shared-GPU devices (docs/kai-compatibility.md "GPU sharing"), and the per-node reasons when it does not.

#include <optional>
#include <string>
#include <vector>

#include "actors/scheduler/core/cluster_info.hpp"
#include "actors/scheduler/core/session.hpp"

namespace kai::core {

/// Portion (milli) of one device a shared-GPU task takes on `node`; > 1000 means it cannot fit.
int64_t shared_portion_on(const TaskInfo& task, const NodeInfo& node);

/// Devices of `node` where a shared-GPU task fits: existing groups first (node order), then one entry
/// per idle and then per releasing whole device. `fits_idle[i]` says whether candidate i fits now.
struct GpuCandidates {
  std::vector<GpuCandidate> candidates;
  std::vector<bool> fits_idle;
};
GpuCandidates fitting_gpus(const TaskInfo& task, const NodeInfo& node);

/// True when some shared device already in use on the node has room for the task (gpusharingorder).
bool has_fitting_shared_group(const TaskInfo& task, const NodeInfo& node);

/// True when the task fits the node's idle resources (allocation rather than pipelining).
bool fits_idle(const TaskInfo& task, const NodeInfo& node);
/// True when the task fits the node's idle plus releasing resources.
bool fits_idle_or_releasing(const TaskInfo& task, const NodeInfo& node);

/// KAI's short reasons ("node(s) didn't have enough resources: GPUs") why the task does not fit the
/// idle + releasing resources of the node; empty when it fits.
std::vector<std::string> resource_rejections(const Session& ssn, const TaskInfo& task, const NodeInfo& node);

/// The same reasons as bits (cheap enough to run over every node when a task fails).
enum ResourceLack : uint32_t {
  kLackGpus = 1,
  kLackGpuMemory = 2,
  kLackCpu = 4,
  kLackMemory = 8,
  kLackScalar = 16,
  kLackPods = 32,
};
uint32_t resource_rejection_bits(const TaskInfo& task, const NodeInfo& node);

}  // namespace kai::core
