#pragma once
// The binder's API port (bind_api.hpp) on the Kubernetes client: each call is the client's typed
// call, its answer turned into a Status whose code is the HTTP status's class
// (k8s::ApiResult::error_code) and whose message is the answer as logs show it (ApiResult::describe).

#include "actors/daemon/bind_api.hpp"
#include "k8s/client/kube_client.hpp"

namespace kai::daemon {

class KubeBindApi : public BindApi {
 public:
  explicit KubeBindApi(k8s::KubeClient& client) : client_(client) {}

  model::Status bind_pod(const std::string& ns, const std::string& name, const std::string& uid,
                         const std::string& node) override;
  model::Result<std::string> pod_node(const std::string& ns, const std::string& name,
                                      const std::string& uid) override;
  model::Status delete_pod(const std::string& ns, const std::string& name, const std::string& uid,
                           int64_t grace_seconds) override;

 private:
  k8s::KubeClient& client_;
};

}  // namespace kai::daemon
