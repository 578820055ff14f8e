// Node and GPU scoring plugins (docs/kai-compatibility.md "Node and GPU order"). Scores add up; the weights keep the plugins
// lexicographic: nominatednode 1,000,000 > gpusharingorder 1,000 > nodeavailability 100 >
// resourcetype 10 > nodeplacement 0..9.
#include <algorithm>
#include <limits>

#include "actors/scheduler/core/node_fit.hpp"
#include "actors/scheduler/core/plugins/builtin.hpp"
#include "actors/scheduler/core/session.hpp"

namespace kai::core::plugins {
namespace {

constexpr double kNominatedNodeScore = 1'000'000;
constexpr double kGpuSharingScore = 1'000;
constexpr double kAvailabilityScore = 100;
constexpr double kResourceTypeScore = 10;
constexpr double kMaxPlacementScore = 9;

class NominatedNodePlugin final : public Plugin {
 public:
  std::string_view name() const override { return kNominatedNodeName; }
  PluginCapabilities capabilities() const override { return {.honours_nominated_node = true}; }
  void on_session_open(Session& ssn) override {
    ssn.node_order_fns.push_back(
        [&ssn](const TaskInfo& task, std::span<const uint32_t> nodes, std::span<double> scores) {
          if (task.nominated_node.empty()) return;
          for (size_t i = 0; i < nodes.size(); ++i) {
            if (ssn.nodes[nodes[i]].name == task.nominated_node) scores[i] += kNominatedNodeScore;
          }
        });
  }
};

class GpuSharingOrderPlugin final : public Plugin {
 public:
  std::string_view name() const override { return kGpuSharingOrderName; }
  PluginCapabilities capabilities() const override { return {.orders_shared_gpu_groups_first = true}; }
  void on_session_open(Session& ssn) override {
    ssn.node_order_fns.push_back(
        [&ssn](const TaskInfo& task, std::span<const uint32_t> nodes, std::span<double> scores) {
          if (!task.gpu.is_shared()) return;
          for (size_t i = 0; i < nodes.size(); ++i) {
            if (has_fitting_shared_group(task, ssn.nodes[nodes[i]])) scores[i] += kGpuSharingScore;
          }
        });
  }
};

class NodeAvailabilityPlugin final : public Plugin {
 public:
  std::string_view name() const override { return kNodeAvailabilityName; }
  PluginCapabilities capabilities() const override { return {.prefers_idle_nodes = true}; }
  void on_session_open(Session& ssn) override {
    ssn.node_order_fns.push_back(
        [&ssn](const TaskInfo& task, std::span<const uint32_t> nodes, std::span<double> scores) {
          for (size_t i = 0; i < nodes.size(); ++i) {
            if (fits_idle(task, ssn.nodes[nodes[i]])) scores[i] += kAvailabilityScore;
          }
        });
  }
};

class ResourceTypePlugin final : public Plugin {
 public:
  std::string_view name() const override { return kResourceTypeName; }
  PluginCapabilities capabilities() const override { return {.prefers_cpu_nodes_for_cpu_tasks = true}; }
  void on_session_open(Session& ssn) override {
    ssn.node_order_fns.push_back(
        [&ssn](const TaskInfo& task, std::span<const uint32_t> nodes, std::span<double> scores) {
          if (!task.is_cpu_only()) return;
          for (size_t i = 0; i < nodes.size(); ++i) {
            if (!ssn.nodes[nodes[i]].has_gpus()) scores[i] += kResourceTypeScore;
          }
        });
  }
};

/// gpupack prefers the fullest shared device; gpuspread the emptiest (whole devices count as empty).
class GpuOrderPlugin final : public Plugin {
 public:
  explicit GpuOrderPlugin(bool pack) : pack_(pack) {}
  std::string_view name() const override { return pack_ ? kGpuPackName : kGpuSpreadName; }
  void on_session_open(Session& ssn) override {
    const bool pack = pack_;
    ssn.gpu_order_fns.push_back([pack](const TaskInfo&, const NodeInfo&, const GpuCandidate& c) {
      return pack ? c.used_portion : 1.0 - c.used_portion;
    });
  }

 private:
  bool pack_;
};

/// binpack: 9 x (1 - (free - min) / (max - min)) over the nodes that have the resource; spread:
/// free / allocatable. The resource is GPUs for GPU tasks and CPU for CPU-only tasks.
class NodePlacementPlugin final : public Plugin {
 public:
  explicit NodePlacementPlugin(const PluginConfig& config) {
    if (auto it = config.arguments.find("gpu"); it != config.arguments.end())
      gpu_spread_ = it->second == "spread";
    if (auto it = config.arguments.find("cpu"); it != config.arguments.end())
      cpu_spread_ = it->second == "spread";
  }
  std::string_view name() const override { return kNodePlacementName; }
  /// Binpack ranks the most allocated nodes first, spread the least allocated; GPUs for GPU tasks,
  /// CPU for CPU-only tasks.
  PluginCapabilities capabilities() const override {
    const auto placement = [](bool spread) {
      return spread ? NodePlacement::kLeastAllocated : NodePlacement::kMostAllocated;
    };
    return {.gpu_node_placement = placement(gpu_spread_), .cpu_node_placement = placement(cpu_spread_)};
  }
  void on_session_open(Session& ssn) override {
    ssn.node_pre_order_fns.push_back([this, &ssn](const TaskInfo& task) {
      const bool gpu = !task.is_cpu_only();
      if (gpu ? gpu_spread_ : cpu_spread_) return;
      double lo = std::numeric_limits<double>::max(), hi = std::numeric_limits<double>::lowest();
      bool any = false;
      for (const NodeInfo& n : ssn.nodes) {
        if (!has_resource(n, gpu)) continue;
        const double f = free_of(n, gpu);
        lo = std::min(lo, f);
        hi = std::max(hi, f);
        any = true;
      }
      min_ = any ? lo : 0;
      max_ = any ? hi : 0;
    });
    ssn.node_order_fns.push_back(
        [this, &ssn](const TaskInfo& task, std::span<const uint32_t> nodes, std::span<double> scores) {
          const bool gpu = !task.is_cpu_only();
          const bool spread = gpu ? gpu_spread_ : cpu_spread_;
          for (size_t i = 0; i < nodes.size(); ++i) {
            const NodeInfo& n = ssn.nodes[nodes[i]];
            if (!has_resource(n, gpu)) continue;
            const double f = free_of(n, gpu);
            if (spread) {
              const double count =
                  gpu ? static_cast<double>(n.gpu_count) : static_cast<double>(n.allocatable.milli_cpu);
              scores[i] += f / count;
            } else if (max_ == 0) {
              continue;
            } else if (max_ == min_) {
              scores[i] += kMaxPlacementScore;
            } else {
              scores[i] += kMaxPlacementScore * (1.0 - (f - min_) / (max_ - min_));
            }
          }
        });
  }

 private:
  static bool has_resource(const NodeInfo& n, bool gpu) {
    return gpu ? n.gpu_count > 0 : n.allocatable.milli_cpu > 0;
  }
  /// Idle plus releasing: GPUs in devices (shared devices' free portions included), CPU in millicores.
  static double free_of(const NodeInfo& n, bool gpu) {
    if (gpu) return static_cast<double>(n.non_allocated_gpu_milli()) / 1000.0;
    return static_cast<double>(n.idle.milli_cpu + n.releasing.milli_cpu);
  }

  bool gpu_spread_ = false;
  bool cpu_spread_ = false;
  double min_ = 0;
  double max_ = 0;
};

}  // namespace

void register_node_order_plugins(PluginRegistry& r) {
  r.add(kNominatedNodeName, [](const PluginConfig&) { return std::make_unique<NominatedNodePlugin>(); });
  r.add(kGpuSharingOrderName, [](const PluginConfig&) { return std::make_unique<GpuSharingOrderPlugin>(); });
  r.add(kNodeAvailabilityName,
        [](const PluginConfig&) { return std::make_unique<NodeAvailabilityPlugin>(); });
  r.add(kResourceTypeName, [](const PluginConfig&) { return std::make_unique<ResourceTypePlugin>(); });
  r.add(kGpuPackName, [](const PluginConfig&) { return std::make_unique<GpuOrderPlugin>(true); });
  r.add(kGpuSpreadName, [](const PluginConfig&) { return std::make_unique<GpuOrderPlugin>(false); });
  r.add(kNodePlacementName, [](const PluginConfig& c) { return std::make_unique<NodePlacementPlugin>(c); });
}

}  // namespace kai::core::plugins
