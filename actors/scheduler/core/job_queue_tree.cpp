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
  int32_t winner = -1;
  const Best* winner_best = nullptr;
  for (uint32_t child : q.children) {
    const Best* b = best(child);
    if (b == nullptr) continue;
    if (winner < 0 ||
        (ssn_.queue_order_fn &&
         ssn_.queue_order_fn(ssn_.queues[child], ssn_.jobs[b->job], b->request, ssn_.queues[winner],
                             ssn_.jobs[winner_best->job], winner_best->request) < 0)) {
      winner = static_cast<int32_t>(child);
      winner_best = b;
    }
  }
  if (winner_best) cache_[queue] = *winner_best;
  return cache_[queue] ? &*cache_[queue] : nullptr;
}

void JobQueueTree::invalidate_path(uint32_t leaf_queue) {
  for (int32_t q = static_cast<int32_t>(leaf_queue); q != kNoQueue; q = ssn_.queues[q].parent)
    dirty_[q] = true;
}

uint32_t JobQueueTree::pop() {
  int32_t winner = -1;
  const Best* winner_best = nullptr;
  for (uint32_t root : roots_) {
    const Best* b = best(root);
    if (b == nullptr) continue;
    if (winner < 0 ||
        (ssn_.queue_order_fn &&
         ssn_.queue_order_fn(ssn_.queues[root], ssn_.jobs[b->job], b->request, ssn_.queues[winner],
                             ssn_.jobs[winner_best->job], winner_best->request) < 0)) {
      winner = static_cast<int32_t>(root);
      winner_best = b;
    }
  }
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
