#pragma once
// The session's dense view of the cluster: nodes with their GPUs, tasks (pods), jobs (pod groups) and
// queues, indexed by integer ids. Built once per session by session_builder.cpp from model objects.

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "actors/scheduler/core/gpu_request.hpp"
#include "actors/scheduler/core/pod_status.hpp"
#include "actors/scheduler/core/resources.hpp"
#include "k8s/model/objects.hpp"

namespace kai::core {

inline constexpr int32_t kNoNode = -1;
inline constexpr int32_t kNoQueue = -1;

enum class MigStrategy : uint8_t { kNone, kSingle, kMixed };

/// A GPU shared by fractional pods ("GPU group"), with its portions in milli-units of one device.
struct SharedGpu {
  std::string group;
  int64_t used = 0;          ///< Portions of Allocated/Binding/Bound/Running/Releasing tasks.
  int64_t releasing = 0;     ///< Portions of Releasing tasks (a subset of used).
  int64_t pipelined = 0;     ///< Portions of Pipelined tasks (placed on releasing capacity).
  int32_t active_tasks = 0;  ///< Tasks counted in used but not releasing.
  int32_t releasing_tasks = 0;
  int32_t pipelined_tasks = 0;
  /// Reservation pods of the group (docs/gpu-sharing.md): live ones hold the device, terminating ones
  /// release it. They matter only to a group without active or releasing tasks (an orphaned
  /// reservation); otherwise the tasks say what becomes of the device, and the clean-up follows them.
  int32_t reservations = 0;
  int32_t releasing_reservations = 0;

  bool empty() const {
    return active_tasks + releasing_tasks + pipelined_tasks + reservations + releasing_reservations == 0;
  }
  /// Only pipelined tasks: the device itself is still held by releasing whole-GPU pods.
  bool pipelined_only() const {
    return active_tasks == 0 && releasing_tasks == 0 && reservations == 0 && pipelined_tasks > 0;
  }
  /// Whether a new shared task may join the group: something holds its device, and it has room.
  bool joinable(int64_t need) const {
    return !empty() && free_with_releasing() >= need && (active_tasks > 0 || pipelined_tasks > 0 || reservations > 0);
  }
  /// Portion free now.
  int64_t idle_portion() const {
    if (pipelined_only()) return 0;
    return 1000 - used - std::max<int64_t>(0, pipelined - releasing);
  }
  /// Portion free once releasing tasks have left.
  int64_t free_with_releasing() const { return 1000 - used - pipelined + releasing; }
};

struct NodeInfo {
  const model::Node* object = nullptr;
  std::string name;
  Resources allocatable;
  Resources idle;       ///< allocatable - used, with shared GPUs taking whole devices.
  Resources releasing;  ///< Held by releasing pods, minus what pipelined pods took.
  Resources used;
  int32_t gpu_count = 0;           ///< Devices (label nvidia.com/gpu.count, else allocatable).
  int64_t gpu_memory_mib = 100;    ///< Per device (label nvidia.com/gpu.memory, floored to 100s).
  bool gpu_memory_synced = false;  ///< The label was present.
  MigStrategy mig = MigStrategy::kNone;
  bool mig_enabled = false;
  bool ready = false;
  bool unschedulable = false;
  std::vector<SharedGpu> shared_gpus;

  bool has_gpus() const { return gpu_count > 0; }
  SharedGpu* find_group(const std::string& group);
  const SharedGpu* find_group(const std::string& group) const;
  /// Idle plus releasing GPUs incl. free portions of shared devices, in milli-devices (placement score).
  int64_t non_allocated_gpu_milli() const;
};

struct TaskInfo {
  const model::Pod* pod = nullptr;
  std::string key;  ///< "namespace/name"
  uint32_t job = 0;
  uint16_t pod_set = 0;
  PodStatus status = PodStatus::kPending;
  int32_t node = kNoNode;
  Resources req;  ///< As kube-scheduler counts it (sidecars included) + overhead, pods = 1; shared GPUs excluded.
  GpuRequest gpu;
  int64_t placed_portion = 0;  ///< Portion per device on its node (shared GPU tasks).
  std::vector<std::string> gpu_groups;
  int32_t constraints = 0;  ///< Interned placement-constraint signature (node filters).
  bool legacy_mig = false;
  // Task order keys (docs/kai-compatibility.md "Job and queue order"); beside the flag above: no padding.
  bool leader = false;  ///< Kubeflow master/launcher or Ray head.
  /// What its MIG instances count as GPUs in queue quota and fair share: N per instance of each
  /// nvidia.com/mig-<N>g.<M>gb it requests (KAI's GetGpusQuota).
  double mig_gpus = 0;
  std::optional<int32_t> task_priority;
  int64_t creation = 0;
  std::string uid;
  std::string nominated_node;
  /// A stand-in used by the eviction solver to hold the place a moved victim would take elsewhere; it
  /// belongs to no job's task list and is never reported.
  bool ghost = false;
  int32_t ghost_of = -1;  ///< The task a ghost stands in for.
  bool is_cpu_only() const { return gpu.kind == GpuRequestKind::kNone; }
  bool operator==(const TaskInfo&) const = default;
};

struct PodSetInfo {
  std::string name;
  int32_t min_available = 1;
  std::vector<uint32_t> tasks;
  bool operator==(const PodSetInfo&) const = default;
};

/// A scheduling rejection with KAI's reason code and a readable message.
struct FitReason {
  std::string
      reason;  ///< PodSchedulingErrors | OverLimit | NonPreemptibleOverQuota | QueueDoesNotExist | ...
  std::string message;
  bool operator==(const FitReason&) const = default;
};

struct JobTopology;  // topology_scopes.hpp

/// A job's tasks: consecutive ids from `first()` (derive_job numbers each job's pods so). Held as two
/// numbers in the job, not a vector: a relayout that moves 150,000 jobs rewrites them in place, and
/// a pass over every job's tasks reads no other memory.
class TaskRange {
 public:
  /// The ids in order (std::views::iota would do, but clang-tidy 14 cannot parse libstdc++ 12's).
  class Iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = uint32_t;
    using difference_type = std::ptrdiff_t;
    using pointer = const uint32_t*;
    using reference = uint32_t;
    Iterator() = default;
    explicit Iterator(uint32_t id) : id_(id) {}
    uint32_t operator*() const { return id_; }
    Iterator& operator++() {
      ++id_;
      return *this;
    }
    Iterator operator++(int) {
      Iterator before = *this;
      ++id_;
      return before;
    }
    bool operator==(const Iterator&) const = default;

   private:
    uint32_t id_ = 0;
  };
  TaskRange() = default;
  TaskRange(uint32_t first, uint32_t count) : first_(first), count_(count) {}
  Iterator begin() const { return Iterator(first_); }
  Iterator end() const { return Iterator(first_ + count_); }
  uint32_t first() const { return first_; }
  size_t size() const { return count_; }
  bool empty() const { return count_ == 0; }
  uint32_t front() const { return first_; }
  uint32_t back() const { return first_ + count_ - 1; }
  uint32_t operator[](size_t i) const { return first_ + static_cast<uint32_t>(i); }
  /// Empty ranges are equal wherever they start: a job without pods has no task ids to compare.
  bool operator==(const TaskRange& other) const {
    return count_ == other.count_ && (count_ == 0 || first_ == other.first_);
  }

 private:
  uint32_t first_ = 0;
  uint32_t count_ = 0;
};

struct JobInfo {
  std::string namespace_;
  std::string name;
  std::string key;  ///< "namespace/name"
  std::string uid;
  const model::PodGroup* object = nullptr;  ///< Null for groups synthesised from bare pods.
  std::string queue_name;
  int32_t queue = kNoQueue;
  int32_t priority = 50;
  // min_member beside the flag and before the 8-byte fields: no padding (150,000 jobs at 5,000 nodes).
  int32_t min_member = 1;
  bool preemptible = true;
  int64_t creation = 0;
  std::vector<PodSetInfo> pod_sets;
  TaskRange tasks;
  /// Tasks in an active-allocated status, kept current by the session and the statement.
  int32_t active_allocated = 0;
  /// Tasks in status Pending, kept current the same way: every action asks each job whether it has
  /// one (Session::has_pending_tasks), and at 150,000 jobs walking their tasks each time was a sixth
  /// of the actions' time.
  int32_t pending = 0;
  /// Input errors that make the whole group unschedulable before any attempt (bad annotations...),
  /// and a bind backoff (bind_backoff.hpp): no action allocates the group or evicts for it.
  std::vector<FitReason> invalid;
  std::vector<FitReason> fit_errors;
  /// Unix seconds of the last start (annotation kai.scheduler/last-start-timestamp), set by allocate.
  std::optional<int64_t> last_start;
  /// The PodGroup's own stalenessGracePeriod (negative: never evicted as stale), else the session's.
  std::optional<double> staleness_grace_seconds;
  /// Since when the gang has been stale (annotation kai.scheduler/stale-podgroup-timestamp).
  std::optional<int64_t> stale_since;
  /// The PodGroup's preemptionDelay (seconds): how long after max(creation, last eviction) the group
  /// may not make reclaim, preempt or consolidation evict for it (preemption_delay.hpp).
  std::optional<double> preemption_delay_seconds;
  /// Unix seconds of the last eviction of one of its pods (annotation
  /// kai.scheduler/last-eviction-timestamp), set by the statement that commits it.
  std::optional<int64_t> last_eviction;
  /// Where its topology constraints apply (topology_scopes.hpp); null when it has none. Shared: the
  /// session's copies of a job (none today) would read the same.
  std::shared_ptr<const JobTopology> topology;
  /// Constraints naming a missing topology or level: the topology plugin makes them `invalid`.
  std::vector<FitReason> topology_errors;
  bool operator==(const JobInfo&) const = default;
};

/// Per-resource queue quantities in scheduler units: GPU devices, CPU millicores, memory bytes.
struct QueueQuantities {
  double gpu = 0;
  double cpu = 0;
  double memory = 0;
};

struct QueueInfo {
  std::string name;
  int32_t parent = kNoQueue;
  std::vector<uint32_t> children;
  int32_t priority = 100;
  int64_t creation = 0;
  QueueQuantities deserved;  ///< -1 = unlimited
  QueueQuantities max_allowed;
  QueueQuantities over_quota_weight;
  QueueQuantities fair_share;
  QueueQuantities allocated;
  QueueQuantities allocated_non_preemptible;
  QueueQuantities request;
  /// Historical usage, a share of the cluster's capacity per resource (time-based fair share,
  /// docs/time-based-fair-share.md); 0 without a usage history, as KAI without a usage database.
  QueueQuantities usage;
  std::optional<double> preempt_min_runtime;  ///< seconds; spec.preemptMinRuntime
  std::optional<double> reclaim_min_runtime;  ///< seconds; spec.reclaimMinRuntime
  bool is_leaf() const { return children.empty(); }
};

}  // namespace kai::core
