#pragma once
// The daemon's HTTP(S) endpoints on one port (KAI's `--listen-address` :8080; docs/kai-compatibility.md
// "Snapshot endpoint", "Admission"; docs/security.md "Endpoints"): /metrics, /healthz, /readyz, /get-snapshot and the admission
// webhooks. Served by kai_http; the answers come from callbacks that must return quickly (they read
// state the actors published, they never wait for a cycle).

#include <boost/core/noncopyable.hpp>
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "actors/endpoints/metrics.hpp"
#include "k8s/admission/admission.hpp"
#include "k8s/model/status.hpp"

namespace kai::endpoints {

/// The admission webhooks, at the paths deploy/ registers them.
struct WebhookRoute {
  const char* path;
  admission::Hook hook;
};
inline constexpr std::array<WebhookRoute, 4> kWebhookRoutes = {{
    {"/mutate-pods", admission::Hook::kPodMutate},
    {"/validate-pods", admission::Hook::kPodValidate},
    {"/validate-queues", admission::Hook::kQueueValidate},
    {"/validate-podgroups", admission::Hook::kPodGroupValidate},
}};

struct EndpointsOptions {
  /// Default: "0.0.0.0" (all interfaces, as in a pod).
  std::string bind_address = "0.0.0.0";
  /// Default: 8080 (KAI's metrics port). 0 = ephemeral (tests).
  uint16_t port = 8080;
  /// PEM certificate and key: serve HTTPS (required by admission webhooks). Both empty: plain HTTP.
  std::string cert_file;
  std::string key_file;
  admission::AdmissionOptions admission;
  /// Serve the admission webhook paths. Only the TLS webhook port does: the API server calls them over
  /// HTTPS, and a plain-HTTP port must not mutate or admit pods for anyone who reaches it. Default: false.
  bool webhooks = false;
  /// Answer /get-snapshot (every pod of the cluster, unauthenticated) to any peer, not only to loopback
  /// peers (this host, `kubectl port-forward`). Default: false (--expose-snapshot).
  bool expose_snapshot = false;
};

/// Readiness as /readyz reports it.
struct Readiness {
  bool ready = false;
  std::string detail;  ///< e.g. "synced; leader" or "waiting for the initial list of pods"
};

struct EndpointsCallbacks {
  std::function<Readiness()> readiness;
  /// The cluster state as a Kubernetes List (the input `kai-sim --snapshot` reads), or an error.
  std::function<model::Result<std::string>()> snapshot;
};

class DaemonEndpoints : private boost::noncopyable {
 public:
  DaemonEndpoints(EndpointsOptions options, EndpointsCallbacks callbacks, SchedulerMetrics& metrics);
  ~DaemonEndpoints();

  model::Status start();
  void stop();
  /// The bound port (useful with port 0).
  uint16_t port() const;
  bool tls() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kai::endpoints
