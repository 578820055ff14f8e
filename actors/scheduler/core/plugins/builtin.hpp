#pragma once
// Registration functions and names of the built-in plugin groups, called by register_builtin_plugins().

#include <string_view>

#include "actors/scheduler/core/plugin.hpp"
#include "actors/scheduler/core/plugins/min_runtime.hpp"
#include "actors/scheduler/core/plugins/node_order_plugins.hpp"
#include "actors/scheduler/core/plugins/ordering_plugins.hpp"
#include "actors/scheduler/core/plugins/predicates.hpp"
#include "actors/scheduler/core/plugins/proportion.hpp"

namespace kai::core::plugins {

/// Plugins of KAI's default configuration accepted by name only (registry.cpp).
inline constexpr std::string_view kDynamicResourcesName = "dynamicresources";
inline constexpr std::string_view kTopologyName = "topology";
inline constexpr std::string_view kSnapshotName = "snapshot";

}  // namespace kai::core::plugins
