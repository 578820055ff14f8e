#pragma once
// The pieces of KAI's pod grouper shared by the owner walk (pod_grouper.cpp) and the per-kind
// groupers (workload_groupers.cpp): the owner chain and the default grouper.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "actors/scheduler/core/pod_grouper.hpp"
#include "k8s/model/string_map_lookup.hpp"

namespace kai::core {

/// A pod's owners, nearest first; back() is the top owner (the pod itself when it has none).
struct OwnerChain {
  std::vector<const model::WorkloadOwner*> owners;
  /// The owner made here rather than projected (a pod as its own top owner, an owner of a kind that
  /// is not watched, known by its reference): a chain has at most one, at its top. Held by pointer
  /// so that `owners` may point at it wherever the chain moves.
  std::unique_ptr<model::WorkloadOwner> unwatched;
  const model::Pod* top_pod = nullptr;  ///< Set while the walk stands on a pod (a Spark driver).
  bool top_unwatched = false;  ///< The top owner is known by a reference only (its kind is not served).
  std::string waiting_for;
  std::string error;
};

/// `text` as a whole decimal int32, or nullopt (null, empty, or not a number).
std::optional<int32_t> parse_int(const std::string* text);

/// A subgroup `name` requiring `min_member` pods, under `parent` when given.
model::SubGroup leaf(std::string name, int32_t min_member, std::optional<std::string> parent = std::nullopt);

/// The value of a key in a label or annotation map, or null (k8s/model/string_map_lookup.hpp).
using model::find_in;

/// Follows the pod's first ownerReference upward through the projected owners.
OwnerChain walk_owners(const model::Pod& pod, const OwnerIndex& index);

/// KAI's default grouper: `pg-<top>-<uid>`, minMember 1, the top owner's labels and annotations, the
/// queue, priority (with `priority_fallback`), preemptibility, delays and topology. `owners`: the
/// chain the priority and preemptibility are looked up in, nearest first.
GroupSpec default_grouper(const model::WorkloadOwner& top, const model::Pod& pod,
                          const std::vector<const model::WorkloadOwner*>& owners, const OwnerIndex& index,
                          const std::string& default_queue, const std::string& priority_fallback);

/// The topology constraint named by three annotations.
model::TopologyConstraint topology_from(const model::StringMap& annotations, const char* name_key,
                                        const char* required_key, const char* preferred_key);

/// A PyTorchJob's worker subgroups (segment_groupers.cpp): one leaf `worker` of `worker_min`, or,
/// with kai.scheduler/segment-size on the pod or the worker template, a parent `worker` over segments
/// `worker-<i>` of that size (the last one partial, those beyond `worker_min` elastic); the pod joins
/// its segment by its replica index. A refused size sets `g.error`.
void add_pytorch_worker_sub_groups(GroupSpec& g, const model::WorkloadOwner& job, const model::Pod& pod,
                                   int32_t worker_replicas, int32_t worker_min);

/// A LeaderWorkerSet group's subgroups for a gang of `g.min_member` (segment_groupers.cpp): `leader`
/// and `workers`, or, with a segment size (subGroupPolicy.subGroupSize or kai.scheduler/segment-size),
/// segments `segment-<i>` with the leader in the first (LeaderWorker) or apart (LeaderExcluded); the
/// pod joins by its worker index.
void add_leader_worker_sub_groups(GroupSpec& g, const model::WorkloadOwner& lws, const model::Pod& pod,
                                  std::optional<int32_t> worker_index);

/// The grouper of the chain's top owner kind.
GroupSpec group_by_kind(const OwnerChain& chain, const model::Pod& pod, const OwnerIndex& index,
                        const std::string& default_queue);

}  // namespace kai::core
