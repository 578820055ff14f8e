#include "actors/scheduler/core/job_queue_tree.hpp"

#include <algorithm>

namespace kai::core {

JobQueueTree::JobQueueTree(const Session& ssn, const std::vector<uint32_t>& jobs)
    : ssn_(ssn), heaps_(ssn.queues.size()), cache_(ssn.queues.size()), dirty_(ssn.queues.size(), true) {
  for (uint32_t q = 0; q < ssn.queues.size(); ++q) {
    if (ssn.queues[q].parent == kNoQueue) roots_.push_back(q);
  }
  for (uint32_t j : jobs) {
    const int32_t q = ssn.jobs[j].queue;
    if (q == kNoQueue) continue;
    heaps_[q].push_back(j);
    ++size_;
  }
  auto cmp = [this](uint32_t a, uint32_t b) { return job_first(b, a); };
  for (auto& h : heaps_) std::make_heap(h.begin(), h.end(), cmp);
}

bool JobQueueTree::job_first(uint32_t a, uint32_t b) const {
  return ssn_.job_less(ssn_.jobs[a], ssn_.jobs[b]);
}

bool JobQueueTree::empty() const {
  return size_ == 0;
}

const JobQueueTree::Best* JobQueueTree::best(uint32_t queue) {
  if (!dirty_[queue]) return cache_[queue] ? &*cache_[queue] : nullptr;
  dirty_[queue] = false;
  cache_[queue].reset();
  const QueueInfo& q = ssn_.queues[queue];
  if (q.is_leaf()) {
    if (!heaps_[queue].empty()) {
      const uint32_t j = heaps_[queue].front();
      cache_[queue] = Best{j, ssn_.queue_request_of(ssn_.tasks_to_allocate(ssn_.jobs[j]))};
    }
    return cache_[queue] ? &*cache_[queue] : nullptr;
  }
  if (const Best* winner_best = best_of(q.children)) cache_[queue] = *winner_best;
  return cache_[queue] ? &*cache_[queue] : nullptr;
}

const JobQueueTree::Best* JobQueueTree::best_of(const std::vector<uint32_t>& queues) {
  int32_t winner = -1;
  const Best* winner_best = nullptr;
  for (uint32_t q : queues) {
    const Best* b = best(q);
    if (b == nullptr) continue;
    if (winner < 0 ||
        (ssn_.queue_order_fn &&
         ssn_.queue_order_fn(ssn_.queues[q], ssn_.jobs[b->job], b->request, ssn_.queues[winner],
                             ssn_.jobs[winner_best->job], winner_best->request) < 0)) {
      winner = static_cast<int32_t>(q);
      winner_best = b;
    }
  }
  return winner_best;
}

void JobQueueTree::invalidate_path(uint32_t leaf_queue) {
  for (int32_t q = static_cast<int32_t>(leaf_queue); q != kNoQueue; q = ssn_.queues[q].parent)
    dirty_[q] = true;
}

uint32_t JobQueueTree::pop() {
  const Best* winner_best = best_of(roots_);
  const uint32_t job = winner_best->job;
  const auto leaf = static_cast<uint32_t>(ssn_.jobs[job].queue);
  auto& heap = heaps_[leaf];
  auto cmp = [this](uint32_t a, uint32_t b) { return job_first(b, a); };
  std::pop_heap(heap.begin(), heap.end(), cmp);
  heap.pop_back();
  --size_;
  invalidate_path(leaf);
  return job;
}

void JobQueueTree::push(uint32_t job) {
  const int32_t leaf = ssn_.jobs[job].queue;
  if (leaf == kNoQueue) return;
  auto& heap = heaps_[leaf];
  heap.push_back(job);
  auto cmp = [this](uint32_t a, uint32_t b) { return job_first(b, a); };
  std::push_heap(heap.begin(), heap.end(), cmp);
  ++size_;
  invalidate_path(static_cast<uint32_t>(leaf));
}

}  // namespace kai::core
