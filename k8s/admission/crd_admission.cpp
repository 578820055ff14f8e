#include "k8s/admission/crd_admission.hpp"

#include <map>
#include <set>

namespace kai::admission {

using Json = nlohmann::json;

std::string validate_queue(const Json& queue) {
  if (!queue.is_object()) return "the object is not a JSON object";
  const std::string name = queue.contains("metadata") && queue["metadata"].is_object()
                               ? queue["metadata"].value("name", "")
                               : std::string();
  const Json* spec = queue.contains("spec") ? &queue["spec"] : nullptr;
  if (spec == nullptr || !spec->is_object() || !spec->contains("resources") || (*spec)["resources"].is_null()) {
    return "queue " + name +
           ": spec.resources is required (quota, limit and overQuotaWeight of gpu, cpu and memory; -1 = "
           "unlimited)";
  }
  if (!(*spec)["resources"].is_object()) return "queue " + name + ": spec.resources must be an object";
  return "";
}

std::string validate_pod_group(const Json& pod_group) {
  if (!pod_group.is_object()) return "the object is not a JSON object";
  if (!pod_group.contains("spec") || !pod_group["spec"].is_object()) return "";
  const Json& spec = pod_group["spec"];
  if (!spec.contains("subGroups") || spec["subGroups"].is_null()) return "";
  if (!spec["subGroups"].is_array()) return "spec.subGroups must be a list";

  std::map<std::string, std::string> parent_of;  // "" = top level
  for (size_t i = 0; i < spec["subGroups"].size(); ++i) {
    const Json& g = spec["subGroups"][i];
    const std::string where = "spec.subGroups[" + std::to_string(i) + "]";
    if (!g.is_object() || !g.contains("name") || !g["name"].is_string()) return where + ".name is required";
    const std::string name = g["name"].get<std::string>();
    for (char ch : name) {
      if (ch >= 'A' && ch <= 'Z') return where + ".name \"" + name + "\" must be lower case";
    }
    if (parent_of.count(name)) return where + ".name: duplicate subgroup name \"" + name + "\"";
    std::string parent;
    if (g.contains("parent") && !g["parent"].is_null()) {
      if (!g["parent"].is_string()) return where + ".parent must be a string";
      parent = g["parent"].get<std::string>();
    }
    parent_of[name] = parent;
  }
  for (const auto& [name, parent] : parent_of) {
    if (!parent.empty() && !parent_of.count(parent)) {
      return "subgroup \"" + name + "\": parent \"" + parent + "\" is not a subgroup of this pod group";
    }
  }
  // Every chain of parents must reach the top within as many steps as there are subgroups.
  for (const auto& [name, unused] : parent_of) {
    std::set<std::string> seen{name};
    for (std::string at = parent_of[name]; !at.empty(); at = parent_of[at]) {
      if (!seen.insert(at).second) return "subgroup \"" + name + "\": its parents form a cycle";
    }
  }
  return "";
}

}  // namespace kai::admission
