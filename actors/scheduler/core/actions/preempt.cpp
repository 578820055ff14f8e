#include "actors/scheduler/core/actions/eviction_actions.hpp"

#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "actors/scheduler/core/actions/eviction_common.hpp"
#include "actors/scheduler/core/actions/victim_solver.hpp"

namespace kai::core {

void preempt_action(Session& ssn) {
  const std::string action(action_names::kPreempt);
  // Preemption needs a lower-priority preemptible job with pods in the preemptor's queue.
  const std::vector<std::optional<int32_t>>& lowest_victim_priority = job_census(ssn).lowest_victim_priority;
  std::vector<uint32_t> preemptors;
  for (uint32_t j : pending_jobs(ssn, false)) {
    const std::optional<int32_t>& lowest = lowest_victim_priority[static_cast<size_t>(ssn.jobs[j].queue)];
    if (lowest && *lowest < ssn.jobs[j].priority) preemptors.push_back(j);
  }
  if (preemptors.empty()) return;
  const std::shared_ptr<const VictimPool> pool_held = victim_pool(ssn);
  const VictimPool& pool = *pool_held;
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
    options.message = [&](const TaskInfo& victim) {
      return "Pod " + victim.key + " was preempted by higher priority workload " + job.key;
    };
    return solve_with_victims(ssn, stmt, j, entries, options);
  });
}

}  // namespace kai::core
