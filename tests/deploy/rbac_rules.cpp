#include "tests/deploy/rbac_rules.hpp"

#include <algorithm>

namespace kai::deploy {

using Json = nlohmann::json;

namespace {

bool binds(const Json& binding, const std::string& name, const std::string& ns) {
  for (const auto& s : binding.value("subjects", Json::array())) {
    if (s.value("kind", "") == "ServiceAccount" && s.value("name", "") == name &&
        s.value("namespace", "") == ns) {
      return true;
    }
  }
  return false;
}

const Json* find_role(const std::vector<Json>& objects, const std::string& kind, const std::string& name,
                      const std::string& ns) {
  for (const auto& o : objects) {
    if (o.value("kind", "") != kind) continue;
    const Json& m = o["metadata"];
    if (m.value("name", "") == name && (kind == "ClusterRole" || m.value("namespace", "") == ns)) return &o;
  }
  return nullptr;
}

bool contains(const Json& list, const std::string& value) {
  return std::any_of(list.begin(), list.end(), [&](const Json& v) { return v == value || v == "*"; });
}

}  // namespace

RbacRules RbacRules::for_service_account(const std::vector<Json>& objects, const std::string& name,
                                         const std::string& ns) {
  RbacRules out;
  for (const auto& b : objects) {
    const std::string kind = b.value("kind", "");
    if ((kind != "ClusterRoleBinding" && kind != "RoleBinding") || !binds(b, name, ns)) continue;
    const std::string binding_ns = kind == "RoleBinding" ? b["metadata"].value("namespace", "") : "";
    const Json& ref = b["roleRef"];
    const Json* role = find_role(objects, ref.value("kind", ""), ref.value("name", ""), binding_ns);
    if (role == nullptr) continue;  // a binding to a missing role grants nothing, as in Kubernetes
    for (const auto& rule : role->value("rules", Json::array())) out.grants_.push_back({rule, binding_ns});
  }
  return out;
}

bool RbacRules::rule_matches(const Json& rule, const std::string& verb, const std::string& group,
                             const std::string& resource, const std::string& name) {
  const Json names = rule.value("resourceNames", Json::array());
  if (!names.empty() && (name.empty() || !contains(names, name))) return false;
  return contains(rule.value("verbs", Json::array()), verb) &&
         contains(rule.value("apiGroups", Json::array()), group) &&
         contains(rule.value("resources", Json::array()), resource);
}

bool RbacRules::allows(const std::string& verb, const std::string& group, const std::string& resource,
                       const std::string& ns, const std::string& name) const {
  return std::any_of(grants_.begin(), grants_.end(), [&](const Grant& g) {
    return (g.ns.empty() || g.ns == ns) && rule_matches(g.rule, verb, group, resource, name);
  });
}

bool RbacRules::allows_somewhere(const std::string& verb, const std::string& group,
                                 const std::string& resource) const {
  return std::any_of(grants_.begin(), grants_.end(),
                     [&](const Grant& g) { return rule_matches(g.rule, verb, group, resource, ""); });
}

}  // namespace kai::deploy
