#pragma once
// Where a job's topology constraints apply (docs/topology.md "Constraints"): the PodGroup's own
// spec.topologyConstraint over the whole group, and each subgroup's over its pods, nested as the
// subgroups are. Built once per job in a session, with the constraints' topologies and levels
// resolved against the session's trees; a constraint that names a missing topology or level is a
// reason the job cannot be scheduled (when the topology plugin is configured, plugins/topology.cpp).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "actors/scheduler/core/topology_tree.hpp"
#include "k8s/model/objects.hpp"

namespace kai::core {

/// No level: the constraint does not name one.
inline constexpr int32_t kNoLevel = -2;

struct TopologyScope {
  std::string name;          ///< The subgroup; "" for the whole group.
  int32_t tree = -1;         ///< Index into Session::topologies; -1: no constraint here.
  int32_t required = kNoLevel;
  int32_t preferred = kNoLevel;
  struct Member {
    bool is_scope = false;  ///< A nested scope (index into JobTopology::scopes), else a pod set.
    uint32_t index = 0;
  };
  std::vector<Member> members;  ///< In the subgroups' order.
};

struct JobTopology {
  std::vector<TopologyScope> scopes;  ///< [0]: the whole group.
};

struct ResolvedTopology {
  std::optional<JobTopology> topology;  ///< Unset when no constraint names a topology.
  std::vector<std::string> errors;      ///< Missing topologies or levels, with KAI's words.
};

/// Whether constraint `root` or one of `sub_groups` names a topology (most groups name none).
bool names_a_topology(const model::TopologyConstraint& root, const std::vector<model::SubGroup>& sub_groups);

/// The scopes of a group whose PodGroup (or the grouper's spec of it) has constraint `root` and
/// subgroups `sub_groups`; `pod_sets` are the job's leaf sets by name ("default" and "" belong to the
/// whole group). `job_key` and the subgroup names make the messages.
ResolvedTopology resolve_job_topology(const model::TopologyConstraint& root,
                                      const std::vector<model::SubGroup>& sub_groups,
                                      const std::vector<std::string>& pod_sets,
                                      const std::vector<TopologyTree>& trees);

}  // namespace kai::core
