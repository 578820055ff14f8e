#pragma once
// KAI's scheduler configuration (docs/kai-compatibility.md "Scheduler configuration"): `actions` and `tiers[].plugins[]` with
// `arguments`. Missing fields fall back to KAI's built-in defaults.

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "actors/scheduler/core/queue_usage.hpp"
#include "k8s/model/status.hpp"

namespace kai::core {

struct PluginConfig {
  std::string name;
  std::map<std::string, std::string> arguments;
  bool operator==(const PluginConfig&) const = default;
};

struct SchedulerConfig {
  /// Default: allocate, consolidation, reclaim, preempt, stalegangeviction.
  std::vector<std::string> actions;
  /// Plugins of all tiers, in order. Default: KAI's default tier (docs/kai-compatibility.md "Scheduler configuration").
  std::vector<PluginConfig> plugins;
  /// KAI's `usageDBConfig`: present turns time-based fair share on (docs/time-based-fair-share.md).
  /// Default: absent (every queue's usage 0, as KAI without one).
  std::optional<UsageDbConfig> usage_db;

  static SchedulerConfig defaults();
  /// The arguments of plugin `name`, or null when the plugin is not configured.
  const PluginConfig* plugin(std::string_view name) const;
};

/// Parses KAI's configuration from JSON or YAML text. Unknown keys are ignored as KAI ignores them.
model::Result<SchedulerConfig> parse_scheduler_config(std::string_view text);

/// Splits "a, b,c" into {"a","b","c"}.
std::vector<std::string> split_actions(std::string_view text);

}  // namespace kai::core
