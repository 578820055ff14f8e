#pragma once
// Kubernetes API calls over a small pool of keep-alive connections, with a client-side rate limit
// (QPS / burst token bucket) and retries (exponential backoff with jitter on 429 honouring
// Retry-After, on 500 / 503 and lost connections; blind retries only for idempotent calls). The typed
// write calls are the ones the scheduler makes. Thread-safe. Tokens never reach a log line.

#include <atomic>
#include <boost/core/noncopyable.hpp>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "k8s/client/cluster_config.hpp"
#include "k8s/model/status.hpp"

namespace kai::k8s {

/// One answer of the API server. `code` 0: the request failed on the wire (`message` says why).
struct ApiResult {
  int code = 0;
  std::string reason;   ///< Status.reason (Conflict, NotFound, AlreadyExists, ...)
  std::string message;  ///< Status.message, or the transport error
  std::string body;
  bool ok() const { return code >= 200 && code < 300; }
  bool conflict() const { return code == 409; }
  bool not_found() const { return code == 404; }
  /// "409 Conflict: <message>" for logs and outcomes.
  std::string describe() const;
  /// The failure's class by HTTP code (model::Code::kOk for 2xx).
  model::Code error_code() const;
  /// ok(), or an error with error_code() and `context: describe()`.
  model::Status status(const std::string& context = "") const;
};

struct ClientOptions {
  /// Sustained requests per second. Default: 500 (KAI's 50 would cap binding at 50 pods/s).
  double qps = 500;
  /// Requests allowed at once above the sustained rate. Default: 1000.
  int burst = 1000;
  /// Connections kept open. Default: 4.
  int max_connections = 4;
  /// Retries of a retryable failure. Default: 4.
  int max_retries = 4;
  /// First backoff; doubles per retry (with jitter), capped at 5 s. Default: 100 ms.
  std::chrono::milliseconds initial_backoff{100};
};

/// A label or annotation value to set, or nullopt to remove the key.
using OptionalValues = std::map<std::string, std::optional<std::string>>;

class KubeClient : private boost::noncopyable {
 public:
  KubeClient(ClusterConfig config, ClientOptions options = {});
  ~KubeClient();

  const ClusterConfig& config() const { return config_; }

  /// Any call. `idempotent` allows blind retries after a lost connection or a 500.
  ApiResult request(const std::string& method, const std::string& path, const std::string& body = "",
                    const std::string& content_type = "application/json", bool idempotent = false);
  ApiResult get(const std::string& path) { return request("GET", path, "", "application/json", true); }

  // ---- the scheduler's writes
  /// POST pods/<name>/binding (the uid guards against binding a recreated pod).
  ApiResult bind_pod(const std::string& ns, const std::string& name, const std::string& uid, const std::string& node);
  /// The node a pod is bound to ("" when it is not), if the pod with `uid` exists; an error otherwise
  /// (a different uid is "not found").
  model::Result<std::string> pod_node(const std::string& ns, const std::string& name, const std::string& uid);
  /// DELETE with a uid precondition and a grace period (-1: the pod's own).
  ApiResult delete_pod(const std::string& ns, const std::string& name, const std::string& uid, int64_t grace_seconds = -1);
  /// JSON merge patch of metadata.labels / metadata.annotations.
  ApiResult patch_pod_metadata(const std::string& ns, const std::string& name, const OptionalValues& labels,
                               const OptionalValues& annotations = {});
  /// Sets one pod condition (strategic merge on status.conditions, keyed by type).
  ApiResult set_pod_condition(const std::string& ns, const std::string& name, const std::string& type,
                              const std::string& status, const std::string& reason, const std::string& message);
  ApiResult create_pod(const std::string& ns, const std::string& pod_json);
  /// An events.k8s.io/v1 Event about an object (eventTime set, as the API server requires).
  ApiResult create_event(const std::string& ns, const std::string& kind, const std::string& api_version,
                         const std::string& name, const std::string& uid, const std::string& type,
                         const std::string& reason, const std::string& note, const std::string& action);
  ApiResult create_object(const std::string& collection_path, const std::string& json);
  /// JSON merge patch of any object (or of its status with subresource "status").
  ApiResult merge_patch(const std::string& object_path, const std::string& patch_json);

  /// Requests made, by "<verb> <resource>", for metrics and the API budget.
  std::map<std::string, uint64_t> request_counts() const;
  /// When the API server last answered a request as a working server does (any status below 500
  /// but 429: a 404 or a 409 is an answer too); the epoch of steady_clock when it never did.
  std::chrono::steady_clock::time_point last_answer() const;

 private:
  struct Pool;
  void throttle();
  ApiResult once(const std::string& method, const std::string& path, const std::string& body,
                 const std::string& content_type);

  ClusterConfig config_;
  ClientOptions options_;
  std::unique_ptr<Pool> pool_;
  std::mutex bucket_mu_;
  double tokens_;
  std::chrono::steady_clock::time_point refilled_;
  mutable std::mutex counts_mu_;
  std::map<std::string, uint64_t> counts_;
  std::atomic<int64_t> last_answer_ns_{0};  ///< steady_clock, since its epoch
};

/// "/api/v1/namespaces/ns/pods" style paths.
std::string core_path(const std::string& ns, const std::string& resource, const std::string& name = "");
std::string group_path(const std::string& group_version, const std::string& ns, const std::string& resource,
                       const std::string& name = "");

}  // namespace kai::k8s
