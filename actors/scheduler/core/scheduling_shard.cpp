// Codec unit: KAI's SchedulingShard into the scheduler configuration (scheduler_config.cpp reads it).
#include "actors/scheduler/core/scheduling_shard.hpp"

#include <algorithm>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace kai::core {
namespace {

using model::Result;
using model::Status;
using nlohmann::json;

/// KAI's default plugin priorities (the operator's; higher runs first).
const std::map<std::string, int>& default_plugin_priorities() {
  static const std::map<std::string, int> kPriorities = {
      {"predicates", 1900},       {"proportion", 1800},       {"priority", 1700},        {"nodeavailability", 1600},
      {"resourcetype", 1500},     {"podaffinity", 1400},      {"elastic", 1300},         {"kubeflow", 1200},
      {"ray", 1100},              {"subgrouporder", 1000},    {"taskorder", 900},        {"nominatednode", 800},
      {"dynamicresources", 700},  {"minruntime", 600},        {"topology", 500},         {"snapshot", 400},
      {"sg-nodelocalgreedy", 360}, {"sg-multinodegang", 350}, {"gpupack", 300},          {"gpuspread", 300},
      {"nodeplacement", 200},     {"gpusharingorder", 100}};
  return kPriorities;
}

const std::map<std::string, int>& default_action_priorities() {
  static const std::map<std::string, int> kPriorities = {
      {"allocate", 500}, {"consolidation", 400}, {"reclaim", 300}, {"preempt", 200}, {"stalegangeviction", 100}};
  return kPriorities;
}

struct Entry {
  bool enabled = true;
  int priority = 0;
  std::map<std::string, std::string> arguments;
};

std::string scalar(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  return v.dump();
}

/// A float as Go's strconv.FormatFloat(v, 'f', -1, 64) writes it: the shortest exact decimal.
std::string go_float(double v) {
  // 17 significant digits always read back as `v`, so the loop ends by then.
  std::string text;
  for (int digits = 1; digits <= 17; ++digits) {
    std::ostringstream t;
    t.precision(digits);
    t << v;
    text = t.str();
    if (std::stod(text) == v) break;
  }
  return text;
}

/// The user's overrides of one entry map (`plugins` or `actions`): enabled, priority, and for
/// plugins the arguments (which replace the defaults', as KAI's operator does).
Status merge_overrides(const json& spec, const char* key, bool with_arguments, std::map<std::string, Entry>& entries) {
  auto it = spec.find(key);
  if (it == spec.end() || it->is_null()) return Status::ok();
  if (!it->is_object()) return Status::error(std::string("spec.") + key + ": must map names to settings");
  for (const auto& [name, override] : it->items()) {
    const std::string where = std::string("spec.") + key + "." + name;
    if (!override.is_object()) return Status::error(where + ": must be a map");
    auto found = entries.find(name);
    Entry e = found != entries.end() ? found->second : Entry{true, 0, {}};
    if (auto en = override.find("enabled"); en != override.end() && !en->is_null()) {
      if (!en->is_boolean()) return Status::error(where + ".enabled: must be true or false");
      e.enabled = en->get<bool>();
    }
    if (auto pr = override.find("priority"); pr != override.end() && !pr->is_null()) {
      if (!pr->is_number_integer()) return Status::error(where + ".priority: must be an integer");
      e.priority = pr->get<int>();
    }
    if (with_arguments) {
      if (auto args = override.find("arguments"); args != override.end() && !args->is_null()) {
        if (!args->is_object()) return Status::error(where + ".arguments: must be a map");
        e.arguments.clear();
        for (const auto& [k, v] : args->items()) e.arguments[k] = scalar(v);
      }
    }
    entries[name] = std::move(e);
  }
  return Status::ok();
}

/// The enabled entries, highest priority first, names breaking ties (KAI's operator's order).
std::vector<std::pair<std::string, const Entry*>> ordered(const std::map<std::string, Entry>& entries) {
  std::vector<std::pair<std::string, const Entry*>> out;
  for (const auto& [name, e] : entries) {
    if (e.enabled) out.emplace_back(name, &e);
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& a, const auto& b) { return a.second->priority > b.second->priority; });
  return out;
}

Result<std::string> strategy(const json& placement, const char* resource) {
  auto it = placement.find(resource);
  if (it == placement.end() || it->is_null()) return std::string("binpack");
  if (!it->is_string() || (it->get<std::string>() != "binpack" && it->get<std::string>() != "spread")) {
    return Status::error(std::string("spec.placementStrategy.") + resource + ": must be binpack or spread");
  }
  return it->get<std::string>();
}

}  // namespace

bool is_scheduling_shard(const json& document) {
  return document.is_object() && document.value("kind", json()).is_string() &&
         document["kind"].get<std::string>() == "SchedulingShard";
}

Result<json> config_of_scheduling_shard(const json& shard) {
  const json spec = shard.value("spec", json::object());
  if (!spec.is_object()) return Status::error("spec: must be a map");
  const json placement = spec.value("placementStrategy", json::object());
  if (!placement.is_object()) return Status::error("spec.placementStrategy: must be a map");
  auto gpu = strategy(placement, "gpu");
  if (!gpu) return gpu.status();
  auto cpu = strategy(placement, "cpu");
  if (!cpu) return cpu.status();

  std::map<std::string, Entry> plugins;
  for (const auto& [name, priority] : default_plugin_priorities()) plugins[name] = Entry{true, priority, {}};
  const bool gpu_binpack = *gpu == "binpack";
  plugins["gpusharingorder"].enabled = gpu_binpack;
  plugins["gpupack"].enabled = gpu_binpack;
  plugins["gpuspread"].enabled = !gpu_binpack;
  if (auto k = spec.find("kValue"); k != spec.end() && !k->is_null()) {
    if (!k->is_number()) return Status::error("spec.kValue: must be a number");
    plugins["proportion"].arguments["kValue"] = go_float(k->get<double>());
  }
  if (auto m = spec.find("minRuntime"); m != spec.end() && !m->is_null()) {
    if (!m->is_object()) return Status::error("spec.minRuntime: must be a map");
    for (const auto& [field, argument] : {std::pair{"preemptMinRuntime", "defaultPreemptMinRuntime"},
                                          std::pair{"reclaimMinRuntime", "defaultReclaimMinRuntime"}}) {
      if (auto v = m->find(field); v != m->end() && !v->is_null()) {
        if (!v->is_string()) return Status::error(std::string("spec.minRuntime.") + field + ": must be a duration");
        plugins["minruntime"].arguments[argument] = v->get<std::string>();
      }
    }
  }
  plugins["nodeplacement"].arguments["gpu"] = *gpu;
  plugins["nodeplacement"].arguments["cpu"] = *cpu;
  if (auto s = merge_overrides(spec, "plugins", true, plugins); !s) return s;

  std::map<std::string, Entry> actions;
  for (const auto& [name, priority] : default_action_priorities()) actions[name] = Entry{true, priority, {}};
  actions["consolidation"].enabled = *gpu != "spread" && *cpu != "spread";
  if (auto s = merge_overrides(spec, "actions", false, actions); !s) return s;

  json config = json::object();
  std::string action_list;
  std::vector<std::string> action_names;
  for (const auto& [name, e] : ordered(actions)) {
    action_list += (action_list.empty() ? "" : ", ") + name;
    action_names.push_back(name);
  }
  config["actions"] = action_list;
  json tier_plugins = json::array();
  for (const auto& [name, e] : ordered(plugins)) {
    json p = {{"name", name}};
    if (!e->arguments.empty()) p["arguments"] = e->arguments;
    tier_plugins.push_back(std::move(p));
  }
  config["tiers"] = json::array({json{{"plugins", std::move(tier_plugins)}}});
  if (auto depth = spec.find("queueDepthPerAction"); depth != spec.end() && !depth->is_null()) {
    if (!depth->is_object()) return Status::error("spec.queueDepthPerAction: must map actions to depths");
    for (const auto& [action, value] : depth->items()) {
      if (std::find(action_names.begin(), action_names.end(), action) == action_names.end()) {
        return Status::error("spec.queueDepthPerAction." + action + ": not an enabled action (" + action_list + ")");
      }
    }
    config["queueDepthPerAction"] = *depth;
  }
  if (auto usage = spec.find("usageDBConfig"); usage != spec.end() && !usage->is_null()) {
    config["usageDBConfig"] = *usage;
  }
  return config;
}

}  // namespace kai::core
