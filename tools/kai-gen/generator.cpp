#include "tools/kai-gen/generator.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <string>

namespace kai::gen {
namespace {

constexpr int64_t kGiB = 1024LL * 1024 * 1024;
constexpr int64_t kMilli = 1000;
constexpr int64_t kBaseTime = 1767225600;  // 2026-01-01T00:00:00Z

struct NodeRoom {
  int64_t cpu;
  int64_t memory;
  int32_t gpus;
  int32_t pods;
  int32_t half_gpu_open = 0;  ///< Shared devices with one 0.5 pod, waiting for a second.
  std::vector<std::string> open_groups;
};

model::Pod make_pod(const std::string& ns, const std::string& name, int64_t cpu_milli, int64_t mem_bytes,
                    int32_t gpus, int64_t created) {
  model::Pod p;
  p.meta.namespace_ = ns;
  p.meta.name = name;
  p.meta.uid = "uid-" + name;
  p.meta.creation_timestamp = created;
  p.scheduler_name = "kai-scheduler";
  model::Container c;
  c.name = "main";
  c.requests["cpu"] = cpu_milli;
  c.requests["memory"] = mem_bytes * kMilli;
  if (gpus > 0) {
    c.requests["nvidia.com/gpu"] = gpus * kMilli;
    c.limits["nvidia.com/gpu"] = gpus * kMilli;
  }
  p.containers.push_back(std::move(c));
  p.phase = "Pending";
  return p;
}

model::Queue make_queue(const std::string& name, const std::string& parent, double gpu_quota,
                        int64_t created) {
  model::Queue q = quota_queue(name, parent, gpu_quota);
  q.meta.uid = "uid-queue-" + name;
  q.meta.creation_timestamp = created;
  return q;
}

}  // namespace

ClusterSpec ClusterSpec::scaled(double factor) {
  ClusterSpec s;
  auto scale = [factor](int32_t v) {
    return std::max<int32_t>(1, static_cast<int32_t>(std::lround(v * factor)));
  };
  s.nodes = scale(s.nodes);
  s.running_cpu_pods = scale(s.running_cpu_pods);
  s.running_gpu_pods = scale(s.running_gpu_pods);
  s.running_fraction_pods = scale(s.running_fraction_pods);
  s.pending_groups = scale(s.pending_groups);
  s.queue_fanout = std::max<int32_t>(2, static_cast<int32_t>(std::lround(10 * std::cbrt(factor))));
  return s;
}

model::Queue quota_queue(const std::string& name, const std::string& parent, double gpu_quota) {
  model::Queue q;
  q.meta.name = name;
  q.parent_queue = parent;
  q.has_resources = true;
  q.gpu = {gpu_quota, 1, -1};
  q.cpu = {-1, 1, -1};
  q.memory = {-1, 1, -1};
  return q;
}

model::ClusterObjects generate(const ClusterSpec& spec) {
  std::mt19937_64 rng(spec.seed);
  model::ClusterObjects out;

  // Queues: fanout departments x fanout sub-departments x fanout leaves.
  std::vector<std::string> leaves;
  const int32_t f = spec.queue_fanout;
  const double total_gpus = static_cast<double>(spec.nodes) * spec.gpus_per_node;
  const double leaf_quota = std::floor(total_gpus * 0.75 / (f * f * f));
  int64_t qtime = kBaseTime;
  for (int32_t a = 0; a < f; ++a) {
    const std::string dept = "dept-" + std::to_string(a);
    out.queues.push_back(make_queue(dept, "", leaf_quota * f * f, qtime++));
    for (int32_t b = 0; b < f; ++b) {
      const std::string sub = dept + "-" + std::to_string(b);
      out.queues.push_back(make_queue(sub, dept, leaf_quota * f, qtime++));
      for (int32_t c = 0; c < f; ++c) {
        const std::string leaf = sub + "-" + std::to_string(c);
        out.queues.push_back(make_queue(leaf, sub, leaf_quota, qtime++));
        leaves.push_back(leaf);
      }
    }
  }

  // Nodes.
  std::vector<NodeRoom> room;
  for (int32_t i = 0; i < spec.nodes; ++i) {
    model::Node n;
    char name[32];
    std::snprintf(name, sizeof name, "node-%05d", i);
    n.meta.name = name;
    n.meta.uid = std::string("uid-") + name;
    n.meta.labels["nvidia.com/gpu.memory"] = "81920";
    n.meta.labels["nvidia.com/gpu.count"] = std::to_string(spec.gpus_per_node);
    n.allocatable["cpu"] = spec.node_cpu_milli;
    n.allocatable["memory"] = spec.node_memory_gib * kGiB * kMilli;
    n.allocatable["pods"] = 110 * kMilli;
    n.allocatable["nvidia.com/gpu"] = spec.gpus_per_node * kMilli;
    n.capacity = n.allocatable;
    n.conditions.push_back({"Ready", "True"});
    out.nodes.push_back(std::move(n));
    room.push_back(
        NodeRoom{spec.node_cpu_milli, spec.node_memory_gib * kGiB, spec.gpus_per_node, 110, 0, {}});
  }

  std::uniform_int_distribution<int32_t> pick_node(0, spec.nodes - 1);
  std::uniform_int_distribution<size_t> pick_leaf(0, leaves.size() - 1);
  int64_t ptime = kBaseTime + 1000;
  int64_t serial = 0;
  // Places a running single-pod group; returns false when no node was found after a few tries.
  auto place_running = [&](int64_t cpu, int64_t mem, int32_t gpus, bool half) {
    for (int attempt = 0; attempt < 16; ++attempt) {
      NodeRoom& r = room[pick_node(rng)];
      const int32_t idx = static_cast<int32_t>(&r - room.data());
      const bool join_open = half && r.half_gpu_open > 0;
      const int32_t need_gpus = half ? (join_open ? 0 : 1) : gpus;
      if (r.cpu < cpu || r.memory < mem || r.gpus < need_gpus || r.pods < (half && !join_open ? 2 : 1))
        continue;
      const std::string leaf = leaves[pick_leaf(rng)];
      const std::string name = "run-" + std::to_string(serial++);
      model::Pod p = make_pod("ns-" + leaf, name, cpu, mem, half ? 0 : gpus, ptime++);
      p.node_name = out.nodes[idx].meta.name;
      p.phase = "Running";
      p.meta.labels["kai.scheduler/queue"] = leaf;
      if (half) {
        p.meta.annotations["gpu-fraction"] = "0.5";
        std::string group;
        if (join_open) {
          group = r.open_groups.back();
          r.open_groups.pop_back();
          --r.half_gpu_open;
        } else {
          group = "grp-" + name;
          r.open_groups.push_back(group);
          ++r.half_gpu_open;
          r.pods -= 1;  // the reservation pod
        }
        p.meta.labels["runai-gpu-group"] = group;
      }
      r.cpu -= cpu;
      r.memory -= mem;
      r.gpus -= need_gpus;
      r.pods -= 1;
      out.pods.push_back(std::move(p));
      return true;
    }
    return false;
  };
  for (int32_t i = 0; i < spec.running_gpu_pods; ++i) place_running(4000, 32 * kGiB, 1, false);
  for (int32_t i = 0; i < spec.running_fraction_pods; ++i) place_running(2000, 16 * kGiB, 0, true);
  for (int32_t i = 0; i < spec.running_cpu_pods; ++i) place_running(1000, 4 * kGiB, 0, false);

  // Pending groups: 60 % single pods (a third of them CPU-only, a third half-GPU), 30 % 8 x 1-GPU gangs,
  // 10 % gangs of 2-4 pods with 8 GPUs each.
  std::uniform_real_distribution<double> u(0, 1);
  std::uniform_int_distribution<int32_t> big_size(2, 4);
  for (int32_t g = 0; g < spec.pending_groups; ++g) {
    const double kind = u(rng);
    const std::string leaf = leaves[pick_leaf(rng)];
    const std::string ns = "ns-" + leaf;
    const std::string pg_name = "pg-pending-" + std::to_string(g);
    int32_t pods = 1, gpus = 1;
    int64_t cpu = 4000, mem = 32 * kGiB;
    bool half = false;
    if (kind < 0.2) {
      gpus = 0;
      cpu = 2000;
      mem = 8 * kGiB;
    } else if (kind < 0.4) {
      gpus = 0;
      half = true;
    } else if (kind < 0.9) {
      pods = kind < 0.6 ? 1 : 8;
    } else {
      pods = big_size(rng);
      gpus = 8;
      cpu = 32000;
      mem = 256 * kGiB;
    }
    model::PodGroup pg;
    pg.meta.namespace_ = ns;
    pg.meta.name = pg_name;
    pg.meta.uid = "uid-" + pg_name;
    pg.meta.creation_timestamp = ptime++;
    pg.min_member = pods;
    pg.queue = leaf;
    pg.priority_class_name = "train";
    out.pod_groups.push_back(pg);
    for (int32_t k = 0; k < pods; ++k) {
      model::Pod p = make_pod(ns, pg_name + "-" + std::to_string(k), cpu, mem, gpus, ptime++);
      p.meta.annotations["pod-group-name"] = pg_name;
      if (half) p.meta.annotations["gpu-fraction"] = "0.5";
      out.pods.push_back(std::move(p));
    }
  }
  model::PriorityClass train;
  train.meta.name = "train";
  train.value = 50;
  out.priority_classes.push_back(train);
  return out;
}

}  // namespace kai::gen
