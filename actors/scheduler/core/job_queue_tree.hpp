#pragma once
// Jobs ordered by the queue hierarchy (as KAI's allocate orders them; docs/kai-compatibility.md): leaves hold jobs in
// job order; each level picks the child queue whose best pending job wins the queue order. The best
// job of every subtree is cached and recomputed only along the path of a popped or pushed job, because
// a queue's order depends only on its own subtree.

#include <cstdint>
#include <optional>
#include <vector>

#include "actors/scheduler/core/session.hpp"

namespace kai::core {

class JobQueueTree {
 public:
  /// Builds the tree over `jobs` (ids into ssn.jobs); jobs without a queue are left out.
  JobQueueTree(const Session& ssn, const std::vector<uint32_t>& jobs);

  bool empty() const;
  /// Removes and returns the next job to try.
  uint32_t pop();
  /// Puts a job back (e.g. an elastic job after it grew by one pod).
  void push(uint32_t job);

 private:
  struct Best {
    uint32_t job;
    QueueQuantities request;
  };
  const Best* best(uint32_t queue);
  /// The best of `queues`' bests in queue order (the queue-order function), or null when none has one.
  const Best* best_of(const std::vector<uint32_t>& queues);
  void invalidate_path(uint32_t leaf_queue);
  bool job_first(uint32_t a, uint32_t b) const;  // heap order helper

  const Session& ssn_;
  std::vector<std::vector<uint32_t>> heaps_;  ///< Per queue (only leaves hold jobs).
  std::vector<std::optional<Best>> cache_;
  std::vector<bool> dirty_;
  std::vector<uint32_t> roots_;
  size_t size_ = 0;
};

}  // namespace kai::core
