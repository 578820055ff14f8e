#include "actors/daemon/kube_webhook_cert_api.hpp"

#include <nlohmann/json.hpp>

#include "k8s/model/base64.hpp"

namespace kai::daemon {

using Json = nlohmann::json;

model::Result<std::optional<http::PemPair>> KubeWebhookCertApi::get_tls_secret(const std::string& ns,
                                                                                const std::string& name) {
  auto r = client_.get(k8s::core_path(ns, "secrets", name));
  if (r.not_found()) return std::optional<http::PemPair>{};
  if (!r.ok()) return model::Status::error(r.describe());
  Json secret = Json::parse(r.body, nullptr, false);
  if (!secret.is_object()) return model::Status::error("the Secret in the answer is not a JSON object");
  const Json data = secret.value("data", Json::object());
  auto field = [&](const char* key) -> model::Result<std::string> {
    const std::string encoded = data.value(key, "");
    auto decoded = model::base64_decode(encoded);
    if (!decoded.is_ok()) return model::Status::error(std::string("data.") + key + ": " + decoded.message());
    return decoded.value();
  };
  auto cert = field("tls.crt");
  if (!cert.is_ok()) return cert.status();
  auto key = field("tls.key");
  if (!key.is_ok()) return key.status();
  return std::optional<http::PemPair>{http::PemPair{cert.value(), key.value()}};
}

model::Status KubeWebhookCertApi::create_tls_secret(const std::string& ns, const std::string& name,
                                                    const http::PemPair& pem, bool* already_exists) {
  Json secret = {{"apiVersion", "v1"},
                 {"kind", "Secret"},
                 {"metadata", {{"name", name}, {"namespace", ns}}},
                 {"type", "kubernetes.io/tls"},
                 {"data",
                  {{"tls.crt", model::base64_encode(pem.certificate)}, {"tls.key", model::base64_encode(pem.private_key)}}}};
  auto r = client_.create_object(k8s::core_path(ns, "secrets"), secret.dump());
  if (r.ok()) return model::Status::ok();
  *already_exists = r.conflict() || r.reason == "AlreadyExists";
  return model::Status::error(r.describe());
}

model::Status KubeWebhookCertApi::set_ca_bundle(bool mutating, const std::string& name,
                                                const std::string& ca_pem, bool* not_found) {
  const std::string path =
      k8s::group_path("admissionregistration.k8s.io/v1", "",
                      mutating ? "mutatingwebhookconfigurations" : "validatingwebhookconfigurations", name);
  auto r = client_.get(path);
  if (!r.ok()) {
    if (not_found != nullptr) *not_found = r.code == 404;
    return model::Status::error(r.describe());
  }
  Json config = Json::parse(r.body, nullptr, false);
  if (!config.is_object()) return model::Status::error("the configuration in the answer is not a JSON object");
  Json webhooks = config.value("webhooks", Json::array());
  const std::string bundle = model::base64_encode(ca_pem);
  bool changed = false;
  for (auto& hook : webhooks) {
    if (hook["clientConfig"].value("caBundle", "") != bundle) {
      hook["clientConfig"]["caBundle"] = bundle;
      changed = true;
    }
  }
  if (!changed) return model::Status::ok();
  // A merge patch replaces the list whole; the resourceVersion makes it fail rather than overwrite a
  // change made in between (the next start tries again).
  Json patch = {{"metadata", {{"resourceVersion", config["metadata"].value("resourceVersion", "")}}},
                {"webhooks", webhooks}};
  auto p = client_.merge_patch(path, patch.dump());
  return p.ok() ? model::Status::ok() : model::Status::error(p.describe());
}

}  // namespace kai::daemon
