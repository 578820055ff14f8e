#pragma once
// Which pod group each pod belongs to (docs/pod-grouping.md), as one pure function shared by kai-sim and the
// daemon: KAI's pod grouper (pod_grouper.hpp) run on each pod and its projected owners, so that a
// workload is one gang sized from its top owner's spec; a pod with annotation `pod-group-name`
// belongs to that PodGroup, which may not exist yet (unless it is the grouper's own name).

#include <boost/container/small_vector.hpp>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "actors/scheduler/core/pod_group_objects_flag.hpp"
#include "actors/scheduler/core/pod_grouper.hpp"
#include "k8s/model/objects.hpp"
#include "k8s/model/well_known_names.hpp"

namespace kai::core {

class GroupingMemo;

/// The reason a pod naming a PodGroup that does not exist yet waits with.
inline constexpr const char* kPodGroupNotFoundReason = "PodGroupNotFound";

struct PodGroupAssignment {
  std::string namespace_;
  std::string name;
  /// The PodGroup object, or null when synthesised (or named but missing: see `missing_pod_group`).
  const model::PodGroup* pod_group = nullptr;
  bool missing_pod_group = false;
  /// Indexes into ObjectRefs::pods (= ClusterObjects::pods), in input order. Most groups are one bare
  /// pod: held inline, so that a pass over 150,000 groups (a relayout renumbers them) reads no other
  /// memory, and a grouping allocates nothing for them.
  boost::container::small_vector<uint32_t, 1> pods;
  /// Each pod's subgroup, as `pods`: the grouper's, else the pod's kai.scheduler/subgroup-name label.
  /// Empty while every one is "" (most groups: a vector per bare pod was 7 MB at 150,000 of them);
  /// read through pod_sub_group().
  std::vector<std::string> pod_sub_groups;
  /// The subgroup of the group's `i`-th pod ("" when none).
  const std::string& pod_sub_group(size_t i) const {
    static const std::string kNone;
    return pod_sub_groups.empty() ? kNone : pod_sub_groups[i];
  }
  /// Appends pod `pod` (an index into ObjectRefs::pods) in subgroup `sub_group`.
  void add_pod(uint32_t pod, std::string sub_group);
  /// What the pod grouper decided (from the group's first pod): the PodGroup it writes. Set for
  /// every group the grouper names, whether or not the object exists yet. Held apart: a session at
  /// 150,000 pods has as many assignments, and moving 600 inline bytes each dominated its build;
  /// shared, so that a GroupingMemo hands the same one to the next cycle.
  std::shared_ptr<const GroupSpec> spec;
  // For synthesised groups (what the pod grouper would write into the PodGroup it creates):
  std::string uid;
  /// The queue, priority class and preemptibility: the grouper's decision's when the group was made
  /// with one (not copied: at 150,000 bare pods the copies were 14 MB), else the first pod's own,
  /// held apart; empty for a PodGroup object's group that has neither (its object says).
  const std::string& queue() const { return from_spec() ? spec->queue : own_->queue; }
  /// `queue()` is the default: the pod names none (label or "project").
  bool queue_defaulted() const { return from_spec() ? spec->queue_defaulted : own_->queue_defaulted; }
  const std::string& priority_class_name() const {
    return from_spec() ? spec->priority_class_name : own_->priority_class_name;
  }
  const std::string& preemptibility() const {
    return from_spec() ? spec->preemptibility : own_->preemptibility;
  }
  /// Gives a group the grouper did not decide its own queue, priority class and preemptibility.
  void set_own(std::string queue, bool queue_defaulted, std::string priority_class_name,
               std::string preemptibility);
  int32_t min_member = 1;
  int64_t creation_timestamp = 0;
  /// Why the group cannot be scheduled before anything is tried: an owner not projected yet, an
  /// owner's spec the grouper refuses, a pod that skips the grouper and names no PodGroup.
  std::vector<std::pair<std::string, std::string>> invalid;  ///< (reason, message)

 private:
  bool from_spec() const { return !own_set_ && spec != nullptr; }
  struct Own {
    std::string queue;
    bool queue_defaulted = false;
    std::string priority_class_name;
    std::string preemptibility;
    bool operator==(const Own&) const = default;
  };
  HeldApart<Own> own_;
  bool own_set_ = false;
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
