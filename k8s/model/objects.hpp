#pragma once
// Typed Kubernetes and KAI objects: exactly the fields the scheduler reads (docs/kai-compatibility.md "Custom resources",
// "Labels and annotations", "Pod statuses"). Decoded once at the edge (json_codec.hpp); no JSON tree is kept. Quantities are integer
// milli-units (quantity.hpp). A field that cannot be decoded does not fail the object: it is recorded in
// `errors` so that the scheduler can report it as an unschedulable reason for that object alone.

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <boost/container/flat_map.hpp>

namespace kai::model {

/// Resource name -> quantity in milli-units (cpu "100m" -> 100, memory "1Ki" -> 1024000). Sorted like a
/// std::map, held in one array: a pod's two or three entries in one allocation rather than a tree
/// node each (bench/README.md "The resource lists in one array").
using ResourceList = boost::container::flat_map<std::string, int64_t>;
using StringMap = boost::container::flat_map<std::string, std::string>;

/// A field of an object that could not be decoded, e.g. {"spec.containers[0].resources.requests.cpu",
/// "quantity \"abc\" does not parse"}.
struct FieldError {
  std::string field;
  std::string message;
  bool operator==(const FieldError&) const = default;
};

struct OwnerReference {
  std::string api_version;
  std::string kind;
  std::string name;
  std::string uid;
  bool controller = false;
  bool operator==(const OwnerReference&) const = default;
};

struct ObjectMeta {
  std::string name;
  std::string namespace_;  ///< Empty for cluster-scoped kinds.
  std::string uid;
  std::string resource_version;
  int64_t generation = 0;
  /// Unix seconds; Kubernetes timestamps have second precision. Default: 0 (unset).
  int64_t creation_timestamp = 0;
  std::optional<int64_t> deletion_timestamp;
  StringMap labels;
  StringMap annotations;
  std::vector<OwnerReference> owner_references;
  bool operator==(const ObjectMeta&) const = default;
};

// ---------------------------------------------------------------------------------------- Node
struct Taint {
  std::string key;
  std::string value;
  std::string effect;  ///< NoSchedule | PreferNoSchedule | NoExecute
  bool operator==(const Taint&) const = default;
};

struct NodeCondition {
  std::string type;    ///< Ready, MemoryPressure, DiskPressure, PIDPressure, NetworkUnavailable...
  std::string status;  ///< True | False | Unknown
  bool operator==(const NodeCondition&) const = default;
};

struct Node {
  ObjectMeta meta;
  bool unschedulable = false;  ///< spec.unschedulable (cordoned)
  std::vector<Taint> taints;
  ResourceList capacity;
  ResourceList allocatable;
  std::vector<NodeCondition> conditions;
  std::vector<FieldError> errors;
  bool operator==(const Node&) const = default;
};

// ----------------------------------------------------------------------------------------- Pod
struct Toleration {
  std::string key;
  std::string op = "Equal";  ///< Equal | Exists
  std::string value;
  std::string effect;  ///< Empty matches every effect.
  bool operator==(const Toleration&) const = default;
};

struct NodeSelectorRequirement {
  std::string key;
  std::string op;  ///< In | NotIn | Exists | DoesNotExist | Gt | Lt
  std::vector<std::string> values;
  bool operator==(const NodeSelectorRequirement&) const = default;
};

/// One term of requiredDuringSchedulingIgnoredDuringExecution; terms are ORed, requirements ANDed.
struct NodeSelectorTerm {
  std::vector<NodeSelectorRequirement> match_expressions;
  std::vector<NodeSelectorRequirement> match_fields;  ///< Only metadata.name is defined by Kubernetes.
  bool operator==(const NodeSelectorTerm&) const = default;
};

/// A container port that claims a port on its node (ports[].hostPort > 0): kube-scheduler's NodePorts.
struct HostPort {
  int32_t port = 0;
  std::string protocol = "TCP";  ///< TCP | UDP | SCTP; empty in the object means TCP.
  std::string host_ip;           ///< Empty or 0.0.0.0 means every address of the node.
  bool operator==(const HostPort&) const = default;
};

struct Container {
  std::string name;
  ResourceList requests;  ///< Defaulted from limits where a request is missing, as the API server does.
  ResourceList limits;
  bool restart_policy_always = false;  ///< A native sidecar init container (counted as kube-scheduler counts it).
  std::vector<HostPort> host_ports;
  bool operator==(const Container&) const = default;
};

/// metav1.LabelSelector: matchLabels and matchExpressions ANDed; an empty selector matches everything.
struct LabelSelectorRequirement {
  std::string key;
  std::string op;  ///< In | NotIn | Exists | DoesNotExist
  std::vector<std::string> values;
  bool operator==(const LabelSelectorRequirement&) const = default;
};
struct LabelSelector {
  StringMap match_labels;
  std::vector<LabelSelectorRequirement> match_expressions;
  bool operator==(const LabelSelector&) const = default;
};

/// One pod (anti-)affinity term (docs/pod-constraints.md).
struct PodAffinityTerm {
  std::optional<LabelSelector> label_selector;  ///< Absent matches no pod.
  std::vector<std::string> namespaces;
  /// Absent: `namespaces`, or the pod's own namespace when both are empty. {} selects every namespace.
  std::optional<LabelSelector> namespace_selector;
  std::string topology_key;
  std::vector<std::string> match_label_keys;     ///< Merged into the selector as key In (the pod's value).
  std::vector<std::string> mismatch_label_keys;  ///< Merged as key NotIn (the pod's value).
  bool operator==(const PodAffinityTerm&) const = default;
};
struct WeightedPodAffinityTerm {
  int32_t weight = 0;
  PodAffinityTerm term;
  bool operator==(const WeightedPodAffinityTerm&) const = default;
};
struct PodAffinityRules {
  std::vector<PodAffinityTerm> required;
  std::vector<WeightedPodAffinityTerm> preferred;
  bool empty() const { return required.empty() && preferred.empty(); }
  bool operator==(const PodAffinityRules&) const = default;
};

/// One entry of spec.topologySpreadConstraints.
struct TopologySpreadConstraint {
  int32_t max_skew = 0;
  std::string topology_key;
  std::string when_unsatisfiable = "DoNotSchedule";  ///< DoNotSchedule | ScheduleAnyway
  std::optional<LabelSelector> label_selector;         ///< Absent matches no pod.
  std::optional<int32_t> min_domains;
  std::string node_affinity_policy = "Honor";  ///< Honor | Ignore
  std::string node_taints_policy = "Ignore";   ///< Honor | Ignore
  std::vector<std::string> match_label_keys;
  bool operator==(const TopologySpreadConstraint&) const = default;
};

struct PodCondition {
  std::string type;
  std::string status;
  std::string reason;
  std::string message;
  /// lastTransitionTime, Unix seconds: when PodScheduled turned True is a job's last start for a
  /// replica that has no record of it (docs/one-truth.md).
  std::optional<int64_t> last_transition_time = {};
  bool operator==(const PodCondition&) const = default;
};

struct Pod {
  ObjectMeta meta;
  // spec
  std::string scheduler_name;
  std::string node_name;
  std::string priority_class_name;
  std::optional<int32_t> priority;
  StringMap node_selector;
  std::optional<std::vector<NodeSelectorTerm>> required_node_affinity;
  PodAffinityRules pod_affinity;
  PodAffinityRules pod_anti_affinity;
  std::vector<TopologySpreadConstraint> topology_spread_constraints;
  std::vector<Toleration> tolerations;
  std::vector<Container> containers;
  std::vector<Container> init_containers;
  ResourceList overhead;
  int scheduling_gates = 0;
  /// Required constraints the scheduler does not implement, by field path (docs/kai-compatibility.md "Predicates and refused constraints"). A pod
  /// listing any of them is refused with a reason naming the field.
  std::vector<std::string> unsupported_constraints;
  // status
  std::string phase;  ///< Pending | Running | Succeeded | Failed | Unknown
  std::string nominated_node_name;
  std::vector<PodCondition> conditions;
  std::vector<FieldError> errors;
  bool operator==(const Pod&) const = default;
};

// --------------------------------------------------------------------------------------- Queue
/// One resource of a queue. Units: GPU devices, CPU millicores, memory megabytes (10^6 bytes).
/// -1 means unlimited for quota and limit. A field left out means 0, as in KAI (docs/kai-compatibility.md "Custom resources").
struct QueueResource {
  double quota = 0;
  double over_quota_weight = 0;
  double limit = 0;
  bool operator==(const QueueResource&) const = default;
};

/// The resource lists KAI's controllers write into a PodGroup's status.resourcesStatus and a Queue's
/// status (docs/status.md): allocated, allocatedNonPreemptible, requested.
struct ResourcesStatus {
  ResourceList allocated;
  ResourceList allocated_non_preemptible;
  ResourceList requested;
  bool operator==(const ResourcesStatus&) const = default;
};

struct Queue {
  ObjectMeta meta;
  std::string display_name;
  std::string parent_queue;
  bool has_resources = false;  ///< spec.resources present (the webhook rejects queues without it).
  QueueResource gpu;
  QueueResource cpu;
  QueueResource memory;
  int32_t priority = 100;  ///< Default: 100 (KAI's DefaultQueuePriority).
  std::optional<double> preempt_min_runtime_seconds;
  std::optional<double> reclaim_min_runtime_seconds;
  /// status: what the queue controller last wrote (allocated, allocatedNonPreemptible, requested,
  /// childQueues).
  ResourcesStatus resources_status;
  std::vector<std::string> child_queues;
  std::vector<FieldError> errors;
  bool operator==(const Queue&) const = default;
};

// ------------------------------------------------------------------------------------ PodGroup
struct TopologyConstraint {
  std::string topology;
  std::string required_level;
  std::string preferred_level;
  bool empty() const { return topology.empty() && required_level.empty() && preferred_level.empty(); }
  bool operator==(const TopologyConstraint&) const = default;
};

struct SubGroup {
  std::string name;
  int32_t min_member = 0;
  /// How many of its direct children must be satisfied (KAI v0.17); set instead of min_member.
  std::optional<int32_t> min_sub_group;
  std::optional<std::string> parent;
  TopologyConstraint topology_constraint;
  bool operator==(const SubGroup&) const = default;
};

/// One of a scheduling condition's reasons.
struct SchedulingReason {
  std::string reason;
  std::string message;
  bool operator==(const SchedulingReason&) const = default;
};

/// status.schedulingConditions[] of a PodGroup (KAI v0.17): why it is not scheduled in a node pool.
struct SchedulingCondition {
  std::string type;  ///< UnschedulableOnNodePool
  std::string node_pool;
  std::string reason;  ///< Unschedulable
  std::string message;
  std::string status;  ///< "True"
  std::string transition_id;  ///< A decimal counter over the PodGroup's conditions.
  std::optional<int64_t> last_transition_time;  ///< Unix seconds.
  std::vector<SchedulingReason> reasons;
  bool operator==(const SchedulingCondition&) const = default;
};

struct PodGroup {
  ObjectMeta meta;
  int32_t min_member = 1;
  /// How many of its top-level subgroups must be satisfied (KAI v0.17); set instead of minMember.
  std::optional<int32_t> min_sub_group;
  /// spec.preemptionDelay / spec.stalenessGracePeriod, Go durations, in seconds.
  std::optional<double> preemption_delay_seconds;
  std::optional<double> staleness_grace_period_seconds;
  std::string queue;
  std::string priority_class_name;
  std::string preemptibility;  ///< preemptible | non-preemptible | "" (derived from priority)
  std::optional<bool> mark_unschedulable;
  std::optional<int32_t> scheduling_backoff;
  TopologyConstraint topology_constraint;
  std::vector<SubGroup> sub_groups;
  /// status: what the pod-group controller and the scheduler last wrote.
  ResourcesStatus resources_status;
  std::vector<SchedulingCondition> scheduling_conditions;
  std::vector<FieldError> errors;
  bool operator==(const PodGroup&) const = default;
};

// ------------------------------------------------------------------------------- PriorityClass
struct PriorityClass {
  ObjectMeta meta;
  int32_t value = 0;
  bool global_default = false;
  std::string preemption_policy;
  std::vector<FieldError> errors;
  bool operator==(const PriorityClass&) const = default;
};

// ------------------------------------------------------------------------------------ Topology
/// One level of a Topology: the node label whose values name its domains, and an optional alias a
/// constraint may use instead of the label.
struct TopologyLevel {
  std::string node_label;
  std::string alias;
  bool operator==(const TopologyLevel&) const = default;
};

/// KAI's Topology (kai.scheduler/v1alpha1, cluster-scoped): levels from the widest (zone, block) to
/// the narrowest (rack, host); a node belongs to it only when it has every level's label
/// (docs/topology.md).
struct Topology {
  ObjectMeta meta;
  std::vector<TopologyLevel> levels;
  std::vector<FieldError> errors;
  bool operator==(const Topology&) const = default;
};

// --------------------------------------------------------------------------------- BindRequest
struct BindRequest {
  ObjectMeta meta;
  std::string pod_name;
  std::string selected_node;
  std::string received_resource_type;  ///< Regular | Fraction | MigInstance
  int32_t received_gpu_count = 0;
  std::string received_gpu_portion;  ///< "%.2f"
  std::vector<std::string> selected_gpu_groups;
  std::optional<int32_t> backoff_limit;
  std::string phase;  ///< Pending | Succeeded | Failed
  std::string reason;
  int32_t failed_attempts = 0;
  std::vector<FieldError> errors;
  bool operator==(const BindRequest&) const = default;
};

// ------------------------------------------------------------------------------- WorkloadOwner
/// One replica set of a workload, as its controller's spec names it: a JobSet replicatedJob, a
/// Kubeflow replica type (Master, Worker, Launcher...), a Ray worker group, a LeaderWorkerSet's worker
/// template.
struct WorkloadReplicas {
  std::string name;
  std::optional<int32_t> replicas;
  std::optional<int32_t> min_replicas;  ///< Ray minReplicas.
  std::optional<int32_t> parallelism;   ///< JobSet: the Job template's spec.parallelism.
  std::optional<int32_t> num_of_hosts;  ///< Ray numOfHosts.
  bool suspended = false;               ///< Ray `suspend`.
  StringMap template_annotations;       ///< The pod (JobSet: Job) template's annotations.
  bool operator==(const WorkloadReplicas&) const = default;
};

/// An object that owns pods, directly or through others (a Job, a JobSet, a PyTorchJob, a RayCluster,
/// a Deployment...): its metadata and only the spec fields KAI's pod grouper reads
/// (docs/pod-grouping.md). Its kind is `kind` in API group `group`; every group but the core one.
struct WorkloadOwner {
  ObjectMeta meta;
  std::string group;
  std::string version;
  std::string kind;
  /// replicatedJobs (JobSet), the replica specs in name order (Kubeflow), workerGroupSpecs (Ray), the
  /// worker template (LeaderWorkerSet, named "worker").
  std::vector<WorkloadReplicas> replicas;
  std::optional<WorkloadReplicas> head;  ///< Ray headGroupSpec.
  std::optional<int32_t> min_available;  ///< Kubeflow spec.runPolicy.schedulingPolicy.minAvailable.
  std::optional<int32_t> elastic_min_replicas;  ///< PyTorchJob spec.elasticPolicy.minReplicas.
  std::string startup_policy;  ///< JobSet spec.startupPolicy.startupPolicyOrder; LWS spec.startupPolicy.
  std::string launcher_creation_policy;  ///< MPIJob spec.launcherCreationPolicy.
  std::optional<int32_t> size;           ///< LeaderWorkerSet spec.leaderWorkerTemplate.size.
  std::optional<int32_t> sub_group_size;  ///< LeaderWorkerSet ...subGroupPolicy.subGroupSize.
  std::string sub_group_policy_type;      ///< LeaderWorkerSet ...subGroupPolicy.subGroupPolicyType.
  std::string ray_cluster_name;  ///< RayJob status.rayClusterName; RayService's active (else pending) one.
  std::vector<FieldError> errors;
  /// "Kind.group": how the log, the projection and the served-kinds set name its kind.
  std::string group_kind() const { return kind + "." + group; }
  bool operator==(const WorkloadOwner&) const = default;
};

/// A Namespace: only its labels matter, to pod (anti-)affinity terms' namespaceSelector
/// (docs/pod-constraints.md).
struct Namespace {
  ObjectMeta meta;
  std::vector<FieldError> errors;
  bool operator==(const Namespace&) const = default;
};

/// A holder with one `C<Object>` per kind of the kinds table (kinds.hpp), each member named as every
/// holder names it, so that `Kind::in(holder)` reaches it. Adding a kind adds its member here, once
/// for every holder.
template <template <class> class C>
struct PerKind {
  C<Node> nodes;
  C<Pod> pods;
  C<Queue> queues;
  C<PodGroup> pod_groups;
  C<PriorityClass> priority_classes;
  C<BindRequest> bind_requests;
  C<WorkloadOwner> owners;
  C<Topology> topologies;
  C<Namespace> namespaces;
  bool operator==(const PerKind&) const = default;
};

template <class T>
using ListOf = std::vector<T>;
template <class T>
using RefsOf = std::vector<const T*>;

/// Everything a snapshot holds, in input order.
struct ClusterObjects : PerKind<ListOf> {
  /// Objects of other kinds, skipped ("Deployment ns/name"); kept to tell the user.
  std::vector<std::string> skipped;
  /// The owner kinds ("Kind.group") the source serves: a pod whose owner is of one of these kinds and
  /// not among `owners` waits for it (docs/pod-grouping.md "Owners").
  std::set<std::string> served_owner_kinds;
  bool operator==(const ClusterObjects&) const = default;
};

/// The objects of a snapshot by address: what a session reads. The daemon's cut of its entity actors'
/// published state is one (no copy of the objects per cycle); ClusterObjects gives one with of().
/// The objects must outlive every reader, the session included (it keeps pointers to them).
struct ObjectRefs : PerKind<RefsOf> {
  std::set<std::string> served_owner_kinds;  ///< As ClusterObjects::served_owner_kinds.
  static ObjectRefs of(const ClusterObjects& objects);  // kinds.cpp
};

}  // namespace kai::model
