#pragma once
// Serving certificates for the admission webhooks without cert-manager: the first replica makes a
// self-signed certificate for the webhook Service and stores it in a Secret; every replica serves
// that certificate and makes sure the webhook configurations trust it (caBundle). Two replicas
// starting together cannot end up with different certificates: the Secret's create is the tie-break.

#include <optional>
#include <string>
#include <vector>

#include "k8s/http/certificate.hpp"
#include "k8s/model/status.hpp"

namespace kai::endpoints {

/// The calls the certificate manager makes (the daemon implements them with its Kubernetes client).
class WebhookCertApi {
 public:
  virtual ~WebhookCertApi() = default;
  /// The Secret's `tls.crt` / `tls.key`, nullopt when it does not exist.
  virtual model::Result<std::optional<http::PemPair>> get_tls_secret(const std::string& ns, const std::string& name) = 0;
  /// Creates a kubernetes.io/tls Secret; `*already_exists` is set on 409.
  virtual model::Status create_tls_secret(const std::string& ns, const std::string& name,
                                          const http::PemPair& pem, bool* already_exists) = 0;
  /// Sets clientConfig.caBundle of every webhook of the configuration (`mutating` or validating);
  /// `*not_found` is set on 404 (the configuration does not exist).
  virtual model::Status set_ca_bundle(bool mutating, const std::string& name, const std::string& ca_pem,
                                      bool* not_found) = 0;
};

struct WebhookCertOptions {
  std::string ns = "kai-scheduler";
  std::string secret = "kai-scheduler-webhook-cert";
  std::string service = "kai-scheduler-webhook";
  std::string mutating_configuration = "kai-scheduler";
  std::string validating_configuration = "kai-scheduler";
  int valid_days = 3650;
};

/// The DNS names the API server uses to call the webhook Service.
std::vector<std::string> webhook_dns_names(const WebhookCertOptions& options);

/// Finds or makes the certificate, and points both webhook configurations at it. Returns the
/// certificate and key to serve. A configuration that does not exist yet is not an error (it may be
/// applied after the scheduler): it is named in `warnings`, and the webhooks are served anyway.
model::Result<http::PemPair> ensure_webhook_certificate(WebhookCertApi& api,
                                                        const WebhookCertOptions& options,
                                                        std::vector<std::string>* warnings = nullptr);

}  // namespace kai::endpoints
