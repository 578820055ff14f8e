#pragma once
// The status writer's port (status_api.hpp) and the PodGroup writer's port (pod_group_api.hpp) on
// the Kubernetes client. A failure's code is the HTTP status's class (k8s::ApiResult::error_code),
// its message the answer as logs show it (ApiResult::describe).

#include "actors/daemon/pod_group_api.hpp"
#include "actors/daemon/status_api.hpp"
#include "k8s/client/kube_client.hpp"

namespace kai::daemon {

class KubeStatusApi : public StatusApi {
 public:
  explicit KubeStatusApi(k8s::KubeClient& client) : client_(client) {}

  model::Status set_pod_condition(const std::string& ns, const std::string& name, const std::string& type,
                                  const std::string& status, const std::string& reason,
                                  const std::string& message) override;
  model::Status create_event(const EventNote& event) override;

 private:
  k8s::KubeClient& client_;
};

class KubePodGroupApi : public PodGroupApi {
 public:
  explicit KubePodGroupApi(k8s::KubeClient& client) : client_(client) {}

  /// A JSON merge patch of metadata.annotations on scheduling.run.ai/v2alpha2 PodGroups.
  model::Status patch_pod_group_annotations(
      const std::string& ns, const std::string& name,
      const std::map<std::string, std::optional<std::string>>& annotations) override;

 private:
  k8s::KubeClient& client_;
};

}  // namespace kai::daemon
