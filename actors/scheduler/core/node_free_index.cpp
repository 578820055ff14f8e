#include "actors/scheduler/core/node_free_index.hpp"

#include <algorithm>
#include <numeric>

namespace kai::core {

void NodeNameRanks::build(const std::vector<NodeInfo>& nodes) {
  node_by_rank.resize(nodes.size());
  std::iota(node_by_rank.begin(), node_by_rank.end(), 0);
  std::sort(node_by_rank.begin(), node_by_rank.end(),
            [&](uint32_t a, uint32_t b) { return nodes[a].name < nodes[b].name; });
  rank_of_node.assign(nodes.size(), 0);
  for (uint32_t r = 0; r < node_by_rank.size(); ++r) rank_of_node[node_by_rank[r]] = r;
}

void NodeFreeIndex::build(const std::vector<NodeInfo>& nodes, const NodeNameRanks& ranks, Filter filter,
                          Free free) {
  nodes_ = &nodes;
  ranks_ = &ranks;
  filter_ = filter;
  free_ = free;
  set_.clear();
  key_.assign(nodes.size(), 0);
  indexed_.assign(nodes.size(), 0);
  for (uint32_t n = 0; n < nodes.size(); ++n) update(n);
}

void NodeFreeIndex::update(uint32_t n) {
  if (nodes_ == nullptr || n >= key_.size()) return;
  const NodeInfo& node = (*nodes_)[n];
  const bool keep = filter_(node);
  const int64_t key = keep ? free_(node) : 0;
  // Most changes leave most indexes as they were (a CPU-only task moves no GPU): nothing to move then.
  if ((indexed_[n] != 0) == keep && (!keep || key_[n] == key)) return;
  if (indexed_[n]) set_.erase({key_[n], ranks_->rank_of_node[n]});
  indexed_[n] = keep ? 1 : 0;
  key_[n] = key;
  if (keep) set_.insert({key, ranks_->rank_of_node[n]});
}

}  // namespace kai::core
