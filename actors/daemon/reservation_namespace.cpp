#include "actors/daemon/reservation_namespace.hpp"

#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include "actors/gpu_sharing/sharing_chain.hpp"

namespace kai::daemon {

model::Status ensure_reservation_namespace(k8s::KubeClient& client) {
  using nlohmann::json;
  const std::string ns = model::kReservationNamespace;
  // The reservation pods' serviceAccountName (actors/daemon/kube_sharing_api.cpp) is the namespace's name.
  const std::string& account = ns;
  struct Needed {
    std::string what, path, collection;
    json object;
  };
  const Needed needed[] = {
      {"namespace " + ns, k8s::core_path("", "namespaces", ns), k8s::core_path("", "namespaces"),
       json{{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", ns}}}}},
      {"ServiceAccount " + ns + "/" + account, k8s::core_path(ns, "serviceaccounts", account),
       k8s::core_path(ns, "serviceaccounts"),
       json{{"apiVersion", "v1"},
            {"kind", "ServiceAccount"},
            {"metadata", {{"name", account}, {"namespace", ns}}}}},
  };
  const std::string apply = "; apply deploy/base/namespaces.yaml and deploy/base/serviceaccounts.yaml";
  for (const Needed& n : needed) {
    const k8s::ApiResult r = client.get(n.path);
    if (r.ok()) continue;
    if (!r.not_found())
      return model::Status::error("GPU reservation: reading " + n.what + ": " + r.describe() + apply);
    const k8s::ApiResult c = client.create_object(n.collection, n.object.dump());
    if (!c.ok() && !c.conflict()) {
      return model::Status::error("GPU reservation: " + n.what + " does not exist and cannot be created (" +
                                  c.describe() + ")" + apply);
    }
    spdlog::info("GPU reservation: created {} (it was missing)", n.what);
  }
  return model::Status::ok();
}

}  // namespace kai::daemon
