// Transport, authentication, discovery and bad requests: the real server's status codes, never a crash.

#include <filesystem>
#include <fstream>

#include "tests/apiserver/fixture.hpp"

namespace kai::apiserver {
namespace {

using Http = ApiServerTest;

TEST_F(Http, TokenIsRequired) {
  http::Endpoint anon = endpoint();
  anon.token = "";
  http::HttpClient c(anon);
  auto r = c.request("GET", "/api/v1/namespaces");
  EXPECT_EQ(r.status, 401);
  EXPECT_EQ(body(r)["reason"], "Unauthorized");
  anon.token = "wrong";
  EXPECT_EQ(http::HttpClient(anon).request("GET", "/api/v1/pods").status, 401);
  EXPECT_EQ(http::HttpClient(anon).request("POST", "/debug/drop-watches").status, 401);
  EXPECT_EQ(c.request("GET", "/healthz").status, 200);
  EXPECT_EQ(c.request("GET", "/readyz").body, "ok");
  EXPECT_EQ(body(c.request("GET", "/version"))["major"], "1");
}

TEST_F(Http, TlsIsVerifiedAndPlainHttpWorks) {
  // Another server's certificate does not verify this one.
  ApiServer other;
  ASSERT_TRUE(other.start().is_ok());
  http::Endpoint ep = endpoint();
  ep.ca_file = other.ca_path();
  auto r = http::HttpClient(ep).request("GET", "/healthz");
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.error.find("handshake"), std::string::npos) << r.error;
  // Plain HTTP serves the same API.
  auto p = http::HttpClient(endpoint(false)).request("GET", "/api/v1/namespaces/default");
  EXPECT_EQ(p.status, 200);
  EXPECT_EQ(body(p)["metadata"]["name"], "default");
}

TEST_F(Http, KubeconfigNamesServerCaAndToken) {
  std::ifstream in(server_->kubeconfig_path());
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("server: " + server_->https_url()), std::string::npos);
  EXPECT_NE(text.find("certificate-authority: " + server_->ca_path()), std::string::npos);
  EXPECT_NE(text.find("token: " + server_->token()), std::string::npos);
  auto perms = std::filesystem::status(server_->kubeconfig_path()).permissions();
  EXPECT_EQ(perms & std::filesystem::perms::others_read, std::filesystem::perms::none);
}

TEST_F(Http, Discovery) {
  Json api = get("/api");
  EXPECT_EQ(api["kind"], "APIVersions");
  EXPECT_EQ(api["versions"][0], "v1");
  Json v1 = get("/api/v1");
  EXPECT_EQ(v1["kind"], "APIResourceList");
  std::set<std::string> names;
  for (const auto& r : v1["resources"]) names.insert(r["name"]);
  for (const char* n : {"pods", "pods/binding", "pods/status", "pods/eviction", "nodes", "nodes/status",
                        "namespaces", "events", "configmaps"}) {
    EXPECT_TRUE(names.count(n)) << n;
  }
  std::set<std::string> groups;
  const Json group_list = get("/apis");
  for (const auto& g : group_list["groups"]) groups.insert(g["name"]);
  for (const char* g : {"apps", "batch", "coordination.k8s.io", "events.k8s.io", "scheduling.k8s.io",
                        "apiextensions.k8s.io", "scheduling.run.ai"}) {
    EXPECT_TRUE(groups.count(g)) << g;
  }
  Json kai = get("/apis/scheduling.run.ai");
  EXPECT_EQ(kai["kind"], "APIGroup");
  EXPECT_EQ(kai["versions"].size(), 3u);
  Json pgs = get("/apis/scheduling.run.ai/v2alpha2");
  EXPECT_EQ(pgs["resources"][0]["name"], "podgroups");
  EXPECT_EQ(pgs["resources"][0]["shortNames"][0], "pg");
  Json queues = get("/apis/scheduling.run.ai/v2");
  EXPECT_EQ(queues["resources"][0]["namespaced"], false);
  Json oa = get("/openapi/v3");
  ASSERT_TRUE(oa["paths"].contains("apis/apps/v1"));
  Json apps = get(oa["paths"]["apis/apps/v1"]["serverRelativeURL"]);
  EXPECT_TRUE(apps["paths"].contains("/apis/apps/v1/namespaces/{namespace}/deployments/{name}"));
}

TEST_F(Http, BadRequestsGetRealStatusCodes) {
  auto malformed = client_->request("POST", "/api/v1/namespaces/default/pods", "{not json");
  EXPECT_EQ(malformed.status, 400);
  EXPECT_EQ(body(malformed)["reason"], "BadRequest");
  auto array = client_->request("POST", "/api/v1/namespaces/default/pods", "[1,2]");
  EXPECT_EQ(array.status, 400);
  Json node = {{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", "n"}}}};
  EXPECT_EQ(req("POST", "/api/v1/namespaces/default/pods", node).status, 400);
  Json wrong_version = pod("p");
  wrong_version["apiVersion"] = "apps/v1";
  EXPECT_EQ(req("POST", "/api/v1/namespaces/default/pods", wrong_version).status, 400);
  auto big =
      client_->request("POST", "/api/v1/namespaces/default/configmaps",
                       R"({"metadata":{"name":"big"},"data":{"x":")" + std::string(4 << 20, 'a') + "\"}}");
  EXPECT_EQ(big.status, 413);
  EXPECT_EQ(body(big)["reason"], "RequestEntityTooLarge");
  auto unknown = req("GET", "/api/v1/namespaces/default/widgets");
  EXPECT_EQ(unknown.status, 404);
  EXPECT_EQ(body(unknown)["message"], "the server could not find the requested resource");
  EXPECT_EQ(req("GET", "/nothing/here").status, 404);
  EXPECT_EQ(req("GET", "/apis/apps/v9/deployments").status, 404);
  EXPECT_EQ(req("GET", "/api/v1/namespaces/default/pods/a/b/c/d").status, 404);
  EXPECT_EQ(req("GET", "/api/v1/namespaces/default/pods/a/logs").status, 404);
  auto method = req("PUT", "/api/v1/namespaces/default/pods");
  EXPECT_EQ(method.status, 405);
  EXPECT_EQ(body(method)["reason"], "MethodNotAllowed");
  EXPECT_EQ(req("POST", "/api/v1/namespaces/default/pods/p1").status, 405);
  EXPECT_EQ(client_->request("POST", "/api/v1/namespaces/default/pods", "x", "text/plain").status, 415);
  EXPECT_EQ(req("GET", "/api/v1/namespaces/default/pods?limit=abc").status, 400);
  // YAML bodies are accepted as the real server does.
  auto yaml = client_->request("POST", "/api/v1/namespaces/default/configmaps",
                               "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: y\ndata:\n  k: v\n",
                               "application/yaml");
  EXPECT_EQ(yaml.status, 201) << yaml.body;
  // The server still serves after all of that.
  EXPECT_EQ(create_pod("ok").status, 201);
}

TEST_F(Http, RawGarbageDoesNotCrash) {
  // A plain HTTP client sending a broken request line, then a proper one on a new connection.
  http::HttpClient c(endpoint(false));
  auto r = c.request("GET", "/api/v1/namespaces/default/pods\x01", "");
  EXPECT_TRUE(r.status == 0 || r.status == 400 || r.status == 404) << r.status;
  EXPECT_EQ(http::HttpClient(endpoint(false)).request("GET", "/healthz").status, 200);
}

TEST_F(Http, CreateObjectWithoutHttp) {
  auto r = server_->create_object("apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n");
  ASSERT_TRUE(r.is_ok()) << r.message();
  EXPECT_EQ(get("/api/v1/nodes/n1")["metadata"]["name"], "n1");
  EXPECT_FALSE(server_->create_object("apiVersion: v9\nkind: Thing\nmetadata: {name: x}\n").is_ok());
}

}  // namespace
}  // namespace kai::apiserver
