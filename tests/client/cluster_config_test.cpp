// Cluster configuration: kubeconfig variants (certificate-authority-data, token and tokenFile,
// contexts, relative paths, errors naming what is missing), $KUBECONFIG / ~/.kube/config resolution,
// the in-cluster service account (with the token re-read as it rotates), and TLS verification
// against the right and a wrong certificate authority.

#include "k8s/http/certificate.hpp"
#include "tests/client/client_fixture.hpp"

namespace kai::k8s::test {
namespace {

class Config : public ClientTest {
 protected:
  /// A one-context kubeconfig (JSON, which YAML reads too) for the test server; `cluster` and `user`
  /// are merged into the cluster and user entries.
  Json kubeconfig(const Json& cluster, const Json& user) const {
    Json c = {{"server", server_->https_url()}};
    c.update(cluster);
    return Json{{"apiVersion", "v1"},
                {"kind", "Config"},
                {"clusters", Json::array({{{"name", "c"}, {"cluster", c}}})},
                {"contexts", Json::array({{{"name", "ctx"},
                                           {"context", {{"cluster", "c"}, {"user", "u"}, {"namespace", "team-a"}}}}})},
                {"current-context", "ctx"},
                {"users", Json::array({{{"name", "u"}, {"user", user}}})}};
  }
  std::string write(const std::string& rel, const Json& config) {
    const std::string path = dir_ / rel;
    write_text(path, config.dump(2));
    return path;
  }
  /// GETs the default namespace's pods with a client of `config` (no retries).
  ApiResult list_pods(const ClusterConfig& config) const {
    ClientOptions o;
    o.max_retries = 0;
    KubeClient client(config, o);
    return client.get(core_path("default", "pods"));
  }
  ApiResult list_pods_with(const std::string& kubeconfig_path) const {
    auto cfg = load_kubeconfig(kubeconfig_path);
    EXPECT_TRUE(cfg.is_ok()) << cfg.message();
    if (!cfg.is_ok()) return ApiResult{};
    return list_pods(cfg.value());
  }
  std::string ca() const { return read_text(server_->ca_path()); }

  TempDir dir_;
};

TEST_F(Config, TheServersKubeconfigVerifiesTlsAndAuthenticates) {
  ApiResult r = list_pods(config_);
  EXPECT_TRUE(r.ok()) << r.describe();
  EXPECT_EQ(config_.endpoint.port, server_->https_port());
  EXPECT_EQ(config_.default_namespace, "default");
  EXPECT_TRUE(contains(config_.source, server_->kubeconfig_path())) << config_.source;
  EXPECT_FALSE(contains(config_.source, server_->token())) << "the source is for logs: never the token";
}

TEST_F(Config, CertificateAuthorityDataIsBase64) {
  const std::string path = write("kc", kubeconfig({{"certificate-authority-data", base64_encode(ca())}},
                                                  {{"token", server_->token()}}));
  auto cfg = load_kubeconfig(path);
  ASSERT_TRUE(cfg.is_ok()) << cfg.message();
  EXPECT_EQ(cfg.value().endpoint.ca_pem, ca());
  EXPECT_EQ(cfg.value().default_namespace, "team-a");
  ApiResult r = list_pods(cfg.value());
  EXPECT_TRUE(r.ok()) << r.describe();

  const std::string bad = write("bad", kubeconfig({{"certificate-authority-data", "!!not base64!!"}}, Json::object()));
  auto err = load_kubeconfig(bad);
  ASSERT_FALSE(err.is_ok());
  EXPECT_TRUE(contains(err.message(), "certificate-authority-data")) << err.message();
  EXPECT_TRUE(contains(err.message(), bad)) << err.message();
}

TEST_F(Config, AWrongCertificateAuthorityFailsWithAClearMessage) {
  http::CertificateRequest other_request;
  other_request.common_name = "some-other-ca";
  auto other = http::make_self_signed_certificate(other_request);
  ASSERT_TRUE(other.is_ok()) << other.message();
  const std::string path = write("kc", kubeconfig({{"certificate-authority-data", base64_encode(other.value().certificate)}},
                                                  {{"token", server_->token()}}));
  auto cfg = load_kubeconfig(path);
  ASSERT_TRUE(cfg.is_ok()) << cfg.message();
  server_->reset_request_counts();
  ApiResult r = list_pods(cfg.value());
  EXPECT_EQ(r.code, 0) << r.describe();
  EXPECT_TRUE(contains(lower(r.describe()), "certificate verify failed")) << r.describe();
  EXPECT_TRUE(contains(r.describe(), "not signed by the configured certificate authority")) << r.describe();
  EXPECT_EQ(served("total"), 0u) << "nothing was sent to an unverified server";

  // insecure-skip-tls-verify (and no CA) connects anyway, as the kubeconfig asks.
  const std::string insecure = write("insecure", kubeconfig({{"insecure-skip-tls-verify", true}}, {{"token", server_->token()}}));
  ApiResult skip = list_pods_with(insecure);
  EXPECT_TRUE(skip.ok()) << skip.describe();
}

TEST_F(Config, NoCertificateAuthorityUsesTheSystemStoreAndRejectsASelfSignedServer) {
  const std::string path = write("kc", kubeconfig(Json::object(), {{"token", server_->token()}}));
  ApiResult r = list_pods_with(path);
  EXPECT_EQ(r.code, 0) << r.describe();
  EXPECT_TRUE(contains(lower(r.describe()), "certificate verify failed")) << r.describe();
}

TEST_F(Config, TokenAndTokenFile) {
  const Json ca_file = {{"certificate-authority", server_->ca_path()}};
  // No credentials: 401.
  ApiResult anonymous = list_pods_with(write("none", kubeconfig(ca_file, Json::object())));
  EXPECT_EQ(anonymous.code, 401) << anonymous.describe();
  // A token.
  ApiResult token = list_pods_with(write("token", kubeconfig(ca_file, {{"token", server_->token()}})));
  EXPECT_TRUE(token.ok()) << token.describe();
  // A tokenFile (absolute; its trailing newline is not part of the token).
  const std::string token_file = dir_ / "token";
  write_text(token_file, server_->token() + "\n");
  ApiResult file = list_pods_with(write("file", kubeconfig(ca_file, {{"tokenFile", token_file}})));
  EXPECT_TRUE(file.ok()) << file.describe();
  // Both: the file wins, as client-go's BearerTokenFile does.
  ApiResult both =
      list_pods_with(write("both", kubeconfig(ca_file, {{"token", "stale-token"}, {"tokenFile", token_file}})));
  EXPECT_TRUE(both.ok()) << both.describe();
}

// A tokenFile is read before every request, so a rotated token is used at once.
TEST_F(Config, TokenFileRotationIsPickedUp) {
  const std::string token_file = dir_ / "token";
  write_text(token_file, "old-token");
  auto cfg = load_kubeconfig(write("kc", kubeconfig({{"certificate-authority", server_->ca_path()}}, {{"tokenFile", token_file}})));
  ASSERT_TRUE(cfg.is_ok()) << cfg.message();
  ClientOptions o;
  o.max_retries = 0;
  KubeClient client(cfg.value(), o);
  EXPECT_EQ(client.get(core_path("default", "pods")).code, 401);
  write_text(token_file, server_->token());
  ApiResult r = client.get(core_path("default", "pods"));
  EXPECT_TRUE(r.ok()) << r.describe();
  write_text(token_file, "revoked");
  EXPECT_EQ(client.get(core_path("default", "pods")).code, 401);
}

TEST_F(Config, CurrentContextSelectsAmongTwo) {
  const std::string yaml = "apiVersion: v1\nkind: Config\n"
                           "clusters:\n"
                           "- name: nowhere\n  cluster:\n    server: https://127.0.0.1:1\n"
                           "    certificate-authority: " + server_->ca_path() + "\n"
                           "- name: test\n  cluster:\n    server: " + server_->https_url() + "\n"
                           "    certificate-authority: " + server_->ca_path() + "\n"
                           "contexts:\n"
                           "- name: first\n  context:\n    cluster: nowhere\n    user: u\n    namespace: team-a\n"
                           "- name: second\n  context:\n    cluster: test\n    user: u\n    namespace: team-b\n"
                           "current-context: second\n"
                           "users:\n- name: u\n  user:\n    token: " + server_->token() + "\n";
  const std::string path = dir_ / "kc.yaml";
  write_text(path, yaml);
  auto cur = load_kubeconfig(path);
  ASSERT_TRUE(cur.is_ok()) << cur.message();
  EXPECT_EQ(cur.value().endpoint.port, server_->https_port());
  EXPECT_EQ(cur.value().default_namespace, "team-b");
  EXPECT_TRUE(contains(cur.value().source, "context second")) << cur.value().source;
  EXPECT_TRUE(list_pods(cur.value()).ok());

  auto first = load_kubeconfig(path, "first");
  ASSERT_TRUE(first.is_ok()) << first.message();
  EXPECT_EQ(first.value().endpoint.port, 1);
  EXPECT_EQ(first.value().default_namespace, "team-a");
  EXPECT_TRUE(contains(first.value().source, "context first")) << first.value().source;

  auto missing = load_kubeconfig(path, "third");
  ASSERT_FALSE(missing.is_ok());
  EXPECT_TRUE(contains(missing.message(), "\"third\"")) << missing.message();
  EXPECT_TRUE(contains(missing.message(), path)) << missing.message();

  Json no_current = kubeconfig(Json::object(), Json::object());
  no_current.erase("current-context");
  auto none = load_kubeconfig(write("nocurrent", no_current));
  ASSERT_FALSE(none.is_ok());
  EXPECT_TRUE(contains(none.message(), "current-context")) << none.message();
}

TEST_F(Config, RelativePathsAreRelativeToTheKubeconfig) {
  write_text(dir_ / "sub/ca.crt", ca());
  const std::string path =
      write("sub/config", kubeconfig({{"certificate-authority", "ca.crt"}}, {{"token", server_->token()}}));
  auto cfg = load_kubeconfig(path);
  ASSERT_TRUE(cfg.is_ok()) << cfg.message();
  EXPECT_EQ(cfg.value().endpoint.ca_pem, ca());
  EXPECT_TRUE(list_pods(cfg.value()).ok());
}

// Regression test (fixed): client-go resolves a relative tokenFile against the
// kubeconfig's directory, as it does certificate-authority (clientcmd GetAuthInfoFileReferences lists
// TokenFile); load_kubeconfig reads it relative to the working directory (cluster_config.cpp, the
// `user["tokenFile"]` branch), finds nothing and silently sends no token: 401.
TEST_F(Config, RelativeTokenFileIsRelativeToTheKubeconfig) {
  write_text(dir_ / "sub/token", server_->token());
  const std::string path = write(
      "sub/config", kubeconfig({{"certificate-authority", server_->ca_path()}}, {{"tokenFile", "token"}}));
  ApiResult r = list_pods_with(path);
  EXPECT_TRUE(r.ok()) << r.describe();
}

// Regression test (fixed): a tokenFile that does not exist was taken silently (the token source
// then sent no token: a stream of 401s). It is an error naming the kubeconfig, the field and the
// file, also when the path is relative (the resolved path is named).
TEST_F(Config, AMissingTokenFileIsAnErrorNamingIt) {
  const Json ca_file = {{"certificate-authority", server_->ca_path()}};
  const std::string token_file = dir_ / "no-such-token";
  const std::string path = write("kc", kubeconfig(ca_file, {{"tokenFile", token_file}}));
  auto cfg = load_kubeconfig(path);
  ASSERT_FALSE(cfg.is_ok()) << "a missing tokenFile was accepted";
  EXPECT_TRUE(contains(cfg.message(), token_file)) << cfg.message();
  EXPECT_TRUE(contains(cfg.message(), "tokenFile")) << cfg.message();
  EXPECT_TRUE(contains(cfg.message(), path)) << cfg.message();

  const std::string relative = write("sub/kc", kubeconfig(ca_file, {{"tokenFile", "gone"}}));
  auto rel = load_kubeconfig(relative);
  ASSERT_FALSE(rel.is_ok());
  EXPECT_TRUE(contains(rel.message(), dir_ / "sub/gone")) << rel.message();
}

// Regression test (fixed): only the first file of $KUBECONFIG was read, and a missing first file
// was an error. kubectl merges every listed file: the first file to set a name (cluster, context,
// user) or current-context wins, relative paths stay relative to their own file, and missing files
// are skipped. Here the current-context and the user come from a.yaml, the context and the cluster
// (with its relative CA path) from b/config; b's own current-context and its copy of the user (a
// wrong token) are ignored, and so is c.yaml's cluster of the same name (an unreachable server).
TEST_F(Config, KubeconfigListIsMergedLikeKubectl) {
  Json a = {{"apiVersion", "v1"},
            {"kind", "Config"},
            {"current-context", "merged"},
            {"users", Json::array({{{"name", "u"}, {"user", {{"token", server_->token()}}}}})}};
  write_text(dir_ / "b/ca.crt", ca());
  Json b = {
      {"apiVersion", "v1"},
      {"kind", "Config"},
      {"current-context", "other"},
      {"contexts", Json::array({{{"name", "merged"},
                                 {"context", {{"cluster", "c"}, {"user", "u"}, {"namespace", "team-b"}}}},
                                {{"name", "other"}, {"context", {{"cluster", "c"}, {"user", "u"}}}}})},
      {"clusters",
       Json::array({{{"name", "c"},
                     {"cluster", {{"server", server_->https_url()}, {"certificate-authority", "ca.crt"}}}}})},
      {"users", Json::array({{{"name", "u"}, {"user", {{"token", "wrong-token"}}}}})}};
  const std::string a_path = write("a.yaml", a);
  const std::string b_path = write("b/config", b);
  // A third file that redefines cluster "c" (unreachable) comes last: never used.
  Json c = b;
  c["clusters"][0]["cluster"] = {{"server", "https://127.0.0.1:1"}, {"insecure-skip-tls-verify", true}};
  const std::string c_path = write("c.yaml", c);
  const std::string missing = dir_ / "missing";
  EnvGuard host("KUBERNETES_SERVICE_HOST", nullptr);
  EnvGuard port("KUBERNETES_SERVICE_PORT", nullptr);
  {
    EnvGuard kc("KUBECONFIG",
                (missing + ":" + a_path + "::" + b_path + ":" + missing + "2:" + c_path).c_str());
    auto cfg = resolve_cluster_config("");
    ASSERT_TRUE(cfg.is_ok()) << cfg.message();
    EXPECT_EQ(cfg.value().endpoint.port, server_->https_port());
    EXPECT_EQ(cfg.value().endpoint.ca_pem, ca()) << "b's relative CA path is relative to b";
    EXPECT_EQ(cfg.value().endpoint.token, server_->token()) << "user u of the first file that has it";
    EXPECT_EQ(cfg.value().default_namespace, "team-b");
    EXPECT_TRUE(contains(cfg.value().source, "context merged")) << cfg.value().source;
    EXPECT_TRUE(contains(cfg.value().source, a_path)) << cfg.value().source;
    EXPECT_TRUE(contains(cfg.value().source, b_path)) << cfg.value().source;
    EXPECT_FALSE(contains(cfg.value().source, missing)) << cfg.value().source;
    ApiResult r = list_pods(cfg.value());
    EXPECT_TRUE(r.ok()) << r.describe();
  }
  {
    // A context asked for by name is looked up in the merged files as well.
    auto other = load_kubeconfig_list(a_path + ":" + b_path, "other");
    ASSERT_TRUE(other.is_ok()) << other.message();
    EXPECT_EQ(other.value().endpoint.port, server_->https_port());
    EXPECT_EQ(other.value().default_namespace, "default");
  }
  {
    // Only missing files: an error naming the list.
    EnvGuard kc("KUBECONFIG", (missing + ":" + missing + "2").c_str());
    auto none = resolve_cluster_config("");
    ASSERT_FALSE(none.is_ok());
    EXPECT_TRUE(contains(none.message(), "KUBECONFIG")) << none.message();
    EXPECT_TRUE(contains(none.message(), missing + ":" + missing + "2")) << none.message();
  }
  {
    // Files that exist but define nothing: no current-context, named as such.
    write_text(dir_ / "empty", "");
    EnvGuard kc("KUBECONFIG", (dir_ / "empty").c_str());
    auto empty = resolve_cluster_config("");
    ASSERT_FALSE(empty.is_ok());
    EXPECT_TRUE(contains(empty.message(), "no current-context")) << empty.message();
  }
}

TEST_F(Config, MissingFilesAndFieldsAreNamed) {
  const std::string nowhere = dir_ / "no-such-kubeconfig";
  auto file = load_kubeconfig(nowhere);
  ASSERT_FALSE(file.is_ok());
  EXPECT_TRUE(contains(file.message(), nowhere)) << file.message();

  const std::string ca_path = dir_ / "missing-ca.crt";
  const std::string path = write("kc", kubeconfig({{"certificate-authority", ca_path}}, Json::object()));
  auto ca_missing = load_kubeconfig(path);
  ASSERT_FALSE(ca_missing.is_ok());
  EXPECT_TRUE(contains(ca_missing.message(), ca_path)) << ca_missing.message();
  EXPECT_TRUE(contains(ca_missing.message(), "certificate-authority")) << ca_missing.message();

  Json bad_server = kubeconfig(Json::object(), Json::object());
  bad_server["clusters"][0]["cluster"]["server"] = "127.0.0.1:6443";
  auto scheme = load_kubeconfig(write("scheme", bad_server));
  ASSERT_FALSE(scheme.is_ok());
  EXPECT_TRUE(contains(scheme.message(), "https://")) << scheme.message();

  Json no_cluster = kubeconfig(Json::object(), Json::object());
  no_cluster["contexts"][0]["context"]["cluster"] = "gone";
  auto cluster = load_kubeconfig(write("nocluster", no_cluster));
  ASSERT_FALSE(cluster.is_ok());
  EXPECT_TRUE(contains(cluster.message(), "\"gone\"")) << cluster.message();

  auto exec = load_kubeconfig(write("exec", kubeconfig(Json::object(), {{"exec", {{"command", "aws"}}}})));
  ASSERT_FALSE(exec.is_ok());
  EXPECT_TRUE(contains(exec.message(), "exec")) << exec.message();

  write_text(dir_ / "garbage", "clusters: [unclosed");
  auto garbage = load_kubeconfig(dir_ / "garbage");
  ASSERT_FALSE(garbage.is_ok());
  EXPECT_TRUE(contains(garbage.message(), dir_ / "garbage")) << garbage.message();
}

TEST_F(Config, ResolveOrder) {
  const std::string flag = write("flag", kubeconfig({{"certificate-authority", server_->ca_path()}}, {{"token", server_->token()}}));
  const std::string env = write("env", kubeconfig({{"certificate-authority", server_->ca_path()}}, Json::object()));
  write_text(dir_ / "home/.kube/config", kubeconfig({{"certificate-authority", server_->ca_path()}}, Json::object()).dump());
  EnvGuard host("KUBERNETES_SERVICE_HOST", nullptr);
  EnvGuard port("KUBERNETES_SERVICE_PORT", nullptr);
  {
    EnvGuard kc("KUBECONFIG", (env + ":" + flag).c_str());
    auto r = resolve_cluster_config(flag);
    ASSERT_TRUE(r.is_ok()) << r.message();
    EXPECT_TRUE(contains(r.value().source, flag)) << "--kubeconfig comes first: " << r.value().source;
    auto e = resolve_cluster_config("");
    ASSERT_TRUE(e.is_ok()) << e.message();
    EXPECT_TRUE(contains(e.value().source, env)) << "then the first file of $KUBECONFIG: " << e.value().source;
  }
  {
    EnvGuard kc("KUBECONFIG", nullptr);
    EnvGuard home("HOME", (dir_ / "home").c_str());
    auto h = resolve_cluster_config("");
    ASSERT_TRUE(h.is_ok()) << h.message();
    EXPECT_TRUE(contains(h.value().source, dir_ / "home/.kube/config")) << h.value().source;
  }
  {
    EnvGuard kc("KUBECONFIG", nullptr);
    EnvGuard home("HOME", dir_.path().c_str());
    auto none = resolve_cluster_config("");
    ASSERT_FALSE(none.is_ok());
    EXPECT_TRUE(contains(none.message(), "no cluster configuration")) << none.message();
  }
  {
    // In a pod (KUBERNETES_SERVICE_HOST set) without $KUBECONFIG: the service account under "/".
    EnvGuard kc("KUBECONFIG", nullptr);
    EnvGuard in_host("KUBERNETES_SERVICE_HOST", "127.0.0.1");
    EnvGuard in_port("KUBERNETES_SERVICE_PORT", "443");
    auto in = resolve_cluster_config("");
    if (in.is_ok()) {
      EXPECT_EQ(in.value().source, "in-cluster");  // the tests run inside a pod
    } else {
      EXPECT_EQ(in.message().rfind("in-cluster: ", 0), 0u) << in.message();
    }
  }
}

/// A service-account directory under a test root, as the kubelet mounts it.
class InCluster : public Config {
 protected:
  std::string sa(const std::string& file) const { return dir_ / ("var/run/secrets/kubernetes.io/serviceaccount/" + file); }
  void mount(const std::string& token, const std::string& ns = "team-a") {
    write_text(sa("ca.crt"), ca());
    write_text(sa("token"), token);
    if (!ns.empty()) write_text(sa("namespace"), ns);
  }
  std::string port() const { return std::to_string(server_->https_port()); }
};

TEST_F(InCluster, ServiceAccountFromEnvironmentAndFiles) {
  mount(server_->token());
  EnvGuard host("KUBERNETES_SERVICE_HOST", "127.0.0.1");
  EnvGuard p("KUBERNETES_SERVICE_PORT", port().c_str());
  auto cfg = in_cluster_config(dir_.path());
  ASSERT_TRUE(cfg.is_ok()) << cfg.message();
  EXPECT_EQ(cfg.value().source, "in-cluster");
  EXPECT_EQ(cfg.value().default_namespace, "team-a");
  EXPECT_EQ(cfg.value().endpoint.port, server_->https_port());
  EXPECT_EQ(cfg.value().endpoint.ca_pem, ca());
  EXPECT_TRUE(cfg.value().endpoint.tls);
  ApiResult r = list_pods(cfg.value());
  EXPECT_TRUE(r.ok()) << r.describe();
}

TEST_F(InCluster, IPv6ServiceHostIsBracketed) {
  mount(server_->token());
  EnvGuard host("KUBERNETES_SERVICE_HOST", "::1");
  EnvGuard p("KUBERNETES_SERVICE_PORT", "6443");
  auto cfg = in_cluster_config(dir_.path());
  ASSERT_TRUE(cfg.is_ok()) << cfg.message();
  EXPECT_EQ(cfg.value().endpoint.host, "::1");
  EXPECT_EQ(cfg.value().endpoint.port, 6443);
}

TEST_F(InCluster, MissingPiecesAreNamed) {
  {
    EnvGuard host("KUBERNETES_SERVICE_HOST", nullptr);
    EnvGuard p("KUBERNETES_SERVICE_PORT", nullptr);
    auto cfg = in_cluster_config(dir_.path());
    ASSERT_FALSE(cfg.is_ok());
    EXPECT_TRUE(contains(cfg.message(), "KUBERNETES_SERVICE_HOST")) << cfg.message();
  }
  EnvGuard host("KUBERNETES_SERVICE_HOST", "127.0.0.1");
  EnvGuard p("KUBERNETES_SERVICE_PORT", port().c_str());
  auto no_ca = in_cluster_config(dir_.path());
  ASSERT_FALSE(no_ca.is_ok());
  EXPECT_TRUE(contains(no_ca.message(), sa("ca.crt"))) << no_ca.message();
  write_text(sa("ca.crt"), ca());
  auto no_token = in_cluster_config(dir_.path());
  ASSERT_FALSE(no_token.is_ok());
  EXPECT_TRUE(contains(no_token.message(), sa("token"))) << no_token.message();
  write_text(sa("token"), server_->token());
  auto no_ns = in_cluster_config(dir_.path());
  ASSERT_TRUE(no_ns.is_ok()) << no_ns.message();
  EXPECT_EQ(no_ns.value().default_namespace, "default") << "no namespace file: \"default\"";
}

// Regression test (fixed): the namespace file was taken as is, so "team-a\n" (as written by
// `echo` or a ConfigMap) became a namespace with a newline in it. It is trimmed; only whitespace
// means "default".
TEST_F(InCluster, NamespaceFileIsTrimmed) {
  mount(server_->token(), "team-a\n");
  EnvGuard host("KUBERNETES_SERVICE_HOST", "127.0.0.1");
  EnvGuard p("KUBERNETES_SERVICE_PORT", port().c_str());
  auto cfg = in_cluster_config(dir_.path());
  ASSERT_TRUE(cfg.is_ok()) << cfg.message();
  EXPECT_EQ(cfg.value().default_namespace, "team-a");
  write_text(sa("namespace"), " \n");
  auto blank = in_cluster_config(dir_.path());
  ASSERT_TRUE(blank.is_ok()) << blank.message();
  EXPECT_EQ(blank.value().default_namespace, "default");
}

// The projected token is re-read at most once a minute (cluster_config.cpp, in_cluster_config). A
// rewrite within the minute is not seen yet; an empty first read is retried on the next request.
// The minute itself is not injectable (no clock), so "re-read after a minute" is not tested here.
TEST_F(InCluster, TokenIsCachedForAMinuteButAnEmptyOneIsReadAgain) {
  mount("");
  EnvGuard host("KUBERNETES_SERVICE_HOST", "127.0.0.1");
  EnvGuard p("KUBERNETES_SERVICE_PORT", port().c_str());
  auto cfg = in_cluster_config(dir_.path());
  ASSERT_TRUE(cfg.is_ok()) << cfg.message();
  ClientOptions o;
  o.max_retries = 0;
  KubeClient client(cfg.value(), o);
  EXPECT_EQ(client.get(core_path("default", "pods")).code, 401) << "an empty token file: no credentials yet";
  write_text(sa("token"), server_->token() + "\n");
  ApiResult r = client.get(core_path("default", "pods"));
  EXPECT_TRUE(r.ok()) << "the token appeared, and an empty cache reads the file again: " << r.describe();
  write_text(sa("token"), "rotated-token");
  ApiResult cached = client.get(core_path("default", "pods"));
  EXPECT_TRUE(cached.ok()) << "within the minute the cached token is still sent: " << cached.describe();
}

}  // namespace
}  // namespace kai::k8s::test
