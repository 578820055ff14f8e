#include "actors/scheduler/core/eviction.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "actors/scheduler/core/allocate.hpp"
#include "actors/scheduler/core/grouping.hpp"
#include "actors/scheduler/core/job_queue_tree.hpp"
#include "actors/scheduler/core/node_fit.hpp"
#include "k8s/model/time.hpp"

namespace kai::core {
namespace {

/// Copies of `req` that fit `avail` (cpu, memory, pods and whole GPUs), an upper bound used to skip
/// scenarios that cannot work before simulating them.
int64_t copies_fitting(const Resources& req, const NodeInfo& n) {
  int64_t copies = INT64_MAX;
  auto limit = [&](int64_t need, int64_t have) {
    if (need > 0) copies = std::min(copies, std::max<int64_t>(0, have) / need);
  };
  limit(req.milli_cpu, n.idle.milli_cpu + n.releasing.milli_cpu);
  limit(req.memory, n.idle.memory + n.releasing.memory);
  limit(req.milli_gpu, n.idle.milli_gpu + n.releasing.milli_gpu);
  limit(req.pods, n.idle.pods + n.releasing.pods);
  return copies == INT64_MAX ? 1'000'000 : copies;
}

/// Tracks, node by node, how many of the preemptor's tasks could fit if the victims evicted so far
/// were gone; simulation runs only once the total reaches the number of tasks.
class RoomTracker {
 public:
  RoomTracker(Session& ssn, const std::vector<uint32_t>& tasks) : ssn_(ssn), need_(tasks.size()) {
    // The smallest request per resource: the bound must never rule out a feasible scenario.
    bool first = true;
    for (uint32_t t : tasks) {
      const Resources& r = ssn.tasks[t].req;
      if (first) {
        min_req_ = r;
        min_req_.scalars.clear();
        first = false;
      } else {
        min_req_.milli_cpu = std::min(min_req_.milli_cpu, r.milli_cpu);
        min_req_.memory = std::min(min_req_.memory, r.memory);
        min_req_.milli_gpu = std::min(min_req_.milli_gpu, r.milli_gpu);
        min_req_.pods = std::min(min_req_.pods, r.pods);
      }
    }
    const std::vector<char>& mask = ssn.static_fit_mask(ssn.tasks[tasks.front()]);
    mask_ = &mask;
    room_.assign(ssn.nodes.size(), 0);
    for (uint32_t n = 0; n < ssn.nodes.size(); ++n) {
      if (mask[n]) room_[n] = copies_fitting(min_req_, ssn.nodes[n]);
      total_ += room_[n];
    }
  }
  void node_changed(int32_t n) {
    if (n == kNoNode || !(*mask_)[n]) return;
    total_ -= room_[n];
    room_[n] = copies_fitting(min_req_, ssn_.nodes[n]);
    total_ += room_[n];
  }
  bool maybe_enough() const { return total_ >= static_cast<int64_t>(need_); }

 private:
  Session& ssn_;
  size_t need_;
  Resources min_req_;
  const std::vector<char>* mask_ = nullptr;
  std::vector<int64_t> room_;
  int64_t total_ = 0;
};

bool place_all(Session& ssn, Statement& stmt, const std::vector<uint32_t>& tasks) {
  for (uint32_t t : tasks) {
    if (!place_task(ssn, stmt, t, true)) return false;
  }
  return true;
}

/// Places a stand-in for every evicted pod elsewhere (pipelined), as consolidation requires. A whole-GPU
/// pod moved within its node frees nothing there, so it must leave the node; a shared-GPU pod frees
/// its device by joining another GPU group, which may be on the same node (place_task keeps a ghost out
/// of the groups its pod leaves).
bool move_victims(Session& ssn, Statement& stmt, const std::vector<uint32_t>& victims) {
  for (uint32_t v : victims) {
    const int32_t excluded = ssn.tasks[v].gpu.is_shared() ? kNoNode : ssn.tasks[v].node;
    const uint32_t ghost = ssn.add_ghost(v);
    if (!place_task(ssn, stmt, ghost, true, excluded)) return false;
  }
  return true;
}

}  // namespace

std::vector<VictimEntry> victim_entries(const Session& ssn, uint32_t job_id) {
  const JobInfo& job = ssn.jobs[job_id];
  std::vector<VictimEntry> out;
  if (job.tasks.size() == 1 && job.pod_sets.size() == 1) {  // the common single-pod workload
    if (is_active_allocated(ssn.tasks[job.tasks.front()].status))
      out.push_back(VictimEntry{job_id, job.tasks, true});
    return out;
  }
  VictimEntry core{job_id, {}, true};
  for (const auto& ps : job.pod_sets) {
    std::vector<uint32_t> active;
    for (uint32_t t : ps.tasks) {
      if (is_active_allocated(ssn.tasks[t].status)) active.push_back(t);
    }
    // Reverse task order: the pods the job would place last leave first.
    std::sort(active.begin(), active.end(),
              [&](uint32_t a, uint32_t b) { return ssn.task_less(ssn.tasks[b], ssn.tasks[a]); });
    const size_t extras = active.size() > static_cast<size_t>(ps.min_available)
                              ? active.size() - static_cast<size_t>(ps.min_available)
                              : 0;
    for (size_t i = 0; i < active.size(); ++i) {
      if (i < extras) {
        out.push_back(VictimEntry{job_id, {active[i]}, false});
      } else {
        core.tasks.push_back(active[i]);
      }
    }
  }
  if (!core.tasks.empty()) out.push_back(std::move(core));
  return out;
}

bool solve_with_victims(Session& ssn, Statement& stmt, uint32_t preemptor,
                        const std::vector<const VictimEntry*>& entries, const SolverOptions& options) {
  const std::vector<uint32_t> tasks = ssn.tasks_to_allocate(ssn.jobs[preemptor]);
  if (tasks.empty() || entries.empty()) return false;
  const std::string by = ssn.jobs[preemptor].key;
  const auto start = stmt.checkpoint();
  RoomTracker room(ssn, tasks);

  auto evict_entries = [&](const std::vector<size_t>& chosen, std::vector<uint32_t>& evicted) {
    for (size_t e : chosen) {
      const VictimEntry& entry = *entries[e];
      for (uint32_t t : entry.tasks) {
        if (!is_active_allocated(ssn.tasks[t].status)) continue;  // already taken by an earlier preemptor
        const int32_t node = ssn.tasks[t].node;
        stmt.evict(t, options.message ? options.message(ssn.jobs[entry.job]) : std::string(), by);
        evicted.push_back(t);
        room.node_changed(node);
      }
    }
  };
  // Evicts `chosen`, then tries to place the preemptor (and move the victims); true = committed-ready.
  auto try_scenario = [&](const std::vector<size_t>& chosen) {
    stmt.rollback(start);
    std::vector<uint32_t> evicted;
    evict_entries(chosen, evicted);
    if (place_all(ssn, stmt, tasks) && (!options.victims_must_move || move_victims(ssn, stmt, evicted)) &&
        (!options.validate || options.validate(evicted))) {
      return true;
    }
    stmt.rollback(start);
    return false;
  };

  std::vector<size_t> chosen;
  std::vector<uint32_t> evicted;
  std::set<uint32_t> victim_jobs;
  size_t next_attempt = 0;
  for (size_t e = 0; e < entries.size(); ++e) {
    const uint32_t job = entries[e]->job;
    if (options.max_victim_jobs >= 0 && !victim_jobs.count(job) &&
        static_cast<int32_t>(victim_jobs.size()) >= options.max_victim_jobs) {
      continue;
    }
    victim_jobs.insert(job);
    chosen.push_back(e);
    evict_entries({e}, evicted);
    if (!room.maybe_enough()) continue;
    // Simulating after every victim costs O(victims^2): once room suffices, try at doubling victim
    // counts and with the last entry. The prune step below then keeps only victims that were needed.
    if (chosen.size() < next_attempt && e + 1 < entries.size()) continue;
    next_attempt = chosen.size() * 2;
    const auto cp = stmt.checkpoint();
    const bool placed = place_all(ssn, stmt, tasks) &&
                        (!options.victims_must_move || move_victims(ssn, stmt, evicted)) &&
                        (!options.validate || options.validate(evicted));
    if (!placed) {
      stmt.rollback(cp);
      continue;
    }
    // Keep only the victims on nodes the preemptor now uses: the others were not needed.
    std::set<int32_t> used;
    for (uint32_t t : tasks) used.insert(ssn.tasks[t].node);
    std::vector<size_t> needed;
    for (size_t c : chosen) {
      for (uint32_t t : entries[c]->tasks) {
        if (used.count(ssn.tasks[t].node)) {
          needed.push_back(c);
          break;
        }
      }
    }
    if (needed.size() == chosen.size() || try_scenario(needed)) return true;
    return try_scenario(chosen);
  }
  stmt.rollback(start);
  return false;
}

namespace {

/// Jobs that can be scheduled by an eviction action: valid, ready, with pending pods.
std::vector<uint32_t> pending_jobs(Session& ssn, bool preemptible_only) {
  std::vector<uint32_t> out;
  for (uint32_t j = 0; j < ssn.jobs.size(); ++j) {
    const JobInfo& job = ssn.jobs[j];
    if (!job.invalid.empty() || job.queue == kNoQueue || !ssn.has_pending_tasks(job)) continue;
    if (preemptible_only && !job.preemptible) continue;
    bool ready = true;
    for (const auto& ps : job.pod_sets) {
      int32_t alive = 0;
      for (uint32_t t : ps.tasks)
        alive += is_alive(ssn.tasks[t].status) && ssn.tasks[t].status != PodStatus::kGated;
      ready = ready && alive >= ps.min_available;
    }
    if (ready) out.push_back(j);
  }
  return out;
}

/// Preemptible jobs with pods on nodes: the possible victims of every eviction action.
std::vector<uint32_t> running_preemptible_jobs(const Session& ssn) {
  std::vector<uint32_t> out;
  for (uint32_t j = 0; j < ssn.jobs.size(); ++j) {
    const JobInfo& job = ssn.jobs[j];
    if (job.preemptible && job.queue != kNoQueue && ssn.active_allocated_count(job) > 0) out.push_back(j);
  }
  return out;
}

/// Victim order (§4.4, both comparisons reversed): the most over-served queue first (over its fair
/// share in every resource, then lower queue priority, then the larger share of its fair share in use),
/// and within it the job that would be scheduled last (lower priority, then newer). As in KAI, a queue's
/// standing is re-evaluated with the victims already taken from it removed, so victims alternate
/// between equally over-served queues.
void order_victims(const Session& ssn, std::vector<uint32_t>& jobs, size_t limit) {
  using Field = double QueueQuantities::*;
  constexpr Field kFields[] = {&QueueQuantities::gpu, &QueueQuantities::cpu, &QueueQuantities::memory};
  struct QueueState {
    std::vector<uint32_t> jobs;  // in reverse job order
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
  for (uint32_t j : jobs) state[ssn.jobs[j].queue].jobs.push_back(j);
  std::vector<char> sorted(state.size(), 0);  // a queue's jobs are sorted when it first gives a victim
  for (int32_t q = 0; q < static_cast<int32_t>(state.size()); ++q) {
    if (state[q].jobs.empty()) continue;
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
    if (!state[q].jobs.empty()) ready.insert(q);
  }
  jobs.clear();
  while (!ready.empty() && jobs.size() < limit) {
    const int32_t best = *ready.begin();
    ready.erase(ready.begin());
    QueueState& st = state[best];
    if (!sorted[best]) {
      std::stable_sort(st.jobs.begin(), st.jobs.end(),
                       [&](uint32_t a, uint32_t b) { return ssn.job_less(ssn.jobs[b], ssn.jobs[a]); });
      sorted[best] = 1;
    }
    const uint32_t j = st.jobs[st.next++];
    jobs.push_back(j);
    for (uint32_t t : ssn.jobs[j].tasks) {
      if (!is_active_allocated(ssn.tasks[t].status)) continue;
      const QueueQuantities q = ssn.allocated_quantities(ssn.tasks[t]);
      for (Field r : kFields) st.allocated.*r -= q.*r;
    }
    refresh(best);
    if (st.next < st.jobs.size()) ready.insert(best);
  }
}

bool victim_allowed(const Session& ssn, const std::string& action, const JobInfo& preemptor,
                    const JobInfo& victim, bool core) {
  for (const auto& fn : ssn.victim_filter_fns) {
    if (!fn(action, preemptor, victim, core)) return false;
  }
  return true;
}

VictimPool build_victim_pool(const Session& ssn, size_t limit);

/// The session's victim pool (the first `limit` victim jobs in victim order), rebuilt only when
/// something was committed since it was last built: the eviction actions run back to back and usually
/// decide nothing at steady state.
const VictimPool& victim_pool(Session& ssn, size_t limit = SIZE_MAX) {
  if (ssn.victim_pool && ssn.victim_pool->built_at_decision == ssn.decisions.size() &&
      ssn.victim_pool->limit >= limit) {
    return *ssn.victim_pool;
  }
  ssn.victim_pool = std::make_shared<VictimPool>(build_victim_pool(ssn, limit));
  ssn.victim_pool->built_at_decision = ssn.decisions.size();
  ssn.victim_pool->limit = limit;
  return *ssn.victim_pool;
}

VictimPool build_victim_pool(const Session& ssn, size_t limit) {
  std::vector<uint32_t> victims = running_preemptible_jobs(ssn);
  order_victims(ssn, victims, limit);
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

/// Each queue's first victim entry, as victim_pool(ssn).by_queue[q].front() would give it, without
/// ordering every victim: within a queue the order is the jobs sorted by reversed job order, so the
/// first is a maximum found in one pass. nullopt for a queue without victims; `exact` is cleared when a
/// queue's first job has no entry (then only the full pool knows).
std::vector<std::optional<VictimEntry>> first_victim_entries(const Session& ssn, bool& exact) {
  exact = true;
  std::vector<int64_t> best(ssn.queues.size(), -1);
  for (uint32_t j : running_preemptible_jobs(ssn)) {
    int64_t& b = best[ssn.jobs[j].queue];
    // Stable order: a later job goes first only when it is strictly "scheduled later".
    if (b < 0 || ssn.job_less(ssn.jobs[b], ssn.jobs[j])) b = j;
  }
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

/// Adds `e` when the victim filters allow it for `preemptor`; false once `max_jobs` victim jobs are in.
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

/// Runs `attempt` for each preemptor in queue order, once each, committing successes.
template <class Attempt>
void for_each_preemptor(Session& ssn, const std::string& action, const std::vector<uint32_t>& preemptors,
                        Attempt attempt) {
  JobQueueTree tree(ssn, preemptors);
  while (!tree.empty()) {
    const uint32_t j = tree.pop();
    Statement stmt(ssn);
    if (attempt(j, stmt)) {
      stmt.commit(action, ssn.jobs[j].key);
    } else {
      stmt.discard();
    }
  }
}

}  // namespace

void ReclaimAction::execute(Session& ssn) {
  std::vector<uint32_t> reclaimers;
  for (uint32_t j : pending_jobs(ssn, false)) {
    const QueueQuantities request = ssn.queue_request_of(ssn.tasks_to_allocate(ssn.jobs[j]));
    bool ok = true;
    for (const auto& fn : ssn.can_reclaim_fns) ok = ok && fn(ssn.jobs[j], request);
    if (ok) reclaimers.push_back(j);
  }
  if (reclaimers.empty()) return;
  {
    // At steady state every reclaimer is refused by every victim queue's first entry. Find that out
    // from each queue's first entry alone before ordering every running job as a victim (which costs
    // hundreds of milliseconds at 150,000 jobs). Nothing is committed on that path, so refusing here is
    // exactly what the loop below would conclude.
    bool exact = true;
    const auto firsts = first_victim_entries(ssn, exact);
    bool any = !exact;
    for (size_t i = 0; i < reclaimers.size() && !any; ++i) {
      const JobInfo& job = ssn.jobs[reclaimers[i]];
      const QueueQuantities request = ssn.queue_request_of(ssn.tasks_to_allocate(job));
      for (int32_t q = 0; q < static_cast<int32_t>(firsts.size()) && !any; ++q) {
        if (q == job.queue || !firsts[q]) continue;
        bool ok = true;
        for (const auto& fn : ssn.reclaim_validator_fns)
          ok = ok && fn(job, request, {&firsts[q]->tasks.front(), 1}, true);
        any = ok;
      }
    }
    if (!any) return;
  }
  const VictimPool& pool = victim_pool(ssn);
  for_each_preemptor(ssn, "reclaim", reclaimers, [&](uint32_t j, Statement& stmt) {
    const JobInfo& job = ssn.jobs[j];
    const auto tasks = ssn.tasks_to_allocate(job);
    const QueueQuantities request = ssn.queue_request_of(tasks);
    for (const auto& fn : ssn.can_reclaim_fns) {
      if (!fn(job, request)) return false;
    }
    // Victim queues that could not give anything to this reclaimer (at the level where the two queue
    // paths part, neither above its share nor, with the reclaimer within quota, above its quota) are
    // left out before the search: the reclaimable check would refuse their first entry.
    std::vector<char> may_give(ssn.queues.size(), 0);
    bool any = false;
    for (int32_t q = 0; q < static_cast<int32_t>(pool.by_queue.size()); ++q) {
      const auto& indexes = pool.by_queue[q];
      if (q == job.queue || indexes.empty()) continue;
      const VictimEntry& first = pool.entries[indexes.front()];
      bool ok = true;
      for (const auto& fn : ssn.reclaim_validator_fns)
        ok = ok && fn(job, request, {&first.tasks.front(), 1}, true);
      may_give[q] = ok;
      any = any || ok;
    }
    if (!any) return false;
    std::vector<const VictimEntry*> entries;
    std::set<uint32_t> jobs;
    for (const VictimEntry& e : pool.entries) {
      if (may_give[ssn.jobs[e.job].queue]) take_entry(ssn, "reclaim", job, e, entries, jobs, -1);
    }
    SolverOptions options;
    options.action = "reclaim";
    options.validate = [&](std::span<const uint32_t> evicted) {
      for (const auto& fn : ssn.reclaim_validator_fns) {
        if (!fn(job, request, evicted, false)) return false;
      }
      return true;
    };
    options.message = [&](const JobInfo& victim) {
      return ssn.reclaim_message_fn ? ssn.reclaim_message_fn("reclaim", job, victim)
                                    : "Pod group " + victim.key + " was reclaimed by " + job.key;
    };
    return solve_with_victims(ssn, stmt, j, entries, options);
  });
}

void PreemptAction::execute(Session& ssn) {
  // Preemption needs a lower-priority preemptible job with pods in the preemptor's queue.
  std::map<int32_t, int32_t> lowest_victim_priority;
  for (const JobInfo& v : ssn.jobs) {
    if (!v.preemptible || v.queue == kNoQueue || ssn.active_allocated_count(v) == 0) continue;
    auto [it, inserted] = lowest_victim_priority.try_emplace(v.queue, v.priority);
    if (!inserted) it->second = std::min(it->second, v.priority);
  }
  std::vector<uint32_t> preemptors;
  for (uint32_t j : pending_jobs(ssn, false)) {
    auto it = lowest_victim_priority.find(ssn.jobs[j].queue);
    if (it != lowest_victim_priority.end() && it->second < ssn.jobs[j].priority) preemptors.push_back(j);
  }
  if (preemptors.empty()) return;
  const VictimPool& pool = victim_pool(ssn);
  for_each_preemptor(ssn, "preempt", preemptors, [&](uint32_t j, Statement& stmt) {
    const JobInfo& job = ssn.jobs[j];
    const auto tasks = ssn.tasks_to_allocate(job);
    // A non-preemptible preemptor must stay within its queue's quota.
    for (const auto& fn : ssn.job_capacity_fns) {
      if (auto why = fn(job, tasks); why && why->reason == "NonPreemptibleOverQuota") return false;
    }
    std::vector<const VictimEntry*> entries;
    std::set<uint32_t> jobs;
    {
      for (uint32_t e : pool.by_queue[job.queue]) {
        if (ssn.jobs[pool.entries[e].job].priority < job.priority) {
          take_entry(ssn, "preempt", job, pool.entries[e], entries, jobs, -1);
        }
      }
    }
    if (entries.empty()) return false;
    SolverOptions options;
    options.action = "preempt";
    options.message = [&](const JobInfo& victim) {
      return "Pod " + victim.key + " was preempted by higher priority workload " + job.key;
    };
    return solve_with_victims(ssn, stmt, j, entries, options);
  });
}

void ConsolidationAction::execute(Session& ssn) {
  const int32_t cap = ssn.options().max_consolidation_preemptees;
  if (cap == 0) return;
  // Only the first `cap` victim jobs can take part (plus the preemptor itself, which is skipped).
  const VictimPool& pool = victim_pool(ssn, cap < 0 ? SIZE_MAX : static_cast<size_t>(cap) + 1);
  for_each_preemptor(ssn, "consolidation", pending_jobs(ssn, true), [&](uint32_t j, Statement& stmt) {
    const JobInfo& job = ssn.jobs[j];
    // Consolidation only moves pods: without enough free GPUs in the whole cluster it cannot help.
    const QueueQuantities request = ssn.queue_request_of(ssn.tasks_to_allocate(job));
    int64_t free_gpu = 0;
    for (const NodeInfo& n : ssn.nodes) {
      if (n.ready && !n.unschedulable) free_gpu += n.non_allocated_gpu_milli();
    }
    if (static_cast<double>(free_gpu) / 1000.0 + 1e-9 < request.gpu) return false;
    std::vector<const VictimEntry*> entries;
    std::set<uint32_t> jobs;
    for (const VictimEntry& e : pool.entries) {
      if (!take_entry(ssn, "consolidation", job, e, entries, jobs, cap)) break;
    }
    SolverOptions options;
    options.action = "consolidation";
    options.victims_must_move = true;
    // KAI's filter lets the counter reach max + 1 jobs (kai-behaviour.md §11); we keep the cap exact.
    options.max_victim_jobs = cap;
    options.message = [&](const JobInfo& victim) {
      return "Pod group " + victim.key +
             " was preempted and rescheduled due to bin packing (resource consolidation) procedure for " +
             job.key;
    };
    return solve_with_victims(ssn, stmt, j, entries, options);
  });
}

void StaleGangEvictionAction::execute(Session& ssn) {
  const int64_t grace = ssn.options().stale_grace_period_seconds;
  for (uint32_t j = 0; j < ssn.jobs.size(); ++j) {
    JobInfo& job = ssn.jobs[j];
    bool succeeded = false;
    for (uint32_t t : job.tasks) succeeded = succeeded || ssn.tasks[t].status == PodStatus::kSucceeded;
    bool stale = false;
    if (!succeeded && ssn.active_used_count(job) > 0) {
      for (const auto& ps : job.pod_sets) {
        int32_t used = 0;
        for (uint32_t t : ps.tasks) used += is_active_used(ssn.tasks[t].status);
        stale = stale || used < ps.min_available;
      }
    }
    if (!stale) {
      if (job.stale_since) {
        job.stale_since.reset();
        ssn.annotation_updates[j][kStaleSinceAnnotation] = std::nullopt;
      }
      continue;
    }
    if (!job.stale_since) {
      job.stale_since = ssn.record_time();
      ssn.annotation_updates[j][kStaleSinceAnnotation] = model::format_rfc3339(*job.stale_since);
    }
    if (grace < 0 || ssn.now_ms() < (*job.stale_since + grace) * 1000) continue;
    Statement stmt(ssn);
    int32_t min_available = 0;
    for (const auto& ps : job.pod_sets) min_available += ps.min_available;
    for (uint32_t t : job.tasks) {
      if (!is_active_allocated(ssn.tasks[t].status) || ssn.tasks[t].node == kNoNode) continue;
      stmt.evict(t,
                 "Workload doesn't meet the minimum required number of pods (" +
                     std::to_string(min_available) + "), evicting remaining pod: " + ssn.tasks[t].key,
                 job.key);
    }
    stmt.commit(std::string(name()), job.key);
  }
}

}  // namespace kai::core
