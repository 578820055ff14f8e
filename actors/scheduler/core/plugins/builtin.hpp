#pragma once
// Registration functions of the built-in plugin groups, called by register_builtin_plugins().

#include "actors/scheduler/core/plugin.hpp"

namespace kai::core::plugins {

void register_ordering_plugins(PluginRegistry& registry);
void register_node_order_plugins(PluginRegistry& registry);
void register_predicates_plugin(PluginRegistry& registry);
void register_proportion_plugin(PluginRegistry& registry);
void register_min_runtime_plugin(PluginRegistry& registry);

}  // namespace kai::core::plugins
