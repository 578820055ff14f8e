#pragma once
// The name of the minruntime plugin (min_runtime.cpp), defined once here, and its registration.

#include <string_view>

#include "actors/scheduler/core/plugin.hpp"

namespace kai::core::plugins {

inline constexpr std::string_view kMinRuntimeName = "minruntime";

void register_min_runtime_plugin(PluginRegistry& registry);

}  // namespace kai::core::plugins
