#pragma once
// Which pod group each pod belongs to (docs/pod-grouping.md), as one pure function shared by kai-sim and the
// daemon: KAI's pod grouper (pod_grouper.hpp) run on each pod and its projected owners, so that a
// workload is one gang sized from its top owner's spec; a pod with annotation `pod-group-name`
// belongs to that PodGroup, which may not exist yet (unless it is the grouper's own name).

#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <string>
#include <vector>

#include "actors/scheduler/core/pod_group_objects_flag.hpp"
#include "actors/scheduler/core/pod_grouper.hpp"
#include "k8s/model/objects.hpp"
#include "k8s/model/well_known_names.hpp"

namespace kai::core {

class GroupingMemo;

struct PodGroupAssignment {
  std::string namespace_;
  std::string name;
  /// The PodGroup object, or null when synthesised (or named but missing: see `missing_pod_group`).
  const model::PodGroup* pod_group = nullptr;
  bool missing_pod_group = false;
  std::vector<uint32_t> pods;  ///< Indexes into ObjectRefs::pods (= ClusterObjects::pods), in input order.
  /// Each pod's subgroup, as `pods`: the grouper's, else the pod's kai.scheduler/subgroup-name label.
  std::vector<std::string> pod_sub_groups;
  /// What the pod grouper decided (from the group's first pod): the PodGroup it writes. Set for
  /// every group the grouper names, whether or not the object exists yet. Held apart: a session at
  /// 150,000 pods has as many assignments, and moving 600 inline bytes each dominated its build;
  /// shared, so that a GroupingMemo hands the same one to the next cycle.
  std::shared_ptr<const GroupSpec> spec;
  // For synthesised groups (what the pod grouper would write into the PodGroup it creates):
  std::string uid;
  std::string queue;
  bool queue_defaulted = false;  ///< `queue` is the default: the pod names none (label or "project").
  std::string priority_class_name;
  std::string preemptibility;
  int32_t min_member = 1;
  int64_t creation_timestamp = 0;
  /// Why the group cannot be scheduled before anything is tried: an owner not projected yet, an
  /// owner's spec the grouper refuses, a pod that skips the grouper and names no PodGroup.
  std::vector<std::pair<std::string, std::string>> invalid;  ///< (reason, message)
};

/// Groups the pods of `scheduler_name` in `objects`. Output order: PodGroup objects in input order,
/// then synthesised and missing groups in order of their first pod. Pure and deterministic: with a
/// `memo` (grouping_memo.hpp), the grouper's spec of a pod unchanged since the memo's last grouping
/// is taken from it, and the result is the same. `reads_beyond_pod`, when given, says whether some
/// pod's group may depend on more than the pod's labels, annotations, owners and names: on other
/// pods (an MPI launcher, a Spark driver, Knative revisions) or on whether a pod is bound (a
/// LeaderWorkerSet whose startupPolicy is LeaderReady sizes its group by its leader's).
std::vector<PodGroupAssignment> group_pods(const model::ObjectRefs& objects,
                                           const std::string& scheduler_name,
                                           const std::string& default_queue, const GrouperFlags& flags = {},
                                           GroupingMemo* memo = nullptr, bool* reads_beyond_pod = nullptr);

/// KAI's built-in priority of the classes its chart installs (train 50, build-preemptible 75, build 100,
/// inference 125), used when the snapshot lacks the PriorityClass object; -1 when unknown.
int32_t builtin_priority_class_value(const std::string& name);

}  // namespace kai::core
