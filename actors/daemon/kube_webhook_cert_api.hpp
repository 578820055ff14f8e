#pragma once
// The webhook certificate manager's port (actors/endpoints/webhook_certs.hpp) on the Kubernetes
// client: the kubernetes.io/tls Secret and the caBundle of the scheduler's two webhook
// configurations.

#include "actors/endpoints/webhook_certs.hpp"
#include "k8s/client/kube_client.hpp"

namespace kai::daemon {

class KubeWebhookCertApi : public endpoints::WebhookCertApi {
 public:
  explicit KubeWebhookCertApi(k8s::KubeClient& client) : client_(client) {}

  model::Result<std::optional<http::PemPair>> get_tls_secret(const std::string& ns, const std::string& name) override;
  model::Status create_tls_secret(const std::string& ns, const std::string& name, const http::PemPair& pem,
                                  bool* already_exists) override;
  model::Status set_ca_bundle(bool mutating, const std::string& name, const std::string& ca_pem,
                              bool* not_found) override;

 private:
  k8s::KubeClient& client_;
};

}  // namespace kai::daemon
