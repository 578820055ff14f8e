// The daemon's admission webhooks over HTTPS with the certificate it keeps in a Secret: the first
// start makes the Secret and fills in the caBundle of both webhook configurations; a restart reuses
// the same certificate; AdmissionReviews are answered by the validating and mutating hooks.

#include "actors/daemon/daemon.hpp"
#include "k8s/http/http_client.hpp"
#include "k8s/model/base64.hpp"
#include "tests/daemon/cluster_fixture.hpp"
#include "tests/endpoints/fraction_pod_review.hpp"

namespace kai::e2e {
namespace {

Json webhook_configuration(const std::string& kind, const std::string& path) {
  return {{"apiVersion", "admissionregistration.k8s.io/v1"},
          {"kind", kind},
          {"metadata", {{"name", "kai-scheduler"}}},
          {"webhooks",
           Json::array(
               {{{"name", "pods.kai-scheduler.run.ai"},
                 {"admissionReviewVersions", Json::array({"v1"})},
                 {"sideEffects", "None"},
                 {"failurePolicy", "Ignore"},
                 {"clientConfig",
                  {{"service",
                    {{"name", "kai-scheduler-webhook"}, {"namespace", "kai-scheduler"}, {"path", path}}}}},
                 {"rules", Json::array({{{"apiGroups", Json::array({""})},
                                         {"apiVersions", Json::array({"v1"})},
                                         {"operations", Json::array({"CREATE"})},
                                         {"resources", Json::array({"pods"})}}})}}})}};
}

std::string object_field(const Cluster& c, const std::string& api_version, const std::string& kind,
                         const std::string& ns, const std::string& name,
                         const std::function<std::string(const Json&)>& f) {
  auto list = c.server->list_objects(api_version, kind, ns);
  if (!list.is_ok()) return "";
  const Json items =
      Json::parse(list.value())["items"];  // owned: a range-for over a temporary's member dangles
  for (const auto& o : items) {
    if (o["metadata"]["name"] == name) return f(o);
  }
  return "";
}

TEST(Webhooks, ServedOverHttpsWithTheSecretsCertificateAndItsCaBundle) {
  Cluster c;
  c.namespace_("kai-scheduler");
  c.create(webhook_configuration("MutatingWebhookConfiguration", "/mutate-pods"));
  c.create(webhook_configuration("ValidatingWebhookConfiguration", "/validate-pods"));
  daemon::DaemonOptions o = c.daemon_options();
  o.webhook_port = 1;  // ephemeral
  o.admission.gpu_sharing = false;
  auto d = std::make_unique<daemon::Daemon>(o);
  ASSERT_TRUE(d->start().is_ok());
  ASSERT_NE(d->webhook_port(), 0);

  const std::string cert =
      object_field(c, "v1", "Secret", "kai-scheduler", "kai-scheduler-webhook-cert", [](const Json& s) {
        auto pem = model::base64_decode(s["data"].value("tls.crt", ""));
        return pem.is_ok() ? pem.value() : "";
      });
  ASSERT_NE(cert.find("BEGIN CERTIFICATE"), std::string::npos);
  for (const std::string kind : {"MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"}) {
    const std::string bundle =
        object_field(c, "admissionregistration.k8s.io/v1", kind, "", "kai-scheduler",
                     [](const Json& w) { return w["webhooks"][0]["clientConfig"].value("caBundle", ""); });
    EXPECT_EQ(bundle, model::base64_encode(cert)) << kind;
  }

  // The certificate names the webhook Service, not 127.0.0.1: the test talks TLS without checking
  // the name (the API server checks it against the caBundle above).
  http::Endpoint ep;
  ep.port = d->webhook_port();
  ep.tls = true;
  ep.insecure_skip_verify = true;
  http::HttpClient client(ep);
  Json review = webhook_fixtures::fraction_pod_review("u-1");
  auto r = client.request("POST", "/validate-pods", review.dump());
  ASSERT_EQ(r.status, 200) << r.error << r.body;
  EXPECT_EQ(Json::parse(r.body)["response"]["allowed"], false) << r.body;  // --gpu-sharing=false
  http::Endpoint plain = ep;
  plain.tls = false;
  EXPECT_NE(http::HttpClient(plain).request("POST", "/validate-pods", review.dump()).status,
            200);

  // A restart (or the second replica) serves the same certificate: the Secret is not made again.
  d->stop();
  d = std::make_unique<daemon::Daemon>(o);
  ASSERT_TRUE(d->start().is_ok());
  EXPECT_EQ(object_field(c, "v1", "Secret", "kai-scheduler", "kai-scheduler-webhook-cert",
                         [](const Json& s) {
                           auto pem = model::base64_decode(s["data"].value("tls.crt", ""));
                           return pem.is_ok() ? pem.value() : "";
                         }),
            cert);
  EXPECT_EQ(c.server->request_counts()["create secrets"], 1u);
  d->stop();
  expect_replay_matches(c.dir + "/log", /*require_cycles=*/false);
}

// The configurations may be applied after the daemon (README.md "kai-scheduler"): it warns and serves.
TEST(Webhooks, WithoutTheirConfigurationsTheWebhooksAreServedAnyway) {
  Cluster c;
  c.namespace_("kai-scheduler");
  daemon::DaemonOptions o = c.daemon_options();
  o.webhook_port = 1;
  daemon::Daemon d(o);
  auto s = d.start();
  ASSERT_TRUE(s.is_ok()) << s.message();
  ASSERT_NE(d.webhook_port(), 0);
  http::Endpoint ep;
  ep.port = d.webhook_port();
  ep.tls = true;
  ep.insecure_skip_verify = true;
  http::HttpClient client(ep);
  // A webhook path answers (a GET is refused by the webhook itself, not by a missing route).
  EXPECT_EQ(client.request("GET", "/validate-pods").status, 405);
  d.stop();
}

}  // namespace
}  // namespace kai::e2e
