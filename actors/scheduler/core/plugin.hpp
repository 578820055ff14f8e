#pragma once
// The plugin interface (as kube-scheduler's and KAI's plugin frameworks): a plugin
// registers the hooks it implements on the session when the session opens.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "actors/scheduler/core/scheduler_config.hpp"

namespace kai::core {

class Session;

/// How a plugin ranks nodes by how much of a resource is allocated on them.
enum class NodePlacement : uint8_t {
  kNone,            ///< does not rank nodes by allocation
  kMostAllocated,   ///< binpack: the fullest nodes first
  kLeastAllocated,  ///< spread: the emptiest nodes first
};

/// What a plugin changes in node ordering, declared by the plugin itself. The session reads it from
/// the configured plugins to decide whether allocate may place GPU tasks by walking its GPU indexes
/// instead of scoring every node (actions/allocate.cpp), so it never needs to know plugin names.
struct PluginCapabilities {
  /// How GPU nodes are ranked for GPU tasks by their GPUs (nodeplacement). Default: kNone.
  NodePlacement gpu_node_placement = NodePlacement::kNone;
  /// How nodes are ranked for CPU-only tasks by their CPU (nodeplacement). Default: kNone.
  NodePlacement cpu_node_placement = NodePlacement::kNone;
  /// Nodes where the task fits idle resources go before the others, above placement's scores
  /// (nodeavailability). Default: false.
  bool prefers_idle_nodes = false;
  /// A task's nominated node goes first (nominatednode). Default: false.
  bool honours_nominated_node = false;
  /// For a shared-GPU task, nodes with a GPU group it fits go first (gpusharingorder). Default: false.
  bool orders_shared_gpu_groups_first = false;
  /// For a CPU-only task, nodes without GPUs go before GPU nodes, above placement's scores and below
  /// idle nodes (resourcetype). Default: false.
  bool prefers_cpu_nodes_for_cpu_tasks = false;
};

class Plugin {
 public:
  virtual ~Plugin() = default;
  virtual std::string_view name() const = 0;
  /// What this plugin changes in node ordering; nothing unless it says so.
  virtual PluginCapabilities capabilities() const { return {}; }
  /// Registers this plugin's hooks on `ssn`.
  virtual void on_session_open(Session& ssn) = 0;
};

using PluginFactory = std::function<std::unique_ptr<Plugin>(const PluginConfig& config)>;

/// Plugin factories by name.
class PluginRegistry {
 public:
  void add(std::string_view name, PluginFactory factory) {
    factories_[std::string(name)] = std::move(factory);
  }
  const PluginFactory* find(std::string_view name) const {
    auto it = factories_.find(std::string(name));
    return it == factories_.end() ? nullptr : &it->second;
  }

 private:
  std::map<std::string, PluginFactory> factories_;
};

/// Registers every built-in plugin. Explicit on purpose: static self-registration is dropped by the
/// linker from static libraries.
void register_builtin_plugins(PluginRegistry& registry);

/// The registry with the built-in plugins.
const PluginRegistry& builtin_plugins();

}  // namespace kai::core
