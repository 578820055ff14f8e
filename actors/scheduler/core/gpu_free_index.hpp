#pragma once
// GPU nodes ordered by (free GPUs, node name), kept up to date as the statement places and removes
// tasks. With GPU binpack this is exactly the order in which the node-order plugins rank nodes for a
// whole-GPU task (placement score falls as free GPUs rise; ties go to the smaller name), so allocate can
// walk it from the first node with enough free GPUs instead of scoring every node.

#include <cstdint>
#include <set>
#include <utility>
#include <vector>

#include "actors/scheduler/core/cluster_info.hpp"

namespace kai::core {

class GpuFreeIndex {
 public:
  /// Which nodes an index holds.
  using Filter = bool (*)(const NodeInfo&);
  /// Indexes the nodes of `nodes` that pass `filter` (by reference: call update() after a node changes).
  void build(const std::vector<NodeInfo>& nodes, Filter filter);
  /// Re-reads the free GPUs of node `n`.
  void update(uint32_t n);

  using Entry = std::pair<int64_t, uint32_t>;  ///< (free milli-GPUs, name rank)
  /// Entries with at least `free_milli` free GPUs, in ranking order.
  std::set<Entry>::const_iterator lower_bound(int64_t free_milli) const {
    return set_.lower_bound({free_milli, 0});
  }
  std::set<Entry>::const_iterator end() const { return set_.end(); }
  uint32_t node_of(const Entry& e) const { return node_by_rank_[e.second]; }

 private:
  const std::vector<NodeInfo>* nodes_ = nullptr;
  Filter filter_ = nullptr;
  std::set<Entry> set_;
  std::vector<uint32_t> rank_of_node_;
  std::vector<uint32_t> node_by_rank_;
  std::vector<int64_t> key_;  ///< Current free value per node; -1 = not indexed.
};

}  // namespace kai::core
