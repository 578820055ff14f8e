#include "actors/endpoints/webhook_certs.hpp"

namespace kai::endpoints {

std::vector<std::string> webhook_dns_names(const WebhookCertOptions& o) {
  return {o.service, o.service + "." + o.ns, o.service + "." + o.ns + ".svc",
          o.service + "." + o.ns + ".svc.cluster.local"};
}

model::Result<http::PemPair> ensure_webhook_certificate(WebhookCertApi& api, const WebhookCertOptions& o,
                                                        std::vector<std::string>* warnings) {
  const std::string where = "secret " + o.ns + "/" + o.secret;
  auto existing = api.get_tls_secret(o.ns, o.secret);
  if (!existing.is_ok()) return model::Status::error("reading " + where + ": " + existing.message());
  std::optional<http::PemPair> pem = existing.value();
  if (!pem) {
    http::CertificateRequest request;
    request.common_name = o.service + "." + o.ns + ".svc";
    request.dns_names = webhook_dns_names(o);
    request.ip_addresses.clear();
    request.valid_days = o.valid_days;
    auto made = make_self_signed_certificate(request);
    if (!made.is_ok()) return made.status();
    bool already_exists = false;
    auto created = api.create_tls_secret(o.ns, o.secret, made.value(), &already_exists);
    if (created.is_ok()) {
      pem = made.value();
    } else if (already_exists) {
      // Another replica won the race: serve its certificate, not ours.
      auto again = api.get_tls_secret(o.ns, o.secret);
      if (!again.is_ok() || !again.value()) {
        return model::Status::error("reading " + where + " after losing the race to create it: " + again.message());
      }
      pem = again.value();
    } else {
      return model::Status::error("creating " + where + ": " + created.message());
    }
  }
  if (pem->certificate.empty() || pem->private_key.empty()) {
    return model::Status::error(where + " has no tls.crt or tls.key");
  }
  for (const bool mutating : {true, false}) {
    const std::string kind = mutating ? "MutatingWebhookConfiguration" : "ValidatingWebhookConfiguration";
    const std::string& name = mutating ? o.mutating_configuration : o.validating_configuration;
    bool not_found = false;
    if (auto s = api.set_ca_bundle(mutating, name, pem->certificate, &not_found); !s.is_ok()) {
      if (!not_found)
        return model::Status::error("setting caBundle of " + kind + " " + name + ": " + s.message());
      if (warnings != nullptr) {
        warnings->push_back(kind + " " + name +
                            " does not exist: the webhooks are served, but the API server " +
                            "calls them only once it is applied (deploy/base/webhooks.yaml); restart the " +
                            "scheduler after applying it so that its caBundle trusts the certificate");
      }
    }
  }
  return *pem;
}

}  // namespace kai::endpoints
