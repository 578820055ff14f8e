// Codec unit: configuration parsing (with scheduling_shard.cpp, the core files that use nlohmann).
#include "actors/scheduler/core/scheduler_config.hpp"

#include <nlohmann/json.hpp>

#include "actors/scheduler/core/action.hpp"
#include "actors/scheduler/core/plugins/builtin.hpp"
#include "actors/scheduler/core/scheduling_shard.hpp"
#include "k8s/model/json_codec.hpp"
#include "k8s/model/time.hpp"

namespace kai::core {

using model::Result;
using model::Status;

std::vector<std::string> split_actions(std::string_view text) {
  std::vector<std::string> out;
  std::string cur;
  auto flush = [&] {
    size_t b = cur.find_first_not_of(" \t\n");
    size_t e = cur.find_last_not_of(" \t\n");
    if (b != std::string::npos) out.push_back(cur.substr(b, e - b + 1));
    cur.clear();
  };
  for (char c : text) {
    if (c == ',') {
      flush();
    } else {
      cur.push_back(c);
    }
  }
  flush();
  return out;
}

SchedulerConfig SchedulerConfig::defaults() {
  SchedulerConfig c;
  for (std::string_view name : {action_names::kAllocate, action_names::kConsolidation, action_names::kReclaim,
                                action_names::kPreempt, action_names::kStaleGangEviction}) {
    c.actions.emplace_back(name);
  }
  for (std::string_view name :
       {plugins::kPredicatesName, plugins::kProportionName, plugins::kPriorityName, plugins::kElasticName,
        plugins::kKubeflowName, plugins::kRayName, plugins::kNodeAvailabilityName,
        plugins::kGpuSharingOrderName, plugins::kGpuPackName, plugins::kResourceTypeName, plugins::kPodAffinityName,
        plugins::kSubGroupOrderName, plugins::kTaskOrderName, plugins::kNominatedNodeName,
        plugins::kDynamicResourcesName}) {
    c.plugins.push_back(PluginConfig{std::string(name), {}});
  }
  c.plugins.push_back(
      PluginConfig{std::string(plugins::kNodePlacementName), {{"cpu", "binpack"}, {"gpu", "binpack"}}});
  for (std::string_view name : {plugins::kMinRuntimeName, plugins::kTopologyName, plugins::kSnapshotName})
    c.plugins.push_back(PluginConfig{std::string(name), {}});
  return c;
}

const PluginConfig* SchedulerConfig::plugin(std::string_view name) const {
  for (const auto& p : plugins) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

namespace {

std::string scalar_to_string(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  return v.dump();
}

Result<int64_t> duration_field(const nlohmann::json& params, const char* key, const std::string& where) {
  const auto& v = params.at(key);
  if (!v.is_string()) return Status::error(where + "." + key + ": must be a duration such as \"10m\"");
  auto ms = parse_duration_ms(v.get<std::string>());
  if (!ms) return Status::error(where + "." + key + ": " + ms.message());
  return ms;
}

/// KAI's usageDBConfig (pkg/scheduler/cache/usagedb/api in KAI's repository), its defaults included.
Result<UsageDbConfig> parse_usage_db_config(const nlohmann::json& j) {
  const std::string where = "usageDBConfig";
  if (!j.is_object()) return Status::error(where + ": must be a map");
  UsageDbConfig c;
  c.client_type = j.contains("clientType") && j["clientType"].is_string() ? j["clientType"].get<std::string>() : "";
  if (c.client_type != "eventlog" && c.client_type != "prometheus") {
    return Status::error(where + ".clientType: \"" + c.client_type +
                         "\" is not a usage source here; use eventlog (usage from this scheduler's event log; "
                         "prometheus is read the same way)");
  }
  for (const char* key : {"connectionString", "connectionStringEnvVar"}) {
    if (auto it = j.find(key); it != j.end() && it->is_string() && !it->get<std::string>().empty()) {
      c.connection = std::string(key) + " " + it->get<std::string>();
    }
  }
  auto params_it = j.find("usageParams");
  if (params_it == j.end() || params_it->is_null()) return c;
  const nlohmann::json& params = *params_it;
  const std::string pw = where + ".usageParams";
  if (!params.is_object()) return Status::error(pw + ": must be a map");
  UsageParams& p = c.params;
  if (params.contains("windowSize")) {
    auto ms = duration_field(params, "windowSize", pw);
    if (!ms) return ms.status();
    if (*ms <= 0) return Status::error(pw + ".windowSize: must be positive");
    p.window_ms = *ms;
  }
  if (params.contains("halfLifePeriod")) {
    auto ms = duration_field(params, "halfLifePeriod", pw);
    if (!ms) return ms.status();
    if (*ms > 0) p.half_life_ms = *ms;  // as KAI: 0 or less turns decay off
  }
  if (params.contains("fetchInterval")) {
    auto ms = duration_field(params, "fetchInterval", pw);
    if (!ms) return ms.status();
    if (*ms <= 0) return Status::error(pw + ".fetchInterval: must be positive");
    p.fetch_interval_ms = *ms;
  }
  const std::string type = params.value("windowType", std::string("sliding"));
  if (type == "tumbling") {
    p.window = UsageParams::Window::kTumbling;
    auto start = params.find("tumblingWindowStartTime");
    if (start == params.end() || !start->is_string() || !model::parse_rfc3339(start->get<std::string>())) {
      return Status::error(pw + ".tumblingWindowStartTime: a tumbling window needs an RFC 3339 start time");
    }
    p.tumbling_start_ms = *model::parse_rfc3339(start->get<std::string>()) * 1000;
  } else if (type == "cron") {
    p.window = UsageParams::Window::kCron;
    auto text = params.find("cronString");
    if (text == params.end() || !text->is_string()) {
      return Status::error(pw + ".cronString: a cron window needs a cron expression such as \"0 0 * * 1\"");
    }
    auto cron = parse_cron(text->get<std::string>());
    if (!cron) return Status::error(pw + ".cronString: " + cron.message());
    p.cron = std::move(cron).value();
  } else if (type != "sliding") {
    return Status::error(pw + ".windowType: \"" + type + "\" is not sliding, tumbling or cron");
  }
  if (auto extra = params.find("extraParams"); extra != params.end() && extra->is_object() &&
                                                extra->contains("queryResolution")) {
    auto ms = duration_field(*extra, "queryResolution", pw + ".extraParams");
    if (!ms) return ms.status();
    if (*ms <= 0) return Status::error(pw + ".extraParams.queryResolution: must be positive");
    p.resolution_ms = *ms;
  }
  return c;
}

}  // namespace

Result<SchedulerConfig> parse_scheduler_config(std::string_view text) {
  nlohmann::json j;
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && (text[first] == '{' || text[first] == '[')) {
    j = nlohmann::json::parse(text.begin(), text.end(), nullptr, false);
    if (j.is_discarded()) return Status::error("configuration is not valid JSON");
  } else {
    auto y = model::yaml_to_json(text);
    if (!y) return Status::error("configuration is not valid YAML: " + y.message());
    j = std::move(y).value();
  }
  SchedulerConfig c = SchedulerConfig::defaults();
  if (j.is_null()) return c;
  if (is_scheduling_shard(j)) {  // KAI's operator's input: turned into the configuration it writes
    auto config = config_of_scheduling_shard(j);
    if (!config) return Status::error("SchedulingShard: " + config.message());
    j = std::move(config).value();
  }
  if (!j.is_object()) return Status::error("configuration must be an object with `actions` and `tiers`");
  if (auto it = j.find("actions"); it != j.end()) {
    if (it->is_string()) {
      c.actions = split_actions(it->get<std::string>());
    } else if (it->is_array()) {
      c.actions.clear();
      for (const auto& a : *it) {
        if (!a.is_string()) return Status::error("actions: every entry must be a string");
        c.actions.push_back(a.get<std::string>());
      }
    } else {
      return Status::error("actions: must be a comma-separated string");
    }
  }
  if (auto it = j.find("usageDBConfig"); it != j.end() && !it->is_null()) {
    auto usage = parse_usage_db_config(*it);
    if (!usage) return usage.status();
    c.usage_db = std::move(usage).value();
  }
  if (auto it = j.find("tiers"); it != j.end()) {
    if (!it->is_array()) return Status::error("tiers: must be a list");
    c.plugins.clear();
    for (size_t t = 0; t < it->size(); ++t) {
      const auto& tier = (*it)[t];
      auto pl = tier.is_object() ? tier.find("plugins") : tier.end();
      if (!tier.is_object() || pl == tier.end() || !pl->is_array()) {
        return Status::error("tiers[" + std::to_string(t) + "].plugins: must be a list");
      }
      for (size_t i = 0; i < pl->size(); ++i) {
        const auto& p = (*pl)[i];
        const std::string where = "tiers[" + std::to_string(t) + "].plugins[" + std::to_string(i) + "]";
        PluginConfig pc;
        if (p.is_string()) {
          pc.name = p.get<std::string>();
        } else if (p.is_object() && p.contains("name") && p["name"].is_string()) {
          pc.name = p["name"].get<std::string>();
          if (auto a = p.find("arguments"); a != p.end() && !a->is_null()) {
            if (!a->is_object()) return Status::error(where + ".arguments: must be a map");
            for (const auto& [k, v] : a->items()) pc.arguments[k] = scalar_to_string(v);
          }
        } else {
          return Status::error(where + ": needs a name");
        }
        c.plugins.push_back(std::move(pc));
      }
    }
  }
  return c;
}

}  // namespace kai::core
