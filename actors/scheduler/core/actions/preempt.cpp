#include "actors/scheduler/core/actions/eviction_actions.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "actors/scheduler/core/actions/eviction_common.hpp"
#include "actors/scheduler/core/actions/victim_solver.hpp"

namespace kai::core {

void preempt_action(Session& ssn) {
  const std::string action(action_names::kPreempt);
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
  for_each_preemptor(ssn, action, preemptors, [&](uint32_t j, Statement& stmt) {
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
          take_entry(ssn, action, job, pool.entries[e], entries, jobs, -1);
        }
      }
    }
    if (entries.empty()) return false;
    SolverOptions options;
    options.action = action;
    options.message = [&](const JobInfo& victim) {
      return "Pod " + victim.key + " was preempted by higher priority workload " + job.key;
    };
    return solve_with_victims(ssn, stmt, j, entries, options);
  });
}

}  // namespace kai::core
