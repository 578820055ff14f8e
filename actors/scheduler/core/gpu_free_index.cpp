#include "actors/scheduler/core/gpu_free_index.hpp"

#include <algorithm>
#include <numeric>

namespace kai::core {

void GpuFreeIndex::build(const std::vector<NodeInfo>& nodes, Filter filter) {
  nodes_ = &nodes;
  filter_ = filter;
  set_.clear();
  node_by_rank_.resize(nodes.size());
  std::iota(node_by_rank_.begin(), node_by_rank_.end(), 0);
  std::sort(node_by_rank_.begin(), node_by_rank_.end(),
            [&](uint32_t a, uint32_t b) { return nodes[a].name < nodes[b].name; });
  rank_of_node_.assign(nodes.size(), 0);
  for (uint32_t r = 0; r < node_by_rank_.size(); ++r) rank_of_node_[node_by_rank_[r]] = r;
  key_.assign(nodes.size(), -1);
  for (uint32_t n = 0; n < nodes.size(); ++n) update(n);
}

void GpuFreeIndex::update(uint32_t n) {
  if (nodes_ == nullptr || n >= key_.size()) return;
  const NodeInfo& node = (*nodes_)[n];
  if (key_[n] >= 0) set_.erase({key_[n], rank_of_node_[n]});
  key_[n] = -1;
  if (!filter_(node)) return;
  key_[n] = std::max<int64_t>(0, node.non_allocated_gpu_milli());
  set_.insert({key_[n], rank_of_node_[n]});
}

}  // namespace kai::core
