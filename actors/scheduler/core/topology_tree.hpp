#pragma once
// KAI's topology trees (docs/topology.md "Domains"): for each Topology object, the domains its levels
// cut the session's nodes into. A domain at level i is named by the node label values of levels 0..i
// joined with "." (zone-a.rack-2), so that two racks of the same name in two zones stay apart; the
// root holds every node of the topology. A node lacking any level's label is not in the topology.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "actors/scheduler/core/cluster_info.hpp"
#include "k8s/model/objects.hpp"

namespace kai::core {

/// The root's level: the whole cluster (KAI's "root" domain).
inline constexpr int32_t kRootLevel = -1;

struct TopologyDomain {
  std::string id;               ///< Joined label values; "root" for the root.
  int32_t level = kRootLevel;   ///< Index into the Topology's levels, widest first.
  int32_t parent = -1;          ///< Index into TopologyTree::domains; -1 for the root.
  uint32_t level_index = 0;     ///< Its position in TopologyTree::by_level[level] (0 for the root).
  std::vector<uint32_t> children;  ///< Domain indexes, by id.
  std::vector<uint32_t> nodes;     ///< Every node of the subtree, by session node id, ascending.
};

struct TopologyTree {
  std::string name;
  std::vector<model::TopologyLevel> levels;
  std::vector<TopologyDomain> domains;  ///< [0] is the root; parents before their children.
  /// The domains of each level, by id.
  std::vector<std::vector<uint32_t>> by_level;
  /// By level, then session node id: the node's domain at that level, -1 when the node is not in
  /// the topology.
  std::vector<std::vector<int32_t>> node_domain;

  /// The level a constraint names, by nodeLabel or alias; nullopt when the topology has none such.
  std::optional<int32_t> level_named(std::string_view name) const;
  /// Whether session node `n` has every level's label.
  bool contains(uint32_t n) const { return levels.empty() ? false : node_domain.back()[n] >= 0; }
  /// The domain of node `n` (in the topology) at `level`; the root at kRootLevel.
  uint32_t domain_of(uint32_t n, int32_t level) const {
    return level == kRootLevel ? 0u : static_cast<uint32_t>(node_domain[static_cast<size_t>(level)][n]);
  }
  /// How a level reads in a message: its nodeLabel, or "root".
  std::string level_label(int32_t level) const {
    return level == kRootLevel ? std::string("root") : levels[static_cast<size_t>(level)].node_label;
  }
};

/// One tree per Topology object, in the objects' order, from the nodes' labels. Deterministic.
std::vector<TopologyTree> build_topology_trees(const std::vector<const model::Topology*>& topologies,
                                               const std::vector<NodeInfo>& nodes);

}  // namespace kai::core
