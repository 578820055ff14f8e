// Codec unit: the only core file that uses nlohmann (configuration parsing).
#include "actors/scheduler/core/scheduler_config.hpp"

#include <nlohmann/json.hpp>

#include "actors/scheduler/core/action.hpp"
#include "actors/scheduler/core/plugins/builtin.hpp"
#include "k8s/model/json_codec.hpp"

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
