#include "actors/scheduler/core/actions/eviction_common.hpp"

#include <algorithm>

#include "actors/scheduler/core/grouping.hpp"
#include "actors/scheduler/core/preemption_delay.hpp"
#include "actors/scheduler/core/queue_sums.hpp"

namespace kai::core {

EvictionCache& eviction_cache(Session& ssn) {
  if (!ssn.eviction_cache || ssn.eviction_cache->taken_at_decision != ssn.decisions.size()) {
    ssn.eviction_cache = std::make_shared<EvictionCache>();
    ssn.eviction_cache->taken_at_decision = ssn.decisions.size();
  }
  return *ssn.eviction_cache;
}

namespace {

bool every_pod_set_alive(const Session& ssn, const JobInfo& job) {
  for (const auto& ps : job.pod_sets) {
    int32_t alive = 0;
    for (uint32_t t : ps.tasks)
      alive += is_alive(ssn.tasks[t].status) && ssn.tasks[t].status != PodStatus::kGated;
    if (alive < ps.min_available) return false;
  }
  return true;
}

JobCensus take_census(const Session& ssn) {
  JobCensus c;
  c.running_preemptible.resize(ssn.queues.size());
  c.lowest_victim_priority.resize(ssn.queues.size());
  c.first_victim_job.assign(ssn.queues.size(), -1);
  for (uint32_t j = 0; j < ssn.jobs.size(); ++j) {
    const JobInfo& job = ssn.jobs[j];
    if (job.queue == kNoQueue) continue;
    const auto q = static_cast<size_t>(job.queue);
    if (job.preemptible && ssn.active_allocated_count(job) > 0) {
      c.running_preemptible[q].push_back(j);
      std::optional<int32_t>& lowest = c.lowest_victim_priority[q];
      lowest = std::min(lowest.value_or(job.priority), job.priority);
      // Stable order: a later job goes first only when it is strictly "scheduled later".
      int64_t& first = c.first_victim_job[q];
      if (first < 0 || ssn.job_less(ssn.jobs[first], job)) first = j;
    }
    if (job.invalid.empty() && ssn.has_pending_tasks(job) && every_pod_set_alive(ssn, job))
      c.ready_pending.push_back(j);
  }
  return c;
}

}  // namespace

const JobCensus& job_census(Session& ssn) {
  EvictionCache& cache = eviction_cache(ssn);
  if (!cache.census) cache.census = take_census(ssn);
  return *cache.census;
}

std::vector<uint32_t> pending_jobs(Session& ssn, bool preemptible_only) {
  std::vector<uint32_t> out;
  for (uint32_t j : job_census(ssn).ready_pending) {
    if (preemptible_only && !ssn.jobs[j].preemptible) continue;
    // Last, as KAI's job filter has it: a group within its preemption delay may still be placed into
    // free capacity (allocate) but triggers no eviction, and says so.
    if (within_preemption_delay(ssn.jobs[j], ssn.now_ms())) {
      record_preemption_delay(ssn.jobs[j]);
      continue;
    }
    out.push_back(j);
  }
  return out;
}

namespace {

/// Victim order (docs/kai-compatibility.md "Job and queue order", both comparisons reversed): the most over-served queue first (over its fair
/// share in every resource, then lower queue priority, then the larger share of its fair share in use),
/// and within it the job that would be scheduled last (lower priority, then newer). As in KAI, a queue's
/// standing is re-evaluated with the victims already taken from it removed, so victims alternate
/// between equally over-served queues.
std::vector<uint32_t> order_victims(const Session& ssn, const std::vector<std::vector<uint32_t>>& by_queue,
                                    size_t limit) {
  using Field = double QueueQuantities::*;
  constexpr Field kFields[] = {&QueueQuantities::gpu, &QueueQuantities::cpu, &QueueQuantities::memory};
  struct QueueState {
    std::vector<uint32_t> jobs;  // in reverse job order, copied once the queue gives a victim
    size_t next = 0;
    QueueQuantities allocated;
    bool over = false;  // cached from allocated
    double usage = 0;   // cached from allocated
  };
  std::vector<QueueState> state(ssn.queues.size());
  auto refresh = [&](int32_t q) {
    QueueState& st = state[q];
    const QueueInfo& info = ssn.queues[q];
    st.over = true;
    st.usage = 0;
    for (Field r : kFields) {
      const double fs = info.fair_share.*r, a = st.allocated.*r;
      st.over = st.over && fs < a;
      st.usage = std::max(st.usage, fs > 0 ? a / fs : (a > 0 ? 1e12 : 0));
    }
  };
  std::vector<char> sorted(state.size(), 0);  // a queue's jobs are sorted when it first gives a victim
  for (int32_t q = 0; q < static_cast<int32_t>(state.size()); ++q) {
    if (by_queue[q].empty()) continue;
    state[q].allocated = ssn.queues[q].allocated;
    refresh(q);
  }
  auto first = [&](int32_t a, int32_t b) {  // does queue a give its next victim before queue b?
    const QueueInfo &qa = ssn.queues[a], &qb = ssn.queues[b];
    const QueueState &sa = state[a], &sb = state[b];
    if (sa.over != sb.over) return sa.over;
    if (qa.priority != qb.priority) return qa.priority < qb.priority;
    if (sa.usage != sb.usage) return sa.usage > sb.usage;
    if (qa.creation != qb.creation) return qa.creation > qb.creation;
    return qa.name > qb.name;
  };
  // Queues ordered by `first`; a queue is taken out before its state changes and put back after.
  auto cmp = [&](int32_t a, int32_t b) { return first(a, b); };
  std::set<int32_t, decltype(cmp)> ready(cmp);
  for (int32_t q = 0; q < static_cast<int32_t>(state.size()); ++q) {
    if (!by_queue[q].empty()) ready.insert(q);
  }
  std::vector<uint32_t> jobs;
  while (!ready.empty() && jobs.size() < limit) {
    const int32_t best = *ready.begin();
    ready.erase(ready.begin());
    QueueState& st = state[best];
    if (!sorted[best]) {
      st.jobs = by_queue[best];
      std::stable_sort(st.jobs.begin(), st.jobs.end(),
                       [&](uint32_t a, uint32_t b) { return ssn.job_less(ssn.jobs[b], ssn.jobs[a]); });
      sorted[best] = 1;
    }
    const uint32_t j = st.jobs[st.next++];
    jobs.push_back(j);
    for (uint32_t t : ssn.jobs[j].tasks) {
      if (!is_active_allocated(ssn.tasks[t].status)) continue;
      add_queue_quantities(st.allocated, ssn.allocated_quantities(ssn.tasks[t]), -1);
    }
    refresh(best);
    if (st.next < st.jobs.size()) ready.insert(best);
  }
  return jobs;
}

bool victim_allowed(const Session& ssn, const std::string& action, const JobInfo& preemptor,
                    const JobInfo& victim, bool core) {
  for (const auto& fn : ssn.victim_filter_fns) {
    if (!fn(action, preemptor, victim, core)) return false;
  }
  return true;
}

VictimPool build_victim_pool(const Session& ssn, const JobCensus& census, size_t limit) {
  const std::vector<uint32_t> victims = order_victims(ssn, census.running_preemptible, limit);
  VictimPool pool;
  pool.by_queue.resize(ssn.queues.size());
  for (uint32_t v : victims) {
    for (auto& e : victim_entries(ssn, v)) {
      pool.by_queue[ssn.jobs[v].queue].push_back(static_cast<uint32_t>(pool.entries.size()));
      pool.entries.push_back(std::move(e));
    }
  }
  return pool;
}

}  // namespace

std::shared_ptr<const VictimPool> victim_pool(Session& ssn, size_t limit) {
  const JobCensus& census = job_census(ssn);
  std::shared_ptr<const VictimPool>& pool = ssn.eviction_cache->pool;
  if (!pool || pool->limit < limit) {
    auto built = std::make_shared<VictimPool>(build_victim_pool(ssn, census, limit));
    built->limit = limit;
    pool = std::move(built);
  }
  return pool;
}

std::vector<std::optional<VictimEntry>> first_victim_entries(Session& ssn, bool& exact) {
  exact = true;
  const std::vector<int64_t>& best = job_census(ssn).first_victim_job;
  std::vector<std::optional<VictimEntry>> out(ssn.queues.size());
  for (size_t q = 0; q < best.size(); ++q) {
    if (best[q] < 0) continue;
    auto entries = victim_entries(ssn, static_cast<uint32_t>(best[q]));
    if (entries.empty()) {
      exact = false;
      continue;
    }
    out[q] = std::move(entries.front());
  }
  return out;
}

bool take_entry(const Session& ssn, const std::string& action, const JobInfo& preemptor, const VictimEntry& e,
                std::vector<const VictimEntry*>& out, std::set<uint32_t>& jobs, int32_t max_jobs) {
  const JobInfo& victim = ssn.jobs[e.job];
  if (&victim == &preemptor || !victim_allowed(ssn, action, preemptor, victim, e.core)) return true;
  if (max_jobs >= 0 && !jobs.count(e.job)) {
    if (static_cast<int32_t>(jobs.size()) >= max_jobs) return false;
    jobs.insert(e.job);
  }
  out.push_back(&e);
  return true;
}

}  // namespace kai::core
