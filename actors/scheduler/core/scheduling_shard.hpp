#pragma once
// KAI's SchedulingShard (kai.scheduler/v1; docs/kai-compatibility.md "Scheduler configuration"):
// KAI's operator turns a shard's spec into the scheduler's configuration (its plugins and actions by
// priority, the placement strategy, kValue, minRuntime, usageDBConfig). `--config` takes the shard
// as users write it and turns it the same way, so one file configures both schedulers.

#include <nlohmann/json.hpp>

#include "k8s/model/status.hpp"

namespace kai::core {

/// Whether `document` is a SchedulingShard (its `kind`).
bool is_scheduling_shard(const nlohmann::json& document);

/// The scheduler configuration (actions, tiers, usageDBConfig) the shard gives, as KAI's operator
/// writes it into the scheduler's ConfigMap. Errors name the field.
model::Result<nlohmann::json> config_of_scheduling_shard(const nlohmann::json& shard);

}  // namespace kai::core
