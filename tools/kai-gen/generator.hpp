#pragma once
// Synthetic clusters for benchmarks and property tests (docs/performance-targets.md "The benchmark cluster"), deterministic per seed.

#include <cstdint>
#include <string>

#include "k8s/model/objects.hpp"

namespace kai::gen {

/// The default mix of bench/README.md: 5,000 nodes x 8 GPUs; running ~110k CPU-only pods, 30k 1-GPU
/// pods and 10k half-GPU pods (about 12 % of GPUs free); 1,000 pending groups (60 % single pods,
/// 30 % 8 x 1-GPU gangs, 10 % 2-4 x 8-GPU gangs); 1,000 leaf queues under 3 levels (10 x 10 x 10).
struct ClusterSpec {
  int32_t nodes = 5000;                   ///< Default: 5000
  int32_t gpus_per_node = 8;              ///< Default: 8
  int64_t node_cpu_milli = 128000;        ///< Default: 128 cores
  int64_t node_memory_gib = 1024;         ///< Default: 1 TiB
  int32_t running_cpu_pods = 110000;      ///< Default: 110,000
  int32_t running_gpu_pods = 30000;       ///< Default: 30,000 (1 GPU each)
  int32_t running_fraction_pods = 10000;  ///< Default: 10,000 (gpu-fraction 0.5)
  int32_t pending_groups = 1000;          ///< Default: 1,000
  int32_t queue_fanout = 10;              ///< Default: 10 (fanout^3 leaf queues)
  uint64_t seed = 1;                      ///< Default: 1

  /// The default mix scaled down by `factor` (nodes, pods, groups; queues stay 3 levels).
  static ClusterSpec scaled(double factor);
};

/// Builds the cluster. Running pods are placed on nodes that have room; pods that find none are
/// left out, so a spec that overfills the cluster still yields a consistent snapshot.
model::ClusterObjects generate(const ClusterSpec& spec);

/// A queue under `parent` ("" = a top queue) with `gpu_quota` GPUs (-1 = none), over-quota weight 1
/// and no limit, and no CPU or memory quota; no UID or creation time.
model::Queue quota_queue(const std::string& name, const std::string& parent, double gpu_quota);

}  // namespace kai::gen
