#pragma once
// The RBAC rules that apply to one service account, evaluated as the API server's authorizer does:
// ClusterRoles bound by a ClusterRoleBinding apply in every namespace and to cluster-scoped
// resources; Roles (and ClusterRoles) bound by a RoleBinding apply only in that binding's namespace.

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kai::deploy {

class RbacRules {
 public:
  /// The rules of the manifests `objects` that are bound to service account `name` in `ns`.
  static RbacRules for_service_account(const std::vector<nlohmann::json>& objects, const std::string& name,
                                       const std::string& ns);

  /// Whether `verb` on `resource` ("pods", "pods/binding") of API group `group` ("" = core) in
  /// namespace `ns` ("" = cluster-scoped, or all namespaces for list/watch) is allowed.
  /// A rule with resourceNames matches only requests that name one of them (`name`); list, watch and
  /// create requests carry no name, as in Kubernetes' authorizer.
  bool allows(const std::string& verb, const std::string& group, const std::string& resource,
              const std::string& ns, const std::string& name = "") const;
  /// Whether the call is allowed in at least one namespace (for calls whose namespace is unknown).
  bool allows_somewhere(const std::string& verb, const std::string& group, const std::string& resource) const;

 private:
  struct Grant {
    nlohmann::json rule;
    std::string ns;  ///< "" = everywhere (ClusterRoleBinding).
  };
  static bool rule_matches(const nlohmann::json& rule, const std::string& verb, const std::string& group,
                           const std::string& resource, const std::string& name);
  std::vector<Grant> grants_;
};

}  // namespace kai::deploy
