#pragma once
// A kai-apiserver started in-process on ephemeral ports, with an HTTPS client verified against the CA
// it wrote, for the apiserver tests.

#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "k8s/apiserver/api_server.hpp"
#include "k8s/http/http_client.hpp"

namespace kai::apiserver {

using Json = nlohmann::json;

inline std::string source_dir() {
  const char* env = std::getenv("KAI_SOURCE_DIR");
  return env != nullptr ? env : KAI_DEFAULT_SOURCE_DIR;
}

/// Parses a reply body; a body that is not JSON becomes a JSON string (so failures print it).
inline Json body(const http::Reply& r) {
  Json j = Json::parse(r.body, nullptr, false);
  return j.is_discarded() ? Json(r.body) : j;
}

class ApiServerTest : public ::testing::Test {
 protected:
  /// Options before the server starts; tests may change them in their constructor.
  ServerOptions options_;

  void SetUp() override {
    options_.crd_dir = source_dir() + "/deploy/crds";
    options_.bookmark_interval = std::chrono::milliseconds(100);
    customize(options_);
    server_ = std::make_unique<ApiServer>(options_);
    auto s = server_->start();
    ASSERT_TRUE(s.is_ok()) << s.message();
    client_ = std::make_unique<http::HttpClient>(endpoint());
  }
  void TearDown() override {
    client_.reset();
    server_.reset();
  }
  virtual void customize(ServerOptions&) {}

  http::Endpoint endpoint(bool tls = true) const {
    http::Endpoint ep;
    ep.port = tls ? server_->https_port() : server_->http_port();
    ep.tls = tls;
    ep.ca_file = server_->ca_path();
    ep.token = server_->token();
    return ep;
  }

  http::Reply req(const std::string& method, const std::string& target, const Json& b = nullptr,
                     const std::string& content_type = "application/json") {
    return client_->request(method, target, b.is_null() ? "" : b.dump(), content_type);
  }
  Json get(const std::string& target) { return body(req("GET", target)); }

  static Json pod(const std::string& name, const std::string& ns = "default") {
    return Json{
        {"apiVersion", "v1"},
        {"kind", "Pod"},
        {"metadata", {{"name", name}, {"namespace", ns}, {"labels", {{"app", "demo"}}}}},
        {"spec",
         {{"schedulerName", "kai-scheduler"}, {"containers", {{{"name", "c"}, {"image", "busybox"}}}}}}};
  }
  /// Pod `name` in namespace default with `spec.<field>` set to `value`.
  static Json pod_with_spec(const std::string& name, const std::string& field, const Json& value) {
    Json p = pod(name);
    p["spec"][field] = value;
    return p;
  }
  /// POSTs `p` to the pods of namespace default, whatever its own namespace.
  http::Reply post_pod(const Json& p) { return req("POST", "/api/v1/namespaces/default/pods", p); }
  http::Reply create_pod(const std::string& name, const std::string& ns = "default") {
    return req("POST", "/api/v1/namespaces/" + ns + "/pods", pod(name, ns));
  }
  http::Reply bind(const std::string& name, const std::string& node, const std::string& ns = "default") {
    return req("POST", "/api/v1/namespaces/" + ns + "/pods/" + name + "/binding",
               Json{{"apiVersion", "v1"},
                    {"kind", "Binding"},
                    {"metadata", {{"name", name}}},
                    {"target", {{"apiVersion", "v1"}, {"kind", "Node"}, {"name", node}}}});
  }

  std::unique_ptr<ApiServer> server_;
  std::unique_ptr<http::HttpClient> client_;
};

}  // namespace kai::apiserver
