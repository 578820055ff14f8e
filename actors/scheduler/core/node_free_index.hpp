#pragma once
// Nodes ordered by (free amount of one resource, node name), kept up to date as the statement places
// and removes tasks. Under binpack this is the order in which the node-order plugins rank nodes for a
// task (placement's score falls as the free amount rises; ties go to the smaller name), so allocate can
// walk it from the first node with enough free instead of scoring every node (actions/allocate.cpp).
// The session keeps four: GPU nodes by free GPUs, GPU nodes with room on a shared device, and CPU
// nodes without and with GPUs by free CPU.

#include <cstdint>
#include <set>
#include <utility>
#include <vector>

#include "actors/scheduler/core/cluster_info.hpp"

namespace kai::core {

/// The nodes' order by name, shared by every index of a session (its nodes never change).
struct NodeNameRanks {
  std::vector<uint32_t> node_by_rank;
  std::vector<uint32_t> rank_of_node;
  void build(const std::vector<NodeInfo>& nodes);
};

class NodeFreeIndex {
 public:
  /// Which nodes an index holds.
  using Filter = bool (*)(const NodeInfo&);
  /// The amount an index orders its nodes by.
  using Free = int64_t (*)(const NodeInfo&);
  /// Indexes the nodes of `nodes` that pass `filter` (both by reference: call update() after a node
  /// changes).
  void build(const std::vector<NodeInfo>& nodes, const NodeNameRanks& ranks, Filter filter, Free free);
  /// Re-reads node `n`.
  void update(uint32_t n);

  using Entry = std::pair<int64_t, uint32_t>;  ///< (free amount, name rank)
  using const_iterator = std::set<Entry>::const_iterator;
  /// Entries with at least `free` free, in ranking order.
  const_iterator lower_bound(int64_t free) const { return set_.lower_bound({free, 0}); }
  const_iterator end() const { return set_.end(); }
  uint32_t node_of(const Entry& e) const { return ranks_->node_by_rank[e.second]; }

 private:
  const std::vector<NodeInfo>* nodes_ = nullptr;
  const NodeNameRanks* ranks_ = nullptr;
  Filter filter_ = nullptr;
  Free free_ = nullptr;
  std::set<Entry> set_;
  std::vector<int64_t> key_;   ///< The free amount each indexed node is filed under.
  std::vector<char> indexed_;  ///< Whether node n is in the set.
};

}  // namespace kai::core
