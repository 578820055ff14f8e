#pragma once
// The one table of the object kinds the scheduler watches, projects, snapshots and exports. Each
// entry names the kind, where the API server lists it, its codec entry points and where its
// objects live in every per-kind holder (ClusterObjects, ObjectRefs, the projected state, the
// snapshot sections, a store's view): holders name their per-kind members alike (`nodes`, `pods`,
// ...), so `Kind::in(holder)` reaches any of them. Code that handles every kind iterates the table
// with for_each_kind() or picks one by name with with_kind(); adding a kind is adding its struct,
// its codec and one entry here (docs/architecture.md "Object kinds").

#include <array>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <tuple>

#include "k8s/model/objects.hpp"
#include "k8s/model/status.hpp"

namespace kai::model {

/// "namespace/name", or "name" for a cluster-scoped object: the key of every per-kind map, of the
/// log's object references and of `kai-log why`.
inline std::string object_key(const ObjectMeta& meta) {
  return meta.namespace_.empty() ? meta.name : meta.namespace_ + "/" + meta.name;
}

// The per-kind decoders (json_codec.hpp); declared here so that the table can name them without
// pulling nlohmann's full header into every unit that iterates kinds.
Result<Node> decode_node(const nlohmann::json& j);
Result<Pod> decode_pod(const nlohmann::json& j);
Result<Queue> decode_queue(const nlohmann::json& j);
Result<PodGroup> decode_pod_group(const nlohmann::json& j);
Result<PriorityClass> decode_priority_class(const nlohmann::json& j);
Result<BindRequest> decode_bind_request(const nlohmann::json& j);
Result<WorkloadOwner> decode_workload_owner(const nlohmann::json& j);
Result<Topology> decode_topology(const nlohmann::json& j);
Result<Namespace> decode_namespace(const nlohmann::json& j);

/// Whether a watch kind names workload owners: "Kind.group" (docs/pod-grouping.md "Owners"); the
/// table's own kinds have no dot.
inline bool is_owner_kind(std::string_view watch_kind) {
  return watch_kind.find('.') != std::string_view::npos;
}

/// An owner's key: "Kind.group/namespace/name", so that a RELIST of one owner kind is one key range.
inline std::string owner_key(std::string_view group_kind, std::string_view ns, std::string_view name) {
  std::string k;
  k.reserve(group_kind.size() + ns.size() + name.size() + 2);
  k.append(group_kind).append("/").append(ns).append("/").append(name);
  return k;
}

/// The key of any object in its kind's map.
template <class T>
std::string key_of(const T& x) {
  return object_key(x.meta);
}
inline std::string key_of(const WorkloadOwner& x) {
  return owner_key(x.group_kind(), x.meta.namespace_, x.meta.name);
}

namespace kinds {

/// Every field of an entry:
///   Object            the typed struct (objects.hpp)
///   kName             the watch kind, as the API server spells it
///   kSection          the name of its member in every holder, and of its snapshot section
///   kApiGroup         its API group ("" = core); another group with the same kind name is another kind
///   kListPath         where the daemon lists and watches it (every namespace)
///   kReferenceRank    position in an exported List: referenced kinds before the kinds that refer to
///                     them, so that `kubectl apply -f` of an export creates nodes and queues first
///   kEntityStore      which of the daemon's entity stores owns it: nodes (0); queues and priority
///                     classes (1); pod groups with their pods and bind requests (2)
///   kMayBeAbsent      a cluster may not serve it (an optional CRD): listed as none while absent
///   decode            its JSON decoder; the encoder is the overload model::encode(const Object&)
///   in(holder)        its member in any per-kind holder
struct Node {
  using Object = model::Node;
  static constexpr std::string_view kName = "Node";
  static constexpr std::string_view kSection = "nodes";
  static constexpr std::string_view kApiGroup = "";
  static constexpr std::string_view kListPath = "/api/v1/nodes";
  static constexpr int kReferenceRank = 1;
  static constexpr int kEntityStore = 0;
  static constexpr bool kMayBeAbsent = false;
  static constexpr auto decode = &decode_node;
  template <class H>
  static auto& in(H& h) { return h.nodes; }
};
struct Pod {
  using Object = model::Pod;
  static constexpr std::string_view kName = "Pod";
  static constexpr std::string_view kSection = "pods";
  static constexpr std::string_view kApiGroup = "";
  static constexpr std::string_view kListPath = "/api/v1/pods";
  static constexpr int kReferenceRank = 7;
  static constexpr int kEntityStore = 2;
  static constexpr bool kMayBeAbsent = false;
  static constexpr auto decode = &decode_pod;
  template <class H>
  static auto& in(H& h) { return h.pods; }
};
struct Queue {
  using Object = model::Queue;
  static constexpr std::string_view kName = "Queue";
  static constexpr std::string_view kSection = "queues";
  static constexpr std::string_view kApiGroup = "scheduling.run.ai";
  static constexpr std::string_view kListPath = "/apis/scheduling.run.ai/v2/queues";
  static constexpr int kReferenceRank = 3;
  static constexpr int kEntityStore = 1;
  static constexpr bool kMayBeAbsent = false;
  static constexpr auto decode = &decode_queue;
  template <class H>
  static auto& in(H& h) { return h.queues; }
};
struct PodGroup {
  using Object = model::PodGroup;
  static constexpr std::string_view kName = "PodGroup";
  static constexpr std::string_view kSection = "pod_groups";
  static constexpr std::string_view kApiGroup = "scheduling.run.ai";
  static constexpr std::string_view kListPath = "/apis/scheduling.run.ai/v2alpha2/podgroups";
  static constexpr int kReferenceRank = 5;
  static constexpr int kEntityStore = 2;
  static constexpr bool kMayBeAbsent = false;
  static constexpr auto decode = &decode_pod_group;
  template <class H>
  static auto& in(H& h) { return h.pod_groups; }
};
struct PriorityClass {
  using Object = model::PriorityClass;
  static constexpr std::string_view kName = "PriorityClass";
  static constexpr std::string_view kSection = "priority_classes";
  static constexpr std::string_view kApiGroup = "scheduling.k8s.io";
  static constexpr std::string_view kListPath = "/apis/scheduling.k8s.io/v1/priorityclasses";
  static constexpr int kReferenceRank = 4;
  static constexpr int kEntityStore = 1;
  static constexpr bool kMayBeAbsent = false;
  static constexpr auto decode = &decode_priority_class;
  template <class H>
  static auto& in(H& h) { return h.priority_classes; }
};
struct BindRequest {
  using Object = model::BindRequest;
  static constexpr std::string_view kName = "BindRequest";
  static constexpr std::string_view kSection = "bind_requests";
  static constexpr std::string_view kApiGroup = "scheduling.run.ai";
  static constexpr std::string_view kListPath = "/apis/scheduling.run.ai/v1alpha2/bindrequests";
  static constexpr int kReferenceRank = 6;
  static constexpr int kEntityStore = 2;
  static constexpr bool kMayBeAbsent = false;
  static constexpr auto decode = &decode_bind_request;
  template <class H>
  static auto& in(H& h) { return h.bind_requests; }
};

/// The objects that own pods, of every kind other than the ones above (Job, JobSet, PyTorchJob...).
/// Each served owner kind is watched on its own, as watch kind "Kind.group" (is_owner_kind), at a
/// path API discovery finds; all of them live in this one entry, keyed by key_of.
struct WorkloadOwner {
  using Object = model::WorkloadOwner;
  static constexpr std::string_view kName = "WorkloadOwner";
  static constexpr std::string_view kSection = "owners";
  static constexpr std::string_view kApiGroup = "*";
  static constexpr std::string_view kListPath = "";
  static constexpr int kReferenceRank = 8;
  static constexpr int kEntityStore = 2;
  static constexpr bool kMayBeAbsent = false;
  static constexpr auto decode = &decode_workload_owner;
  template <class H>
  static auto& in(H& h) { return h.owners; }
};

struct Topology {
  using Object = model::Topology;
  static constexpr std::string_view kName = "Topology";
  static constexpr std::string_view kSection = "topologies";
  static constexpr std::string_view kApiGroup = "kai.scheduler";
  static constexpr std::string_view kListPath = "/apis/kai.scheduler/v1alpha1/topologies";
  static constexpr int kReferenceRank = 2;
  static constexpr int kEntityStore = 1;
  static constexpr bool kMayBeAbsent = true;
  static constexpr auto decode = &decode_topology;
  template <class H>
  static auto& in(H& h) { return h.topologies; }
};

/// Namespaces, for their labels (pod affinity's namespaceSelector). First in an exported List, as
/// every namespaced object needs its namespace.
struct Namespace {
  using Object = model::Namespace;
  static constexpr std::string_view kName = "Namespace";
  static constexpr std::string_view kSection = "namespaces";
  static constexpr std::string_view kApiGroup = "";
  static constexpr std::string_view kListPath = "/api/v1/namespaces";
  static constexpr int kReferenceRank = 0;
  static constexpr int kEntityStore = 1;
  static constexpr bool kMayBeAbsent = false;
  static constexpr auto decode = &decode_namespace;
  template <class H>
  static auto& in(H& h) { return h.namespaces; }
};

/// The table, in the order of the snapshot sections on disk (events/state_codec.hpp).
using All = std::tuple<Node, Pod, Queue, PodGroup, PriorityClass, BindRequest, WorkloadOwner, Topology, Namespace>;
inline constexpr size_t kCount = std::tuple_size_v<All>;

/// Each kind has its own position in an exported List (0 .. kCount-1).
inline constexpr bool kRanksDistinct = [] {
  std::array<int, kCount> ranks{};
  size_t i = 0;
  std::apply([&](auto... k) { ((ranks[i++] = decltype(k)::kReferenceRank), ...); }, All{});
  for (size_t a = 0; a < kCount; ++a) {
    if (ranks[a] < 0 || ranks[a] >= static_cast<int>(kCount)) return false;
    for (size_t b = a + 1; b < kCount; ++b) {
      if (ranks[a] == ranks[b]) return false;
    }
  }
  return true;
}();
static_assert(kRanksDistinct, "two kinds share a kReferenceRank");
inline constexpr int kEntityStores = 3;

}  // namespace kinds

/// Calls `f(Kind{})` for every kind, in table order.
template <class F>
void for_each_kind(F&& f) {
  std::apply([&](auto... kind) { (f(kind), ...); }, kinds::All{});
}

/// The table's name for watch kind `name`: owner kinds ("Job.batch") are "WorkloadOwner".
inline std::string_view table_kind(std::string_view name) {
  return is_owner_kind(name) ? kinds::WorkloadOwner::kName : name;
}

/// Calls `f(Kind{})` for the kind named `name` (an owner kind: WorkloadOwner); false when no kind
/// has that name.
template <class F>
bool with_kind(std::string_view name, F&& f) {
  bool found = false;
  const std::string_view table_name = table_kind(name);
  for_each_kind([&](auto kind) {
    if (!found && decltype(kind)::kName == table_name) {
      found = true;
      f(kind);
    }
  });
  return found;
}

/// Whether `name` is one of the table's kinds.
inline bool is_known_kind(std::string_view name) {
  return with_kind(name, [](auto) {});
}

}  // namespace kai::model
