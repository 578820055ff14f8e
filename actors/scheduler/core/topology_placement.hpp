#pragma once
// Topology-aware placement of a job's tasks, as KAI's topology plugin and its AllocateJob do
// (docs/topology.md "Placement"): each scope with a constraint picks, among the domains of its
// levels that can hold all of its tasks, the fullest one first (bin-packing) and tries its nodes,
// the next one when the tasks do not all fit; inside a domain the preferred level's sub-domains with
// the most free resources rank first, so the gang concentrates. Nested scopes choose inside the
// domain their parent chose.

#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "actors/scheduler/core/session.hpp"
#include "actors/scheduler/core/statement.hpp"
#include "actors/scheduler/core/topology_scopes.hpp"

namespace kai::core {

/// The topology plugin's score step; ours are KAI's node-order weights divided by ten (KAI: 100,000),
/// above every plugin but the nominated node.
inline constexpr double kTopologyScore = 10'000;

/// What KAI's topology plugin offers a scope's `tasks`: the node sets to try in order (each inside
/// one domain), the preferred level's scores for their nodes, and, when no set is offered, why.
struct DomainSets {
  std::vector<std::vector<uint32_t>> node_sets;
  std::unordered_map<uint32_t, double> scores;
  std::vector<std::string> errors;
};

/// The node sets for `tasks` of `job` under `scope`'s constraint, within `within` (null: every node);
/// `running` are the scope's tasks already placed, whose required domains bind the new ones. An
/// unconstrained scope offers `within` itself (every node when null).
DomainSets topology_node_sets(const Session& ssn, const JobInfo& job, const TopologyScope& scope,
                              std::span<const uint32_t> tasks, std::span<const uint32_t> running,
                              const std::vector<uint32_t>* within);

/// Places `tasks` of job `job` (which has topology scopes) scope by scope, pipelined when
/// `pipeline_only`, each task never on its node in `excluded` (by task; consolidation's moved
/// victims). On failure the statement is back where it was and `why` (when not null) holds the reasons.
bool place_with_topology(Session& ssn, Statement& stmt, uint32_t job, const std::vector<uint32_t>& tasks,
                         bool pipeline_only, std::vector<FitReason>* why,
                         const std::unordered_map<uint32_t, int32_t>* excluded = nullptr);

}  // namespace kai::core
