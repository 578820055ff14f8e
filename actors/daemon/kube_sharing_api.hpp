#pragma once
// The GPU-sharing chain's API port (actors/gpu_sharing/sharing_api.hpp) on the Kubernetes client.

#include "actors/gpu_sharing/sharing_api.hpp"
#include "k8s/client/kube_client.hpp"

namespace kai::daemon {

class KubeSharingApi : public gpu_sharing::SharingApi {
 public:
  explicit KubeSharingApi(k8s::KubeClient& client) : client_(client) {}

  model::Result<std::vector<gpu_sharing::ReservationPod>> list_reservation_pods(const std::string& group,
                                                                               const std::string& node) override;
  model::Result<std::string> create_reservation_pod(const gpu_sharing::ReservationPodSpec& spec) override;
  model::Result<std::string> reported_gpu_uuid(const std::string& name) override;
  model::Status delete_pod(const std::string& ns, const std::string& name, const std::string& uid) override;
  model::Status upsert_config_map(const std::string& ns, const std::string& name, const std::string& owner_name,
                                  const std::string& owner_uid, const std::map<std::string, std::string>& data) override;
  model::Status patch_pod_labels(const std::string& ns, const std::string& name,
                                 const std::map<std::string, std::optional<std::string>>& labels) override;
  void warn(const std::string& ns, const std::string& name, const std::string& reason,
            const std::string& message) override;

 private:
  k8s::KubeClient& client_;
};

}  // namespace kai::daemon
