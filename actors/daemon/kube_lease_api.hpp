#pragma once
// The leader elector's Lease port (actors/leader/leader_elector.hpp) on the Kubernetes client:
// coordination.k8s.io/v1 Lease get / create / update, with MicroTime written to the microsecond as
// the API server requires, and the read resourceVersion as the update's precondition.

#include <string>

#include "actors/leader/leader_elector.hpp"
#include "k8s/client/kube_client.hpp"

namespace kai::daemon {

class KubeLeaseApi : public leader::LeaseApi {
 public:
  KubeLeaseApi(k8s::KubeClient& client, std::string lease_namespace, std::string lease_name);

  std::optional<leader::LeaseRecord> get(leader::LeaseError* error) override;
  std::optional<leader::LeaseRecord> create(const leader::LeaseRecord& record, leader::LeaseError* error) override;
  std::optional<leader::LeaseRecord> update(const leader::LeaseRecord& record, leader::LeaseError* error) override;

  /// Whether the lease namespace exists: a missing one is a configuration error, never a silent wait.
  model::Status check_namespace();

 private:
  std::optional<leader::LeaseRecord> answer(const k8s::ApiResult& r, leader::LeaseError* error);

  k8s::KubeClient& client_;
  std::string namespace_;
  std::string name_;
};

}  // namespace kai::daemon
