// Webhook serving certificates: made once, stored in a Secret, shared by racing replicas, trusted by
// both webhook configurations, valid for the Service's DNS names.

#include <gtest/gtest.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include <mutex>
#include <thread>

#include "actors/endpoints/webhook_certs.hpp"

namespace kai::endpoints {
namespace {

class FakeCertApi : public WebhookCertApi {
 public:
  model::Result<std::optional<http::PemPair>> get_tls_secret(const std::string& ns, const std::string& name) override {
    std::lock_guard lock(mu);
    ++gets;
    auto it = secrets.find(ns + "/" + name);
    if (it == secrets.end()) return std::optional<http::PemPair>();
    return std::optional<http::PemPair>(it->second);
  }
  model::Status create_tls_secret(const std::string& ns, const std::string& name, const http::PemPair& pem,
                                  bool* already_exists) override {
    std::lock_guard lock(mu);
    if (!secrets.emplace(ns + "/" + name, pem).second) {
      *already_exists = true;
      return model::Status::error("409 AlreadyExists");
    }
    ++creates;
    return model::Status::ok();
  }
  model::Status set_ca_bundle(bool mutating, const std::string& name, const std::string& ca,
                              bool* not_found) override {
    std::lock_guard lock(mu);
    if (missing_configurations) {
      *not_found = true;
      return model::Status::error("404 not found");
    }
    if (fail_patch) return model::Status::error("403 forbidden");
    bundles[(mutating ? "mutating/" : "validating/") + name] = ca;
    return model::Status::ok();
  }
  std::mutex mu;
  std::map<std::string, http::PemPair> secrets;
  std::map<std::string, std::string> bundles;
  int gets = 0, creates = 0;
  bool fail_patch = false;
  bool missing_configurations = false;
};

bool valid_for_host(const std::string& pem, const std::string& host) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  if (cert == nullptr) return false;
  const bool ok = X509_check_host(cert, host.c_str(), host.size(), 0, nullptr) == 1;
  X509_free(cert);
  return ok;
}

TEST(WebhookCerts, FirstReplicaMakesTheSecretAndBothConfigurationsTrustIt) {
  FakeCertApi api;
  auto pem = ensure_webhook_certificate(api, {});
  ASSERT_TRUE(pem.is_ok()) << pem.message();
  EXPECT_EQ(api.creates, 1);
  EXPECT_EQ(api.bundles.at("mutating/kai-scheduler"), pem->certificate);
  EXPECT_EQ(api.bundles.at("validating/kai-scheduler"), pem->certificate);
  EXPECT_TRUE(valid_for_host(pem->certificate, "kai-scheduler-webhook.kai-scheduler.svc"));
  EXPECT_TRUE(valid_for_host(pem->certificate, "kai-scheduler-webhook.kai-scheduler.svc.cluster.local"));
  EXPECT_FALSE(valid_for_host(pem->certificate, "evil.example.com"));
  EXPECT_NE(pem->private_key.find("PRIVATE KEY"), std::string::npos);
  // A restart (or the second replica later) reuses it.
  auto again = ensure_webhook_certificate(api, {});
  ASSERT_TRUE(again.is_ok());
  EXPECT_EQ(again->certificate, pem->certificate);
  EXPECT_EQ(api.creates, 1);
}

TEST(WebhookCerts, RacingReplicasServeTheSameCertificate) {
  for (int round = 0; round < 5; ++round) {
    FakeCertApi api;
    std::vector<std::string> served(4);
    std::vector<std::thread> threads;
    for (int i = 0; i < 4; ++i) {
      threads.emplace_back([&, i] {
        auto pem = ensure_webhook_certificate(api, {});
        ASSERT_TRUE(pem.is_ok()) << pem.message();
        served[i] = pem->certificate;
      });
    }
    for (auto& t : threads) t.join();
    EXPECT_EQ(api.creates, 1);
    for (const auto& s : served) EXPECT_EQ(s, api.secrets.begin()->second.certificate);
    EXPECT_EQ(api.bundles.at("mutating/kai-scheduler"), served[0]);
  }
}

TEST(WebhookCerts, MissingWebhookConfigurationsAreWarningsAndTheCertificateIsServed) {
  FakeCertApi api;
  api.missing_configurations = true;
  std::vector<std::string> warnings;
  auto pem = ensure_webhook_certificate(api, {}, &warnings);
  ASSERT_TRUE(pem.is_ok()) << pem.message();
  EXPECT_FALSE(pem.value().certificate.empty());
  ASSERT_EQ(warnings.size(), 2u);
  EXPECT_NE(warnings[0].find("MutatingWebhookConfiguration kai-scheduler does not exist"), std::string::npos)
      << warnings[0];
  EXPECT_NE(warnings[1].find("ValidatingWebhookConfiguration kai-scheduler"), std::string::npos)
      << warnings[1];
}

TEST(WebhookCerts, OtherFailuresToSetTheCaBundleAreClearErrors) {
  FakeCertApi api;
  api.fail_patch = true;
  auto pem = ensure_webhook_certificate(api, {});
  ASSERT_FALSE(pem.is_ok());
  EXPECT_NE(pem.message().find("MutatingWebhookConfiguration kai-scheduler"), std::string::npos)
      << pem.message();
  EXPECT_NE(pem.message().find("403"), std::string::npos) << pem.message();
}

TEST(WebhookCerts, DamagedSecretIsReported) {
  FakeCertApi api;
  api.secrets["kai-scheduler/kai-scheduler-webhook-cert"] = http::PemPair{"", ""};
  auto pem = ensure_webhook_certificate(api, {});
  ASSERT_FALSE(pem.is_ok());
  EXPECT_NE(pem.message().find("no tls.crt or tls.key"), std::string::npos);
}

}  // namespace
}  // namespace kai::endpoints
