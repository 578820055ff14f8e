#pragma once
// KAI's pod grouper as a pure function of one pod and the projected owners (docs/pod-grouping.md):
// the pod's top owner is found by following ownerReferences upward through the owners the log holds,
// and the grouper of the top owner's kind decides the PodGroup: its name, its ownerReference, its
// gang size from the owner's spec (never from the pods seen), its subgroups and the pod's subgroup,
// and the queue, priority, preemptibility, delays and topology from labels and annotations.

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "actors/scheduler/core/held_apart.hpp"
#include "k8s/model/objects.hpp"

namespace kai::core {

/// What the pod grouper decides that most groups leave unset (a bare pod's group sets none of it).
struct GroupSpecRare {
  std::optional<int32_t> min_sub_group;
  std::vector<model::SubGroup> sub_groups;
  std::string sub_group;  ///< The pod's subgroup ("" when none).
  std::optional<double> preemption_delay_seconds;
  std::optional<double> staleness_grace_period_seconds;
  model::TopologyConstraint topology;
  /// A reason the group cannot be decided yet (an owner not projected: "waiting for owner Job ns/x")
  /// or at all (an owner's spec the grouper refuses); the pod waits with it.
  std::string waiting_for;
  std::string error;
  bool operator==(const GroupSpecRare&) const = default;
};

/// What the pod grouper decides for one pod: the PodGroup it would create or update.
struct GroupSpec {
  std::string name;
  model::OwnerReference owner;  ///< The PodGroup's one ownerReference.
  int32_t min_member = 1;
  model::StringMap labels;
  model::StringMap annotations;
  std::string queue;
  bool queue_defaulted = false;
  std::string priority_class_name;
  std::string preemptibility;
  /// Held apart: a session at 150,000 bare pods has as many specs, and these fields were 248 of
  /// their 592 bytes (bench/README.md "kai-sim on kai-gen's 5,000-node cluster"). Read with `->`,
  /// set through `mut()`, which makes them.
  HeldApart<GroupSpecRare> rare;
  /// The top owner is of a kind the source does not serve, so its spec is unknown: a workload kind's
  /// gang is then as large as its pods present (docs/pod-grouping.md "Owners").
  bool size_from_pods = false;
  /// An owner sets kai.scheduler/skip-podgrouper: the grouper leaves the pod alone (nothing else set).
  bool skipped = false;
  bool operator==(const GroupSpec&) const = default;
};

/// Whether `meta` sets kai.scheduler/skip-podgrouper to "true" (KAI's exact value).
bool skips_pod_grouper(const model::ObjectMeta& meta);

/// A PodGroup lookup the grouper made for a pod and what it found (null: none).
struct PodGroupLookup {
  std::string namespace_;
  std::string name;
  const model::PodGroup* found = nullptr;
};

/// The owners by key (model::key_of) and the pods by "namespace/name", as group_pods indexes them.
struct OwnerIndex {
  std::map<std::string, const model::WorkloadOwner*, std::less<>> owners;
  std::map<std::string, const model::Pod*, std::less<>> pods;
  const std::set<std::string>* served = nullptr;  ///< Owner kinds ("Kind.group") the source serves.
  std::set<std::string, std::less<>> priority_classes;  ///< Names that exist (KAI checks before use).
  /// Pods by namespace, for the MPI grouper's launcher lookup.
  std::multimap<std::string, const model::Pod*, std::less<>> pods_by_namespace;
  /// The PodGroup object of a namespace and name, or null: KAI's groupers keep a name or a shape an
  /// earlier KAI gave a running workload (docs/pod-grouping.md "Legacy PodGroups"). Unset: none exist.
  std::function<const model::PodGroup*(const std::string& ns, const std::string& name)> find_pod_group;
  /// When set, every PodGroup lookup a grouper makes is recorded here (what GroupingMemo follows).
  std::vector<PodGroupLookup>* pod_group_lookups = nullptr;
  /// --search-legacy-pg: a Job's pod keeps the per-pod PodGroup `pg-<pod>-<job uid>` where it exists.
  bool search_legacy_pod_groups = true;
  /// --knative-gang-schedule: a Knative revision is one gang; off, every pod is its own group.
  bool knative_gang_schedule = true;
  /// Off: GroupSpec::labels and ::annotations stay empty (GrouperFlags::pod_group_metadata).
  bool pod_group_metadata = true;
  /// Knative revisions ("namespace/name") an earlier grouper grouped one PodGroup per pod, which stay
  /// so; the value is an error text when the revision's PodGroups say neither.
  std::map<std::string, std::string, std::less<>> knative_per_pod_revisions;
};

/// The kai.scheduler/top-owner-metadata annotation the grouper puts on a PodGroup: the top owner's
/// name, uid, group, version and kind as KAI's YAML lines, an empty value written as "".
std::string top_owner_metadata(const model::WorkloadOwner& top);

/// KAI's pod grouper for `pod`, whose namespace defaults the owners' (owners are namespaced). The
/// pod's own skip annotation is the caller's to check; an owner's sets `skipped`.
GroupSpec decide_group(const model::Pod& pod, const OwnerIndex& index, const std::string& default_queue);

}  // namespace kai::core
