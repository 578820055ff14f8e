#include "actors/scheduler/core/topology_tree.hpp"

#include <algorithm>
#include <map>

namespace kai::core {

std::optional<int32_t> TopologyTree::level_named(std::string_view name) const {
  for (size_t i = 0; i < levels.size(); ++i) {
    if (levels[i].node_label == name || (!levels[i].alias.empty() && levels[i].alias == name)) {
      return static_cast<int32_t>(i);
    }
  }
  return std::nullopt;
}

namespace {

TopologyTree build_tree(const model::Topology& topology, const std::vector<NodeInfo>& nodes) {
  TopologyTree tree;
  tree.name = topology.meta.name;
  tree.levels = topology.levels;
  const size_t depth = tree.levels.size();
  tree.domains.push_back(TopologyDomain{"root", kRootLevel, -1, 0, {}, {}});
  tree.by_level.assign(depth, {});
  tree.node_domain.assign(depth, std::vector<int32_t>(nodes.size(), -1));
  // By level: id -> domain index; ordered, so that children and levels come out by id.
  std::vector<std::map<std::string, uint32_t>> ids(depth);
  std::vector<const std::string*> values(depth);
  for (uint32_t n = 0; n < nodes.size(); ++n) {
    if (nodes[n].object == nullptr || depth == 0) continue;
    const model::StringMap& labels = nodes[n].object->meta.labels;
    bool complete = true;
    for (size_t i = 0; i < depth && complete; ++i) {
      auto it = labels.find(tree.levels[i].node_label);
      complete = it != labels.end();
      values[i] = complete ? &it->second : nullptr;
    }
    if (!complete) continue;
    tree.domains[0].nodes.push_back(n);
    std::string id;
    uint32_t parent = 0;
    for (size_t i = 0; i < depth; ++i) {
      if (i > 0) id += '.';
      id += *values[i];
      auto [it, added] = ids[i].try_emplace(id, static_cast<uint32_t>(tree.domains.size()));
      if (added) {
        tree.domains.push_back(TopologyDomain{id, static_cast<int32_t>(i), static_cast<int32_t>(parent), 0, {}, {}});
      }
      const uint32_t d = it->second;
      tree.domains[d].nodes.push_back(n);
      tree.node_domain[i][n] = static_cast<int32_t>(d);
      parent = d;
    }
  }
  // Children and levels by id (the maps' order), so that every tie below breaks on the id as KAI's does.
  for (size_t i = 0; i < depth; ++i) {
    for (const auto& [id, d] : ids[i]) {
      tree.domains[d].level_index = static_cast<uint32_t>(tree.by_level[i].size());
      tree.by_level[i].push_back(d);
      tree.domains[static_cast<size_t>(tree.domains[d].parent)].children.push_back(d);
    }
  }
  return tree;
}

}  // namespace

std::vector<TopologyTree> build_topology_trees(const std::vector<const model::Topology*>& topologies,
                                               const std::vector<NodeInfo>& nodes) {
  std::vector<TopologyTree> trees;
  trees.reserve(topologies.size());
  for (const model::Topology* t : topologies) trees.push_back(build_tree(*t, nodes));
  return trees;
}

}  // namespace kai::core
