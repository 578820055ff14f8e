#pragma once
// Which pod group each pod belongs to (docs/pod-grouping.md), as one pure function shared by kai-sim and the
// daemon. Deployment / ReplicaSet / Job / bare pods form one group per pod (`pg-<pod>-<uid>`,
// minMember 1); Kubeflow, MPI, Ray, JobSet and LeaderWorkerSet workloads form one gang per owner; a pod
// with annotation `pod-group-name` belongs to that PodGroup, which may not exist yet.

#include <cstdint>
#include <string>
#include <vector>

#include "k8s/model/objects.hpp"
#include "k8s/model/well_known_names.hpp"

namespace kai::core {

struct PodGroupAssignment {
  std::string namespace_;
  std::string name;
  /// The PodGroup object, or null when synthesised (or named but missing: see `missing_pod_group`).
  const model::PodGroup* pod_group = nullptr;
  bool missing_pod_group = false;
  std::vector<uint32_t> pods;  ///< Indexes into ObjectRefs::pods (= ClusterObjects::pods), in input order.
  // For synthesised groups (what the pod grouper would write into the PodGroup it creates):
  std::string uid;
  std::string queue;
  bool queue_defaulted = false;  ///< `queue` is the default: the pod names none (label or "project").
  std::string priority_class_name;
  std::string preemptibility;
  int32_t min_member = 1;
  int64_t creation_timestamp = 0;
};

/// Groups the pods of `scheduler_name` in `objects`. Output order: PodGroup objects in input order,
/// then synthesised and missing groups in order of their first pod. Pure and deterministic.
std::vector<PodGroupAssignment> group_pods(const model::ObjectRefs& objects,
                                           const std::string& scheduler_name,
                                           const std::string& default_queue);

/// KAI's built-in priority of the classes its chart installs (train 50, build-preemptible 75, build 100,
/// inference 125), used when the snapshot lacks the PriorityClass object; -1 when unknown.
int32_t builtin_priority_class_value(const std::string& name);

}  // namespace kai::core
