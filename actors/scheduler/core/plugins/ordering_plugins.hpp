#pragma once
// Names of the job, task and pod-set ordering plugins (ordering_plugins.cpp), defined once here.

#include <string_view>

#include "actors/scheduler/core/plugin.hpp"

namespace kai::core::plugins {

inline constexpr std::string_view kPriorityName = "priority";
inline constexpr std::string_view kElasticName = "elastic";
inline constexpr std::string_view kTaskOrderName = "taskorder";
inline constexpr std::string_view kKubeflowName = "kubeflow";
inline constexpr std::string_view kRayName = "ray";
inline constexpr std::string_view kSubGroupOrderName = "subgrouporder";

void register_ordering_plugins(PluginRegistry& registry);

}  // namespace kai::core::plugins
