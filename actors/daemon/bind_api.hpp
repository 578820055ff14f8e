#pragma once
// The API server calls the binder (binder.hpp) makes itself, as a narrow port: the daemon implements
// it with the Kubernetes client (kube_writer_apis.hpp), tests with an in-memory fake. The GPU-sharing
// chain's calls go through its own port (actors/gpu_sharing/sharing_api.hpp). Every call is one
// request, made from a binder worker, so an implementation must be safe to call from several
// threads. Failures carry a model::Code: the binder decides an outcome by the code, and only copies
// the message into the outcome's reason for people to read.

#include <cstdint>
#include <string>

#include "k8s/model/status.hpp"

namespace kai::daemon {

/// grace_seconds of delete_pod: the pod's own terminationGracePeriodSeconds.
inline constexpr int64_t kPodsOwnGracePeriod = -1;

class BindApi {
 public:
  virtual ~BindApi() = default;

  /// Binds pod `ns/name` to `node` (pods/binding); `uid` guards against binding a recreated pod.
  /// kConflict when the pod is bound already or its uid differs.
  virtual model::Status bind_pod(const std::string& ns, const std::string& name, const std::string& uid,
                                 const std::string& node) = 0;
  /// The node the pod with `uid` is bound to, "" when it is not bound; an error when it is gone or a
  /// different pod has its name.
  virtual model::Result<std::string> pod_node(const std::string& ns, const std::string& name,
                                              const std::string& uid) = 0;
  /// Deletes (evicts) the pod with a uid precondition, after `grace_seconds` (kPodsOwnGracePeriod:
  /// the pod's own). kNotFound when it is gone, kConflict when a different pod has its name.
  virtual model::Status delete_pod(const std::string& ns, const std::string& name, const std::string& uid,
                                   int64_t grace_seconds) = 0;
};

}  // namespace kai::daemon
