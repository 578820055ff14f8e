#pragma once
// The Kubernetes calls the binder's GPU-sharing chain makes, as a narrow port: the daemon implements
// it with the Kubernetes client (k8s/client), tests with an in-memory cluster. Every call is one
// request (bounded by the client's timeouts; the chain runs on a binder worker, never on an actor's
// thread) and must be safe to call from several threads. Errors carry a model::Code.

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "k8s/model/objects.hpp"
#include "k8s/model/status.hpp"

namespace kai::gpu_sharing {

/// A reservation pod as the chain sees it.
struct ReservationPod {
  std::string name;
  std::string uid;
  std::string node;
  std::string group;     ///< Label runai-gpu-group.
  std::string gpu_uuid;  ///< Annotation run.ai/reserve_for_gpu_index; "" until the pod wrote it.
  bool terminating = false;
};

/// What a new reservation pod looks like (docs/kai-compatibility.md "Binder").
struct ReservationPodSpec {
  std::string name;
  std::string node;
  std::string group;
  std::string image;
  std::string runtime_class;  ///< "" = none.
  /// The fraction pod's tolerations (KAI v0.17 copies them), so that a taint that the pod tolerates
  /// does not evict, and orphan, its reservation. Added to the nvidia.com/gpu toleration.
  std::vector<model::Toleration> tolerations;
};

class SharingApi {
 public:
  virtual ~SharingApi() = default;

  /// Reservation pods in `kai-resource-reservation`: those of `group` (when given) or on `node`.
  virtual model::Result<std::vector<ReservationPod>> list_reservation_pods(const std::string& group,
                                                                           const std::string& node) = 0;
  /// Creates a reservation pod; returns its uid.
  virtual model::Result<std::string> create_reservation_pod(const ReservationPodSpec& spec) = 0;
  /// The GPU UUID reservation pod `name` reported, "" while it has not; an error with code kNotFound
  /// when the pod is gone. One read, never a wait: the binder waits on a timer (binder.hpp).
  virtual model::Result<std::string> reported_gpu_uuid(const std::string& name) = 0;
  /// Deletes a pod (grace period 0 for reservation pods) with a uid precondition.
  virtual model::Status delete_pod(const std::string& ns, const std::string& name, const std::string& uid) = 0;
  /// Creates configmap `name` in `ns` owned by the pod (`owner_name`, `owner_uid`), or merges `data`
  /// into the existing one.
  virtual model::Status upsert_config_map(const std::string& ns, const std::string& name, const std::string& owner_name,
                                          const std::string& owner_uid, const std::map<std::string, std::string>& data) = 0;
  /// Sets (value) or removes (nullopt) pod labels with one merge patch.
  virtual model::Status patch_pod_labels(const std::string& ns, const std::string& name,
                                         const std::map<std::string, std::optional<std::string>>& labels) = 0;
  /// A Warning event on the pod (reason, message).
  virtual void warn(const std::string& ns, const std::string& name, const std::string& reason,
                    const std::string& message) = 0;
};

}  // namespace kai::gpu_sharing
