#include "actors/endpoints/endpoints.hpp"

#include "k8s/http/https_server.hpp"

namespace kai::endpoints {

namespace {

http::HttpResponse text(int status, std::string body, std::string content_type = "text/plain; charset=utf-8") {
  http::HttpResponse r;
  r.status = status;
  r.content_type = std::move(content_type);
  r.body = std::move(body);
  return r;
}

std::string path_of(const std::string& target) { return target.substr(0, target.find('?')); }

}  // namespace

struct DaemonEndpoints::Impl {
  EndpointsOptions options;
  EndpointsCallbacks callbacks;
  SchedulerMetrics& metrics;
  admission::RandomSuffix random = admission::system_random_suffix();
  std::unique_ptr<http::HttpsServer> server;

  Impl(EndpointsOptions o, EndpointsCallbacks c, SchedulerMetrics& m)
      : options(std::move(o)), callbacks(std::move(c)), metrics(m) {}

  http::HttpResponse webhook(admission::Hook hook, const http::HttpRequest& req) {
    if (req.method != "POST") return text(405, "admission webhooks take POST\n");
    bool bad = false;
    std::string body = admission::review(hook, req.body, options.admission, random, &bad);
    http::HttpResponse r = text(bad ? 400 : 200, std::move(body), "application/json");
    return r;
  }

  http::HttpResponse handle(const http::HttpRequest& req) {
    const std::string path = path_of(req.target);
    if (options.webhooks) {
      for (const WebhookRoute& route : kWebhookRoutes) {
        if (path == route.path) return webhook(route.hook, req);
      }
    }
    if (req.method != "GET" && req.method != "HEAD") return text(405, "only GET is served here\n");
    if (path == "/metrics") return text(200, metrics.text(), "text/plain; version=0.0.4; charset=utf-8");
    if (path == "/healthz" || path == "/livez") return text(200, "ok\n");
    if (path == "/readyz") {
      Readiness r = callbacks.readiness ? callbacks.readiness() : Readiness{true, "no readiness check"};
      return text(r.ready ? 200 : 503, (r.ready ? "ok: " : "not ready: ") + r.detail + "\n");
    }
    if (path == "/get-snapshot") {
      if (!callbacks.snapshot) return text(404, "snapshots are not served by this process\n");
      if (!req.from_loopback && !options.expose_snapshot) {
        return text(403,
                    "/get-snapshot answers only on localhost (kubectl port-forward); start with "
                    "--expose-snapshot to serve it to other hosts\n");
      }
      auto s = callbacks.snapshot();
      if (!s.is_ok()) return text(503, "snapshot unavailable: " + s.message() + "\n");
      http::HttpResponse r = text(200, std::move(s).value(), "application/json");
      r.headers.emplace_back("Content-Disposition", "attachment; filename=\"snapshot.json\"");
      return r;
    }
    return text(404, "not found: " + path + "\n");
  }
};

DaemonEndpoints::DaemonEndpoints(EndpointsOptions options, EndpointsCallbacks callbacks, SchedulerMetrics& metrics)
    : impl_(std::make_unique<Impl>(std::move(options), std::move(callbacks), metrics)) {}

DaemonEndpoints::~DaemonEndpoints() { stop(); }

model::Status DaemonEndpoints::start() {
  const auto& o = impl_->options;
  if (o.cert_file.empty() != o.key_file.empty()) {
    return model::Status::error("endpoints: give both a certificate and a key for HTTPS, or neither");
  }
  http::ServerOptions so;
  so.bind_address = o.bind_address;
  so.https = !o.cert_file.empty();
  so.https_port = o.port;
  so.cert_file = o.cert_file;
  so.key_file = o.key_file;
  so.http = !so.https;
  so.http_port = o.port;
  http::Handlers handlers;
  Impl* impl = impl_.get();
  handlers.handle = [impl](const http::HttpRequest& req) { return impl->handle(req); };
  impl_->server = std::make_unique<http::HttpsServer>(so, std::move(handlers));
  return impl_->server->start();
}

void DaemonEndpoints::stop() {
  if (impl_->server) impl_->server->stop();
}

uint16_t DaemonEndpoints::port() const {
  if (!impl_->server) return 0;
  return tls() ? impl_->server->https_port() : impl_->server->http_port();
}

bool DaemonEndpoints::tls() const { return !impl_->options.cert_file.empty(); }

}  // namespace kai::endpoints
