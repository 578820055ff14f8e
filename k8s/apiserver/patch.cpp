#include "k8s/apiserver/patch.hpp"

#include <map>
#include <set>

namespace kai::apiserver {
namespace {

/// Merge key of a list field, "" when the list is replaced as a whole.
std::string merge_key(const std::string& field) {
  static const std::map<std::string, std::string> kKeys = {{"containers", "name"},
                                                           {"initContainers", "name"},
                                                           {"ephemeralContainers", "name"},
                                                           {"env", "name"},
                                                           {"volumes", "name"},
                                                           {"imagePullSecrets", "name"},
                                                           {"resourceClaims", "name"},
                                                           {"schedulingGates", "name"},
                                                           {"volumeMounts", "mountPath"},
                                                           {"volumeDevices", "devicePath"},
                                                           {"ports", "containerPort"},
                                                           {"conditions", "type"},
                                                           {"addresses", "type"},
                                                           {"ownerReferences", "uid"},
                                                           {"hostAliases", "ip"}};
  auto it = kKeys.find(field);
  return it == kKeys.end() ? "" : it->second;
}

bool primitive_set(const std::string& field) {
  return field == "finalizers";
}

Json merge_map(const Json& target, const Json& patch);

Json merge_list(const std::string& field, const Json& target, const Json& patch, const Json* order) {
  const std::string key = merge_key(field);
  if (primitive_set(field)) {
    Json out = target.is_array() ? target : Json::array();
    for (const auto& v : patch) {
      if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
    }
    return out;
  }
  if (key.empty()) {
    Json out = Json::array();
    for (const auto& v : patch) {
      if (v.is_object() && v.contains("$patch")) continue;
      out.push_back(v);
    }
    return out;
  }
  for (const auto& v : patch) {
    if (v.is_object() && v.value("$patch", "") == "replace") {
      Json out = Json::array();
      for (const auto& w : patch) {
        if (!(w.is_object() && w.contains("$patch"))) out.push_back(w);
      }
      return out;
    }
  }
  Json out = target.is_array() ? target : Json::array();
  for (const auto& item : patch) {
    if (!item.is_object() || !item.contains(key)) {
      throw bad_request("map: " + item.dump() + " does not contain declared merge key: " + key);
    }
    auto it = std::find_if(out.begin(), out.end(), [&](const Json& t) {
      return t.is_object() && t.contains(key) && t[key] == item[key];
    });
    if (item.value("$patch", "") == "delete") {
      if (it != out.end()) out.erase(it);
      continue;
    }
    if (it != out.end()) {
      *it = merge_map(*it, item);
    } else {
      out.push_back(merge_map(Json::object(), item));
    }
  }
  if (order && order->is_array()) {
    Json sorted = Json::array();
    std::vector<bool> used(out.size(), false);
    for (const auto& o : *order) {
      if (!o.is_object() || !o.contains(key)) continue;
      for (size_t i = 0; i < out.size(); ++i) {
        if (!used[i] && out[i].is_object() && out[i].contains(key) && out[i][key] == o[key]) {
          sorted.push_back(out[i]);
          used[i] = true;
          break;
        }
      }
    }
    for (size_t i = 0; i < out.size(); ++i) {
      if (!used[i]) sorted.push_back(out[i]);
    }
    out = std::move(sorted);
  }
  return out;
}

Json merge_map(const Json& target, const Json& patch) {
  if (!patch.is_object()) return patch;
  const std::string directive = patch.value("$patch", "");
  if (directive == "delete") return nullptr;
  Json out = (target.is_object() && directive != "replace") ? target : Json::object();
  if (auto rk = patch.find("$retainKeys"); rk != patch.end() && rk->is_array()) {
    std::set<std::string> keep;
    for (const auto& k : *rk) {
      if (k.is_string()) keep.insert(k.get<std::string>());
    }
    for (auto it = out.begin(); it != out.end();) {
      if (!keep.count(it.key())) {
        it = out.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (auto it = patch.begin(); it != patch.end(); ++it) {
    const std::string& k = it.key();
    if (k == "$patch" || k == "$retainKeys" || k.rfind("$setElementOrder/", 0) == 0) continue;
    if (k.rfind("$deleteFromPrimitiveList/", 0) == 0) {
      const std::string field = k.substr(25);
      if (out.contains(field) && out[field].is_array() && it->is_array()) {
        Json kept = Json::array();
        for (const auto& v : out[field]) {
          if (std::find(it->begin(), it->end(), v) == it->end()) kept.push_back(v);
        }
        out[field] = kept;
      }
      continue;
    }
    if (it->is_null()) {
      out.erase(k);
    } else if (it->is_object()) {
      Json merged = merge_map(out.contains(k) ? out[k] : Json(), *it);
      if (merged.is_null()) {
        out.erase(k);
      } else {
        out[k] = std::move(merged);
      }
    } else if (it->is_array()) {
      auto order = patch.find("$setElementOrder/" + k);
      out[k] =
          merge_list(k, out.contains(k) ? out[k] : Json(), *it, order == patch.end() ? nullptr : &*order);
    } else {
      out[k] = *it;
    }
  }
  return out;
}

}  // namespace

Json apply_merge_patch(const Json& target, const Json& patch) {
  if (!patch.is_object())
    throw bad_request("json: cannot unmarshal " + std::string(patch.type_name()) +
                      " into Go value of type map[string]interface {}");
  Json out = target;
  out.merge_patch(patch);
  return out;
}

Json apply_json_patch(const Json& target, const Json& patch) {
  if (!patch.is_array()) {
    throw bad_request("json: cannot unmarshal " + std::string(patch.type_name()) +
                      " into Go value of type jsonpatch.Patch");
  }
  try {
    return target.patch(patch);
  } catch (const nlohmann::json::exception& e) {
    throw ApiError(422, "Invalid", e.what());
  }
}

Json apply_strategic_merge_patch(const Json& target, const Json& patch) {
  if (!patch.is_object())
    throw bad_request("unable to find api field in struct for the patch: not an object");
  return merge_map(target, patch);
}

}  // namespace kai::apiserver
