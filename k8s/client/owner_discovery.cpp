#include "k8s/client/owner_discovery.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "k8s/model/owner_kinds.hpp"

namespace kai::k8s {

using Json = nlohmann::json;

model::Result<std::vector<OwnerResource>> discover_owner_kinds(KubeClient& client, std::vector<std::string>& warnings) {
  std::set<std::string> groups;  // the API groups of the wanted kinds
  for (const std::string& gk : model::grouped_owner_kinds()) groups.insert(gk.substr(gk.find('.') + 1));
  const ApiResult root = client.get("/apis");
  if (!root.ok()) return root.status("API discovery (GET /apis)");
  const Json list = Json::parse(root.body, nullptr, false);
  if (list.is_discarded() || !list.contains("groups") || !list["groups"].is_array()) {
    return model::Status::error("API discovery (GET /apis): not an APIGroupList");
  }
  std::vector<OwnerResource> out;
  for (const Json& g : list["groups"]) {
    const std::string name = g.value("name", "");
    if (!groups.count(name) || !g.contains("preferredVersion") || !g["preferredVersion"].is_object()) continue;
    const std::string gv = g["preferredVersion"].value("groupVersion", "");
    if (gv.empty()) continue;
    const ApiResult r = client.get("/apis/" + gv);
    const Json resources = r.ok() ? Json::parse(r.body, nullptr, false) : Json();
    if (!r.ok() || resources.is_discarded() || !resources.contains("resources") || !resources["resources"].is_array()) {
      warnings.push_back("API discovery of " + gv + ": " + (r.ok() ? "not an APIResourceList" : r.describe()));
      continue;
    }
    for (const Json& res : resources["resources"]) {
      const std::string plural = res.value("name", "");
      const std::string group_kind = res.value("kind", "") + "." + name;
      if (plural.empty() || plural.find('/') != std::string::npos || !model::grouped_owner_kinds().count(group_kind)) {
        continue;
      }
      const Json verbs = res.value("verbs", Json::array());
      auto has = [&](const char* verb) { return std::find(verbs.begin(), verbs.end(), verb) != verbs.end(); };
      if (!res.value("namespaced", false) || !has("list") || !has("watch")) continue;
      out.push_back({group_kind, gv, "/apis/" + gv + "/" + plural});
    }
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.group_kind < b.group_kind; });
  return out;
}

}  // namespace kai::k8s
