#include "actors/scheduler/core/actions/eviction_actions.hpp"

#include <set>
#include <span>
#include <string>
#include <vector>

#include "actors/scheduler/core/actions/eviction_common.hpp"
#include "actors/scheduler/core/actions/victim_solver.hpp"

namespace kai::core {

void reclaim_action(Session& ssn) {
  const std::string action(action_names::kReclaim);
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
  const std::shared_ptr<const VictimPool> pool_held = victim_pool(ssn);
  const VictimPool& pool = *pool_held;
  for_each_preemptor(ssn, action, reclaimers, [&](uint32_t j, Statement& stmt) {
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
      may_give[q] = ok ? 1 : 0;
      any = any || ok;
    }
    if (!any) return false;
    std::vector<const VictimEntry*> entries;
    std::set<uint32_t> jobs;
    for (const VictimEntry& e : pool.entries) {
      if (may_give[ssn.jobs[e.job].queue]) take_entry(ssn, action, job, e, entries, jobs, -1);
    }
    SolverOptions options;
    options.action = action;
    options.validate = [&](std::span<const uint32_t> evicted) {
      for (const auto& fn : ssn.reclaim_validator_fns) {
        if (!fn(job, request, evicted, false)) return false;
      }
      return true;
    };
    options.message = [&](const TaskInfo& victim) {
      return ssn.reclaim_message_fn ? ssn.reclaim_message_fn(action, job, victim)
                                    : "Pod " + victim.key + " was preempted by workload " + job.key + ".";
    };
    return solve_with_victims(ssn, stmt, j, entries, options);
  });
}

}  // namespace kai::core
