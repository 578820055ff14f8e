#pragma once
// The built-in plugins: each plugin's name, defined once here, and the registration function of each
// plugin file, called by register_builtin_plugins() (registry.cpp).

#include <string_view>
#include <vector>

#include "actors/scheduler/core/plugin.hpp"

namespace kai::core::plugins {

// Job, task and pod-set ordering (ordering_plugins.cpp).
inline constexpr std::string_view kPriorityName = "priority";
inline constexpr std::string_view kElasticName = "elastic";
inline constexpr std::string_view kTaskOrderName = "taskorder";
inline constexpr std::string_view kKubeflowName = "kubeflow";
inline constexpr std::string_view kRayName = "ray";
inline constexpr std::string_view kSubGroupOrderName = "subgrouporder";
// Node and GPU scoring (node_order_plugins.cpp).
inline constexpr std::string_view kNominatedNodeName = "nominatednode";
inline constexpr std::string_view kGpuSharingOrderName = "gpusharingorder";
inline constexpr std::string_view kNodeAvailabilityName = "nodeavailability";
inline constexpr std::string_view kResourceTypeName = "resourcetype";
inline constexpr std::string_view kGpuPackName = "gpupack";
inline constexpr std::string_view kGpuSpreadName = "gpuspread";
inline constexpr std::string_view kNodePlacementName = "nodeplacement";
// Preferred pod (anti-)affinity (pod_affinity.cpp).
inline constexpr std::string_view kPodAffinityName = "podaffinity";
// Which nodes can take a task (predicates.cpp), fair share and queue order (proportion.cpp), the
// minimum runtime before a victim may be evicted (min_runtime.cpp).
inline constexpr std::string_view kPredicatesName = "predicates";
inline constexpr std::string_view kProportionName = "proportion";
inline constexpr std::string_view kMinRuntimeName = "minruntime";
// Plugins of KAI's default configuration accepted by name only (registry.cpp).
inline constexpr std::string_view kDynamicResourcesName = "dynamicresources";
inline constexpr std::string_view kTopologyName = "topology";
inline constexpr std::string_view kSnapshotName = "snapshot";

/// The minruntime plugin's defaultPreemptMinRuntime and defaultReclaimMinRuntime in `plugins`, in
/// seconds (none when the plugin is not configured): the cycle wakes when a victim's protection ends.
std::vector<double> min_runtime_defaults(const std::vector<PluginConfig>& plugins);

/// Each plugin file's registration.
void register_ordering_plugins(PluginRegistry& registry);
void register_node_order_plugins(PluginRegistry& registry);
void register_predicates_plugin(PluginRegistry& registry);
void register_proportion_plugin(PluginRegistry& registry);
void register_min_runtime_plugin(PluginRegistry& registry);
void register_topology_plugin(PluginRegistry& registry);
void register_pod_affinity_plugin(PluginRegistry& registry);

}  // namespace kai::core::plugins
