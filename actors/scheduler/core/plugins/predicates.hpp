#pragma once
// The name of the predicates plugin (predicates.cpp), defined once here, and its registration.

#include <string_view>

#include "actors/scheduler/core/plugin.hpp"

namespace kai::core::plugins {

inline constexpr std::string_view kPredicatesName = "predicates";

void register_predicates_plugin(PluginRegistry& registry);

}  // namespace kai::core::plugins
