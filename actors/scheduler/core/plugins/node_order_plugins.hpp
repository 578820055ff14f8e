#pragma once
// Names of the node and GPU scoring plugins (node_order_plugins.cpp), defined once here.

#include <string_view>

#include "actors/scheduler/core/plugin.hpp"

namespace kai::core::plugins {

inline constexpr std::string_view kNominatedNodeName = "nominatednode";
inline constexpr std::string_view kGpuSharingOrderName = "gpusharingorder";
inline constexpr std::string_view kNodeAvailabilityName = "nodeavailability";
inline constexpr std::string_view kResourceTypeName = "resourcetype";
inline constexpr std::string_view kGpuPackName = "gpupack";
inline constexpr std::string_view kGpuSpreadName = "gpuspread";
inline constexpr std::string_view kNodePlacementName = "nodeplacement";

void register_node_order_plugins(PluginRegistry& registry);

}  // namespace kai::core::plugins
