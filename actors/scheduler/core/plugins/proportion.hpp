#pragma once
// The name of the proportion plugin (proportion.cpp), defined once here, and its registration.

#include <string_view>

#include "actors/scheduler/core/plugin.hpp"

namespace kai::core::plugins {

inline constexpr std::string_view kProportionName = "proportion";

void register_proportion_plugin(PluginRegistry& registry);

}  // namespace kai::core::plugins
