// The test API server's assembly: certificate, CRDs, kubeconfig, the router, and the shared HTTPS
// transport (k8s/http/https_server.cpp). All API semantics live in router.cpp / store.cpp.

#include <filesystem>
#include <fstream>
#include <optional>
#include <random>

#include "k8s/apiserver/api_server.hpp"
#include "k8s/apiserver/router.hpp"
#include "k8s/http/certificate.hpp"
#include "k8s/http/https_server.hpp"
#include "k8s/model/json_codec.hpp"

namespace kai::apiserver {
namespace {

std::string random_token() {
  static const char* kChars = "abcdefghijklmnopqrstuvwxyz0123456789";
  std::random_device rd;
  std::string t;
  for (int i = 0; i < 40; ++i) t += kChars[rd() % 36];
  return t;
}

}  // namespace

struct ApiServer::Impl {
  ServerOptions options;
  std::string token;
  std::string dir;
  bool own_dir = false;
  std::unique_ptr<Router> router;
  std::unique_ptr<http::HttpsServer> server;
  bool started = false;
};

ApiServer::ApiServer(ServerOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
  impl_->token = impl_->options.token.empty() ? random_token() : impl_->options.token;
}

ApiServer::~ApiServer() {
  stop();
  if (impl_->own_dir && !impl_->dir.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(impl_->dir, ec);
  }
}

model::Status ApiServer::start() {
  Impl& m = *impl_;
  if (m.started) return model::Status::ok();
  namespace fs = std::filesystem;
  std::error_code ec;
  if (m.options.data_dir.empty()) {
    std::string tmpl = (fs::temp_directory_path(ec) / "kai-apiserver-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) return model::Status::error("cannot create a temporary directory");
    m.dir = tmpl;
    m.own_dir = true;
  } else {
    m.dir = m.options.data_dir;
    fs::create_directories(m.dir, ec);
    if (ec) return model::Status::error("cannot create " + m.dir + ": " + ec.message());
  }
  const std::string cert = m.dir + "/apiserver.crt";
  const std::string key = m.dir + "/apiserver.key";
  if (auto s = http::write_self_signed_certificate(cert, key); !s) return s;
  m.router = std::make_unique<Router>(m.options, m.token);
  if (!m.options.crd_dir.empty()) {
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(m.options.crd_dir, ec)) {
      const auto ext = e.path().extension();
      if (ext == ".yaml" || ext == ".yml") files.push_back(e.path());
    }
    if (ec) return model::Status::error("cannot read " + m.options.crd_dir + ": " + ec.message());
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
      std::ifstream in(f);
      std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      auto docs = model::yaml_documents_to_json(text);
      if (!docs.is_ok()) return model::Status::error(f.string() + ": " + docs.message());
      for (const auto& d : docs.value()) {
        if (d.value("kind", "") != "CustomResourceDefinition") continue;
        try {
          m.router->store().create_crd(d);
        } catch (const ApiError& e) {
          return model::Status::error(f.string() + ": " + e.message);
        }
      }
    }
  }

  http::ServerOptions so;
  so.https_port = m.options.https_port;
  so.cert_file = cert;
  so.key_file = key;
  so.http = m.options.http;
  so.http_port = m.options.http_port;
  so.max_body_bytes = m.options.max_body_bytes;
  http::Handlers handlers;
  Router* router = m.router.get();
  handlers.handle = [router](const http::HttpRequest& req) { return router->handle(req); };
  handlers.delay_for = [router](const http::HttpRequest& req) { return router->delay_for(req); };
  handlers.end_stream = [router](uint64_t id) { router->unwatch(id); };
  handlers.too_large = [](size_t limit) {
    HttpResponse r;
    r.status = 413;
    r.body = ApiError(413, "RequestEntityTooLarge", "Request entity too large: limit is " + std::to_string(limit))
                 .status()
                 .dump();
    return r;
  };
  m.server = std::make_unique<http::HttpsServer>(so, std::move(handlers));
  if (auto s = m.server->start(); !s) return s;
  m.router->set_address("127.0.0.1:" + std::to_string(m.server->https_port()));

  // The kubeconfig carries the token, so it is private to the user.
  const std::string kubeconfig = kubeconfig_path();
  {
    std::ofstream out(kubeconfig);
    out << "apiVersion: v1\nkind: Config\nclusters:\n- name: kai\n  cluster:\n    server: " << https_url()
        << "\n    certificate-authority: " << fs::absolute(cert).string()
        << "\ncontexts:\n- name: kai\n  context:\n    cluster: kai\n    user: kai\n    namespace: default\n"
        << "current-context: kai\nusers:\n- name: kai\n  user:\n    token: " << m.token << "\n";
    if (!out) return model::Status::error("cannot write " + kubeconfig);
  }
  fs::permissions(kubeconfig, fs::perms::owner_read | fs::perms::owner_write, ec);

  m.router->store().start();
  m.started = true;
  return model::Status::ok();
}

void ApiServer::stop() {
  Impl& m = *impl_;
  if (!m.started) return;
  m.started = false;
  m.router->store().stop();
  m.server->stop();
}

std::string ApiServer::https_url() const {
  return "https://127.0.0.1:" + std::to_string(https_port());
}
std::string ApiServer::http_url() const {
  return http_port() == 0 ? "" : "http://127.0.0.1:" + std::to_string(http_port());
}
uint16_t ApiServer::https_port() const {
  return impl_->server ? impl_->server->https_port() : 0;
}
uint16_t ApiServer::http_port() const {
  return impl_->server ? impl_->server->http_port() : 0;
}
std::string ApiServer::kubeconfig_path() const {
  return impl_->dir + "/kubeconfig";
}
std::string ApiServer::ca_path() const {
  return impl_->dir + "/apiserver.crt";
}
const std::string& ApiServer::token() const {
  return impl_->token;
}
void ApiServer::set_faults(const Faults& faults) {
  impl_->router->set_faults(faults);
}
void ApiServer::drop_watches() {
  impl_->router->store().drop_watches();
}
void ApiServer::set_cost_model(const CostModel& cost) {
  impl_->router->set_cost_model(cost);
}
void ApiServer::set_kubelet(bool on) {
  impl_->router->store().set_kubelet(on);
}
void ApiServer::set_kubelet_reserves_gpus(bool on) {
  impl_->router->store().set_reserve_gpus(on);
}
void ApiServer::compact_history() {
  impl_->router->store().compact_history();
}
std::map<std::string, uint64_t> ApiServer::request_counts() const {
  return impl_->router->counts();
}
std::vector<RequestAttributes> ApiServer::requests_seen() const { return impl_->router->requests_seen(); }

void ApiServer::reset_request_counts() {
  impl_->router->reset_counts();
}
uint64_t ApiServer::resource_version() const {
  return impl_->router->store().resource_version();
}
size_t ApiServer::watch_count() const {
  return impl_->router->store().watch_count();
}
size_t ApiServer::connection_count() const {
  return impl_->server ? impl_->server->connections() : 0;
}
size_t ApiServer::object_count() const {
  return impl_->router->store().object_count();
}

namespace {

std::shared_ptr<const ResourceInfo> resource_of(const Store& store, const std::string& api_version,
                                                const std::string& kind) {
  const size_t slash = api_version.find('/');
  const std::string group = slash == std::string::npos ? "" : api_version.substr(0, slash);
  const std::string version = slash == std::string::npos ? api_version : api_version.substr(slash + 1);
  for (const auto& r : store.resources()) {
    if (r->group == group && r->version == version && r->kind == kind) return r;
  }
  return nullptr;
}

}  // namespace

model::Result<std::string> ApiServer::create_object(const std::string& document) {
  auto j = model::yaml_to_json(document);
  if (!j.is_ok()) return model::Status::error(j.message());
  const Json& obj = j.value();
  const std::string api_version = obj.value("apiVersion", "");
  const std::string kind = obj.value("kind", "");
  auto r = resource_of(impl_->router->store(), api_version, kind);
  if (!r) return model::Status::error("no resource serves " + api_version + " " + kind);
  try {
    const std::string ns =
        r->namespaced && obj.contains("metadata") ? obj["metadata"].value("namespace", "default") : "";
    return impl_->router->store().create(*r, ns, obj).dump();
  } catch (const ApiError& e) {
    return model::Status::error(e.message);
  }
}

model::Result<std::string> ApiServer::list_objects(const std::string& api_version, const std::string& kind,
                                                   const std::string& ns) const {
  auto r = resource_of(impl_->router->store(), api_version, kind);
  if (!r) return model::Status::error("no resource serves " + api_version + " " + kind);
  try {
    return impl_->router->store().list_body(*r, r->namespaced ? ns : "", ListOptions{});
  } catch (const ApiError& e) {
    return model::Status::error(e.message);
  }
}

model::Result<std::string> ApiServer::get_object(const std::string& api_version, const std::string& kind,
                                                 const std::string& ns, const std::string& name) const {
  auto r = resource_of(impl_->router->store(), api_version, kind);
  if (!r) return model::Status::error("no resource serves " + api_version + " " + kind);
  try {
    return impl_->router->store().get(*r, r->namespaced ? ns : "", name).dump();
  } catch (const ApiError& e) {
    return model::Status::error(e.message);
  }
}

model::Status ApiServer::delete_object(const std::string& api_version, const std::string& kind, const std::string& ns,
                                       const std::string& name) {
  auto r = resource_of(impl_->router->store(), api_version, kind);
  if (!r) return model::Status::error("no resource serves " + api_version + " " + kind);
  try {
    impl_->router->store().remove(*r, r->namespaced ? ns : "", name, Json{{"gracePeriodSeconds", 0}});
    return model::Status::ok();
  } catch (const ApiError& e) {
    return model::Status::error(e.message);
  }
}

}  // namespace kai::apiserver
