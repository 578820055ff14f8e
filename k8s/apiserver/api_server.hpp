#pragma once
// kai-apiserver: an in-process Kubernetes API server for tests, the demo and kubectl (docs/build-and-ci.md "The test API server").
// HTTPS with a self-signed certificate made at start, plain HTTP, bearer-token authentication and a
// kubeconfig file for clients, all on loopback. Plain C++ interface: Beast and nlohmann stay inside
// the library (docs/build-and-ci.md "Translation units").

#include <boost/core/noncopyable.hpp>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "k8s/model/status.hpp"

namespace kai::apiserver {

/// Optional cost model, so that end-to-end figures do not flatter the client: every request takes
/// `service_time` of one of `max_in_flight` servers (an M/D/k queue). Requests wait for a server; the
/// response is written after the request has been served.
struct CostModel {
  /// Service time per request. Default: 0 (free).
  std::chrono::microseconds service_time{0};
  /// Requests served at once. Default: 0 (unlimited; service_time is then pure latency).
  int max_in_flight = 0;
};

/// Fault injection. Counters apply to the next N API requests (not /debug, discovery or health paths)
/// whose path contains `match`.
struct Faults {
  /// Only requests whose path contains this string. Default: "" (all).
  std::string match;
  /// Extra latency of every matching request. Default: 0.
  std::chrono::milliseconds delay{0};
  /// Answer the next N requests with 429 TooManyRequests and `Retry-After`. Default: 0.
  int too_many_requests = 0;
  /// Seconds in the Retry-After header of a 429. Default: 1.
  int retry_after_seconds = 1;
  /// Answer the next N requests with 500 InternalError. Default: 0.
  int internal_errors = 0;
  /// The next N watches start with a 410 Expired ERROR event, as when their resourceVersion is too
  /// old. Default: 0.
  int expire_watches = 0;
  /// The next N non-watch responses send their headers and half of their body, then close. Default: 0.
  int close_mid_body = 0;
  /// The next N non-watch requests are handled (a create stores its object), then their connection
  /// is closed without an answer, as when a server or a proxy dies mid-request. Default: 0.
  int close_without_answer = 0;
  /// The next N non-watch requests are answered as usual, then their connection is closed, as a
  /// server ends an idle kept-alive connection. Default: 0.
  int close_after_answer = 0;
};

/// One request as the API server's authorizer sees it: what an RBAC rule must allow. `name` is
/// empty for list, watch and create, as in Kubernetes' authorization attributes.
struct RequestAttributes {
  std::string verb;      ///< get, list, watch, create, update, patch, delete
  std::string group;     ///< "" = core
  std::string resource;  ///< "pods", "pods/binding", "podgroups/status"
  std::string ns;        ///< "" = cluster-scoped, or every namespace
  std::string name;
  auto operator<=>(const RequestAttributes&) const = default;
};

/// Settings of the server. Every field has a usable default.
struct ServerOptions {
  /// Where the certificate, key, CA and kubeconfig are written. Default: "" (a fresh directory
  /// under $TMPDIR, removed by the destructor).
  std::string data_dir;
  /// CustomResourceDefinition YAML files loaded at start (every *.yaml / *.yml). Default: "" (none).
  std::string crd_dir;
  /// HTTPS port on 127.0.0.1. Default: 0 (ephemeral).
  uint16_t https_port = 0;
  /// Also serve plain HTTP. Default: true.
  bool http = true;
  /// Plain HTTP port on 127.0.0.1. Default: 0 (ephemeral).
  uint16_t http_port = 0;
  /// Bearer token clients must send. Default: "" (a random token).
  std::string token;
  /// Kubelet stand-in: bound pods become Running, graceful deletions are confirmed. Default: false.
  bool kubelet = false;
  /// Delay of each kubelet stand-in action. Default: 50 ms.
  std::chrono::milliseconds kubelet_delay{50};
  /// Kubelet stand-in: reservation pods (label app=kai-resource-reservation) get a GPU UUID of their
  /// node in the annotation `run.ai/reserve_for_gpu_index` when they start. Default: true.
  bool kubelet_reserves_gpus = true;
  /// Watch events kept for resuming watches; older resourceVersions get 410. Default: 10000.
  size_t history_limit = 10000;
  /// Period of BOOKMARK events to watches that allow them. Default: 1 s.
  std::chrono::milliseconds bookmark_interval{1000};
  /// Largest request body; larger ones get 413 (the real server's limit). Default: 3 MiB.
  size_t max_body_bytes = 3 * 1024 * 1024;
  /// Cost model. Default: free.
  CostModel cost;
};

/// The test API server. Construct, start(), use, and destroy (or stop()).
class ApiServer : private boost::noncopyable {
 public:
  explicit ApiServer(ServerOptions options = {});
  ~ApiServer();

  /// Writes the certificate and kubeconfig, loads the CRDs, binds the ports and starts serving.
  model::Status start();
  /// Stops serving and closes every connection. Idempotent.
  void stop();

  /// "https://127.0.0.1:<port>".
  std::string https_url() const;
  /// "http://127.0.0.1:<port>", or "" when plain HTTP is off.
  std::string http_url() const;
  uint16_t https_port() const;
  uint16_t http_port() const;
  /// The kubeconfig written for clients (server URL, certificate-authority, token).
  std::string kubeconfig_path() const;
  /// The PEM certificate clients verify the server with.
  std::string ca_path() const;
  /// The bearer token (never logged).
  const std::string& token() const;

  /// Replaces the fault-injection settings (counters start again).
  void set_faults(const Faults& faults);
  /// Closes every open watch stream abruptly (no final chunk), as a server restart would.
  void drop_watches();
  /// Replaces the cost model.
  void set_cost_model(const CostModel& cost);
  /// Turns the kubelet stand-in on or off.
  void set_kubelet(bool on);
  /// Turns the reservation pods' GPU annotation on or off (off: reservations time out). Turned on,
  /// the running reservation pods that have not reported report after the kubelet delay.
  void set_kubelet_reserves_gpus(bool on);
  /// Forgets the watch history: every watch from an earlier resourceVersion gets 410.
  void compact_history();

  /// Requests served, keyed "verb resource" ("create pods", "create pods/binding", "watch nodes",
  /// "list queues.scheduling.run.ai"); also "total", and "delayed": requests a fault's delay holds,
  /// counted when they arrive (the others when they are served).
  std::map<std::string, uint64_t> request_counts() const;
  /// Sets every request counter (and the requests_seen() set) to zero.
  void reset_request_counts();
  /// Every distinct request served since the start or the last reset, for RBAC checks.
  std::vector<RequestAttributes> requests_seen() const;
  /// The current global resourceVersion.
  uint64_t resource_version() const;
  /// Open watch streams.
  size_t watch_count() const;
  /// Open client connections (HTTPS and HTTP).
  size_t connection_count() const;
  /// Stored objects of all kinds.
  size_t object_count() const;

  /// Creates an object without HTTP (a JSON or YAML document; kind/apiVersion pick the resource).
  /// Returns the stored object as JSON, or the Status message of the failure.
  model::Result<std::string> create_object(const std::string& document);
  /// Lists objects without HTTP: a List (JSON text) of `kind` in `api_version` ("v1", "apps/v1",
  /// "scheduling.run.ai/v2"), in namespace `ns` ("" = all namespaces / cluster-scoped).
  model::Result<std::string> list_objects(const std::string& api_version, const std::string& kind,
                                          const std::string& ns = "") const;
  /// Reads one object without HTTP (JSON text); an error when it does not exist.
  model::Result<std::string> get_object(const std::string& api_version, const std::string& kind,
                                        const std::string& ns, const std::string& name) const;
  /// Deletes an object without HTTP (grace period 0: at once, even when bound).
  model::Status delete_object(const std::string& api_version, const std::string& kind, const std::string& ns,
                              const std::string& name);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kai::apiserver
