// Store: the registry of served resources, the built-in kinds and those of CustomResourceDefinitions.
#include <utility>

#include "k8s/apiserver/store_internal.hpp"

namespace kai::apiserver {

void Store::add_resource_locked(std::shared_ptr<ResourceInfo> info) {
  resources_[info->group + "/" + info->version + "/" + info->resource] = std::move(info);
}

void Store::register_builtins() {
  auto add = [&](std::string group, std::string version, std::string resource, std::string singular,
                 const std::string& kind, bool namespaced, bool status, bool generation,
                 std::vector<std::string> short_names) {
    auto r = std::make_shared<ResourceInfo>();
    r->group = std::move(group);
    r->version = std::move(version);
    r->resource = std::move(resource);
    r->singular = std::move(singular);
    r->kind = kind;
    r->list_kind = kind + "List";
    r->namespaced = namespaced;
    r->has_status = status;
    r->has_generation = generation;
    r->short_names = std::move(short_names);
    add_resource_locked(std::move(r));
  };
  add("", "v1", "namespaces", "namespace", "Namespace", false, true, false, {"ns"});
  add("", "v1", "nodes", "node", "Node", false, true, false, {"no"});
  add("", "v1", "pods", "pod", "Pod", true, true, false, {"po"});
  add("", "v1", "events", "event", "Event", true, false, false, {"ev"});
  add("", "v1", "configmaps", "configmap", "ConfigMap", true, false, false, {"cm"});
  add("events.k8s.io", "v1", "events", "event", "Event", true, false, false, {"ev"});
  add("coordination.k8s.io", "v1", "leases", "lease", "Lease", true, false, false, {});
  add("scheduling.k8s.io", "v1", "priorityclasses", "priorityclass", "PriorityClass", false, false, false,
      {"pc"});
  add("apps", "v1", "deployments", "deployment", "Deployment", true, true, true, {"deploy"});
  add("apps", "v1", "replicasets", "replicaset", "ReplicaSet", true, true, true, {"rs"});
  add("batch", "v1", "jobs", "job", "Job", true, true, true, {});
  // The kinds deploy/ installs, stored without kind-specific rules, so that the manifests can be
  // applied to this server as they would be to a real cluster.
  add("", "v1", "serviceaccounts", "serviceaccount", "ServiceAccount", true, false, false, {"sa"});
  add("", "v1", "secrets", "secret", "Secret", true, false, false, {});
  add("", "v1", "services", "service", "Service", true, true, false, {"svc"});
  add("apps", "v1", "statefulsets", "statefulset", "StatefulSet", true, true, true, {"sts"});
  add("policy", "v1", "poddisruptionbudgets", "poddisruptionbudget", "PodDisruptionBudget", true, true,
      true, {"pdb"});
  add("node.k8s.io", "v1", "runtimeclasses", "runtimeclass", "RuntimeClass", false, false, false, {});
  add("rbac.authorization.k8s.io", "v1", "clusterroles", "clusterrole", "ClusterRole", false, false,
      false, {});
  add("rbac.authorization.k8s.io", "v1", "clusterrolebindings", "clusterrolebinding",
      "ClusterRoleBinding", false, false, false, {});
  add("rbac.authorization.k8s.io", "v1", "roles", "role", "Role", true, false, false, {});
  add("rbac.authorization.k8s.io", "v1", "rolebindings", "rolebinding", "RoleBinding", true, false,
      false, {});
  add("admissionregistration.k8s.io", "v1", "mutatingwebhookconfigurations",
      "mutatingwebhookconfiguration", "MutatingWebhookConfiguration", false, false, true, {});
  add("admissionregistration.k8s.io", "v1", "validatingwebhookconfigurations",
      "validatingwebhookconfiguration", "ValidatingWebhookConfiguration", false, false, true, {});
  add("apiextensions.k8s.io", "v1", "customresourcedefinitions", "customresourcedefinition",
      "CustomResourceDefinition", false, true, true, {"crd", "crds"});
}

std::shared_ptr<const ResourceInfo> Store::find(const std::string& group, const std::string& version,
                                                const std::string& resource) const {
  std::lock_guard lock(mu_);
  auto it = resources_.find(group + "/" + version + "/" + resource);
  return it == resources_.end() ? nullptr : it->second;
}

std::vector<std::shared_ptr<const ResourceInfo>> Store::resources() const {
  std::lock_guard lock(mu_);
  std::vector<std::shared_ptr<const ResourceInfo>> out;
  for (const auto& [k, r] : resources_) out.push_back(r);
  return out;
}

const ResourceInfo* Store::find_any_version_locked(const std::string& storage_key) const {
  for (const auto& [k, r] : resources_) {
    if (r->storage_key() == storage_key) return r.get();
  }
  return nullptr;
}

void Store::register_crd_locked(const Json& crd) {
  const Json& spec = crd["spec"];
  const Json& names = spec["names"];
  for (const auto& v : spec["versions"]) {
    if (!v.value("served", true)) continue;
    auto r = std::make_shared<ResourceInfo>();
    r->group = spec.value("group", "");
    r->version = v.value("name", "");
    r->resource = names.value("plural", "");
    r->singular = names.value("singular", "");
    r->kind = names.value("kind", "");
    r->list_kind = names.value("listKind", r->kind + "List");
    if (names.contains("shortNames")) r->short_names = names["shortNames"].get<std::vector<std::string>>();
    r->namespaced = spec.value("scope", "Namespaced") == "Namespaced";
    r->has_status = v.contains("subresources") && v["subresources"].contains("status");
    r->has_generation = true;
    r->custom = true;
    if (v.contains("schema")) r->schema = v["schema"].value("openAPIV3Schema", Json());
    if (v.contains("additionalPrinterColumns")) r->printer_columns = v["additionalPrinterColumns"];
    add_resource_locked(std::move(r));
  }
}

void Store::unregister_crd_locked(const Json& crd) {
  const Json& spec = crd["spec"];
  const std::string group = spec.value("group", "");
  const std::string plural = spec["names"].value("plural", "");
  for (auto it = resources_.begin(); it != resources_.end();) {
    if (it->second->group == group && it->second->resource == plural) {
      it = resources_.erase(it);
    } else {
      ++it;
    }
  }
}

void Store::create_crd(const Json& crd) {
  auto r = find("apiextensions.k8s.io", "v1", "customresourcedefinitions");
  create(*r, "", crd);
}

}  // namespace kai::apiserver
