#include "k8s/model/log_redaction.hpp"

#include <nlohmann/json.hpp>
#include <string_view>

#include "k8s/model/json_codec.hpp"

namespace kai::model {
namespace {

using nlohmann::json;

constexpr const char* kLastApplied = "kubectl.kubernetes.io/last-applied-configuration";

/// Drops `value` from every env entry of the containers in `list` (containers, initContainers, ...).
bool drop_env_values(json& list) {
  bool changed = false;
  if (!list.is_array()) return false;
  for (json& container : list) {
    if (!container.is_object()) continue;
    auto env = container.find("env");
    if (env == container.end() || !env->is_array()) continue;
    for (json& var : *env) {
      if (var.is_object()) changed = var.erase("value") > 0 || changed;
    }
  }
  return changed;
}

}  // namespace

std::string redact_for_log(std::string object_json) {
  // Most objects hold none of it (nodes, queues, pod groups from controllers): skip the parse.
  const std::string_view text(object_json);
  if (text.find("\"managedFields\"") == std::string_view::npos &&
      text.find("\"env\"") == std::string_view::npos && text.find(kLastApplied) == std::string_view::npos) {
    return object_json;
  }
  json object = json::parse(object_json, nullptr, false);
  if (object.is_discarded() || !object.is_object()) return object_json;
  bool changed = false;
  if (auto meta = object.find("metadata"); meta != object.end() && meta->is_object()) {
    changed = meta->erase("managedFields") > 0 || changed;
    if (auto ann = meta->find("annotations"); ann != meta->end() && ann->is_object()) {
      changed = ann->erase(kLastApplied) > 0 || changed;
    }
  }
  if (auto spec = object.find("spec"); spec != object.end() && spec->is_object()) {
    for (const char* list : {"containers", "initContainers", "ephemeralContainers"}) {
      if (auto it = spec->find(list); it != spec->end()) changed = drop_env_values(*it) || changed;
    }
  }
  return changed ? object.dump() : object_json;
}

}  // namespace kai::model

namespace kai::model {

std::string owner_for_log(const std::string& object_json, const std::string& group_kind,
                          const std::string& api_version) {
  json j = json::parse(object_json, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return object_json;
  if (!j.contains("kind")) j["kind"] = group_kind;
  if (!j.contains("apiVersion") && !api_version.empty()) {
    j["apiVersion"] = api_version;
    j["kind"] = group_kind.substr(0, group_kind.find('.'));
  }
  auto owner = decode_workload_owner(j);
  if (!owner) return object_json;
  return encode(*owner).dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace kai::model
