#pragma once
// The binder's GPU-sharing chain (kai-behaviour.md §6, contracts.md §6): before a fraction or
// gpu-memory pod is bound, every GPU group it was placed on needs a reservation pod that holds the
// physical device and reports its UUID; the pod's two configmaps get NVIDIA_VISIBLE_DEVICES and
// GPU_PORTION; the pod is labelled with its group(s). Then the binder binds. On failure the chain
// rolls back what it did to the pod; orphaned reservation pods are removed by resync_node().

#include <array>
#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "actors/gpu_sharing/sharing_api.hpp"

namespace kai::gpu_sharing {

inline constexpr const char* kReservationNamespace = "kai-resource-reservation";
inline constexpr const char* kReservationAppLabel = "kai-resource-reservation";
inline constexpr const char* kGpuGroupLabel = "runai-gpu-group";
inline constexpr const char* kGpuIndexAnnotation = "run.ai/reserve_for_gpu_index";

struct ChainOptions {
  /// How long a new reservation pod may take to report its GPU (binder flag
  /// --resource-reservation-allocation-timeout). Default: 40 s.
  std::chrono::milliseconds reservation_timeout{40000};
  /// Image of the reservation pods. Default: KAI's resource-reservation image.
  std::string image = "ghcr.io/nvidia/kai-scheduler/resource-reservation:latest";
  /// runtimeClassName of reservation pods (KAI's resourceReservation.runtimeClassName). Default: "".
  std::string runtime_class;
};

/// One shared-GPU bind, as the scheduler decided it.
struct SharedBind {
  std::string ns;
  std::string name;
  std::string uid;
  std::string node;
  std::vector<std::string> groups;  ///< One per device (gpu-fraction-num-devices).
  double portion = 0;               ///< Portion of each device, (0, 1].
  /// The pod's `runai/shared-gpu-configmap` annotation; "" when admission did not mutate the pod.
  std::string config_map_prefix;
  /// The configmap suffix of the GPU container: "0", "1", ... or "i0", ... for init containers.
  std::string container_suffix = "0";
  /// The pod's tolerations, for its reservation pods.
  std::vector<model::Toleration> tolerations;
};

/// The outcome the binder logs.
struct ChainResult {
  model::Status status = model::Status::ok();
  std::vector<std::string> gpu_uuids;       ///< Per group, in `groups` order.
  std::vector<std::string> created_reservations;  ///< Reservation pods this call created.
};

class SharingChain {
 public:
  /// `random5` returns 5 lower-case alphanumerics for reservation pod names.
  SharingChain(SharingApi& api, ChainOptions options, std::function<std::string()> random5);

  /// Runs the chain for one pod; on failure it has already rolled back the pod's labels and deleted
  /// the reservation pods it created that no other pod uses.
  ChainResult prepare(const SharedBind& bind);

  /// Removes what prepare() did to a pod whose bind then failed (its group labels).
  void rollback(const SharedBind& bind);

  /// Deletes reservation pods on `node` whose group is not in `groups_in_use` (groups with a pending
  /// or running fraction pod). Called after binds and after a restart (KAI's SyncForNode).
  /// Returns the names of the deleted pods.
  std::vector<std::string> resync_node(const std::string& node, const std::vector<std::string>& groups_in_use);

  /// The name of a new reservation pod on `node`: `gpu-reservation-<node>-<5 random>`, cut to a valid
  /// pod name.
  std::string reservation_name(const std::string& node);

  /// "0.7", "0.25", "1": the shortest decimal that reads back as `portion`.
  static std::string format_portion(double portion);

 private:
  /// Finds or creates the reservation pod of `group` on `node` and returns its GPU UUID.
  model::Result<std::string> reserve(const std::string& group, const SharedBind& bind, bool* created,
                                     std::string* created_name);
  /// Serialises work on one group (two pods placed on the same new group must share one reservation
  /// pod). Striped: a bounded set of mutexes, a group always maps to the same one.
  std::mutex& group_mutex(const std::string& group);

  SharingApi& api_;
  ChainOptions options_;
  std::function<std::string()> random5_;
  std::array<std::mutex, 64> group_mutexes_;
};

}  // namespace kai::gpu_sharing
