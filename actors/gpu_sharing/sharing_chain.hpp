#pragma once
// The binder's GPU-sharing chain (docs/gpu-sharing.md, docs/kai-compatibility.md "Binder"): before a fraction or
// gpu-memory pod is bound, every GPU group it was placed on needs a reservation pod that holds the
// physical device and reports its UUID; the pod's two configmaps get NVIDIA_VISIBLE_DEVICES and
// GPU_PORTION; the pod is labelled with its group(s). Then the binder binds. The chain runs in steps
// (advance, then finish) so that waiting for a reservation pod is the binder's timer, not a blocked
// worker. On failure the chain rolls back what it did to the pod; reservation pods nothing uses are
// deleted by the cycle's clean-up (actors/scheduler/core/cycle.cpp), or adopted by a new fraction pod.

#include <array>
#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "actors/gpu_sharing/sharing_api.hpp"
#include "k8s/model/well_known_names.hpp"

namespace kai::gpu_sharing {

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

/// Where one shared bind stands in the chain. The binder keeps it between steps while the bind
/// waits for reservation pods on a timer: no call of the chain waits.
struct ChainState {
  struct Group {
    std::string reservation;      ///< The reservation pod used, "" until found or created.
    std::string reservation_uid;
    bool created = false;         ///< This bind created it.
    std::string gpu_uuid;         ///< What it reported, "" until then.
  };
  std::vector<Group> groups;  ///< In SharedBind::groups order.
  std::vector<std::string> created_reservations;  ///< Names of the reservation pods this bind created.
  /// Every group's reservation pod reported its GPU.
  bool ready() const;
  /// The reported UUIDs, in group order.
  std::vector<std::string> gpu_uuids() const;
};

/// What a step of the chain came to.
enum class ChainStep : uint8_t {
  kReady,    ///< Every group has its GPU: finish() may run.
  kWaiting,  ///< A reservation pod has not reported yet: step again later.
  kFailed,   ///< The bind cannot go on; the chain rolled back what it did.
};

struct StepResult {
  ChainStep step = ChainStep::kFailed;
  model::Status status = model::Status::ok();  ///< Why, when kFailed (its code says what kind).
};

class SharingChain {
 public:
  /// `random5` returns 5 lower-case alphanumerics for reservation pod names.
  SharingChain(SharingApi& api, ChainOptions options, std::function<std::string()> random5);

  /// One step for one pod: finds or creates the reservation pod of each group still without one, and
  /// reads the GPU of those that have not reported. Never waits.
  StepResult advance(const SharedBind& bind, ChainState& state);

  /// The pod waited `reservation_timeout` and a reservation pod never reported: the unreported
  /// reservation pods it waited for go (their devices are free again). Returns the failure, code
  /// kTimedOut.
  model::Status give_up(const SharedBind& bind, ChainState& state);

  /// Once ready: the pod's configmaps (NVIDIA_VISIBLE_DEVICES, GPU_PORTION) and group labels. On
  /// failure it rolls the labels back.
  model::Status finish(const SharedBind& bind, const ChainState& state);

  /// Removes what finish() did to a pod whose bind then failed (its group labels). Never call it for
  /// a pod that is bound: its labels are what its GPU is.
  void rollback(const SharedBind& bind);

  const ChainOptions& options() const { return options_; }

  /// The name of a new reservation pod on `node`: `gpu-reservation-<node>-<5 random>`, cut to a valid
  /// pod name.
  std::string reservation_name(const std::string& node);

  /// "0.7", "0.25", "1": the shortest decimal that reads back as `portion`.
  static std::string format_portion(double portion);

 private:
  /// Finds the reservation pod of `group` on the bind's node or creates one.
  model::Status find_or_create(const std::string& group, const SharedBind& bind, ChainState& state,
                               ChainState::Group& g);
  /// Serialises finding or creating a group's reservation pod (two pods placed on the same new group
  /// must share one reservation pod). Striped: a bounded set of mutexes, a group always maps to the
  /// same one.
  std::mutex& group_mutex(const std::string& group);

  SharingApi& api_;
  ChainOptions options_;
  std::function<std::string()> random5_;
  std::array<std::mutex, 64> group_mutexes_;
};

}  // namespace kai::gpu_sharing
