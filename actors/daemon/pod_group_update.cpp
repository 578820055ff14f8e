#include "actors/daemon/pod_group_update.hpp"

#include <nlohmann/json.hpp>

#include "actors/scheduler/core/pod_group_objects.hpp"
#include "k8s/model/json_codec.hpp"

namespace kai::daemon {
namespace {

using nlohmann::json;

model::Result<model::PodGroup> decode(const json& j, const char* what) {
  auto pg = model::decode_pod_group(j);
  if (!pg.is_ok()) return model::Status::error(std::string(what) + " PodGroup: " + pg.message());
  return pg;
}

}  // namespace

model::Result<std::optional<std::string>> pod_group_update(const std::string& live_json,
                                                           const std::string& desired_json) {
  json live = json::parse(live_json, nullptr, false);
  json desired = json::parse(desired_json, nullptr, false);
  if (!live.is_object()) return model::Status::error("the live PodGroup is not a JSON object");
  if (!desired.is_object()) return model::Status::error("the desired PodGroup is not a JSON object");
  auto existing = decode(live, "live");
  if (!existing.is_ok()) return existing.status();
  auto wanted = decode(desired, "desired");
  if (!wanted.is_ok()) return wanted.status();
  const model::PodGroup update = core::as_update_of(existing.value(), std::move(wanted).value());
  if (core::says_the_same(existing.value(), update)) return std::optional<std::string>();
  json& meta = live["metadata"];
  for (const char* field : {"labels", "annotations"}) {
    const auto& values = std::string(field) == "labels" ? update.meta.labels : update.meta.annotations;
    if (!meta.contains(field) || !meta[field].is_object()) meta[field] = json::object();
    for (const auto& [k, v] : values) meta[field][k] = v;
  }
  json encoded = model::encode(update);
  meta["ownerReferences"] = encoded["metadata"].value("ownerReferences", json::array());
  live["spec"] = std::move(encoded["spec"]);
  return std::optional<std::string>(live.dump());
}

}  // namespace kai::daemon
