#include "actors/scheduler/core/actions/eviction_actions.hpp"

#include <set>
#include <string>
#include <vector>

#include "actors/scheduler/core/actions/eviction_common.hpp"
#include "actors/scheduler/core/actions/victim_solver.hpp"

namespace kai::core {

void consolidation_action(Session& ssn) {
  const std::string action(action_names::kConsolidation);
  const int32_t cap = ssn.options().max_consolidation_preemptees;
  if (cap == 0) return;
  // Only the first `cap` victim jobs can take part (plus the preemptor itself, which is skipped).
  const std::shared_ptr<const VictimPool> pool_held =
      victim_pool(ssn, cap < 0 ? SIZE_MAX : static_cast<size_t>(cap) + 1);
  const VictimPool& pool = *pool_held;
  for_each_preemptor(ssn, action, pending_jobs(ssn, true), [&](uint32_t j, Statement& stmt) {
    const JobInfo& job = ssn.jobs[j];
    // Consolidation only moves pods: without enough free GPUs in the whole cluster it cannot help.
    const QueueQuantities request = ssn.queue_request_of(ssn.tasks_to_allocate(job));
    // The cluster's free GPUs change only with a commit: summed once per commit (eviction cache),
    // not once per preemptor.
    std::optional<int64_t>& free_gpu = eviction_cache(ssn).free_gpu_milli;
    if (!free_gpu) {
      free_gpu = 0;
      for (const NodeInfo& n : ssn.nodes) {
        if (n.ready && !n.unschedulable) *free_gpu += n.non_allocated_gpu_milli();
      }
    }
    if (static_cast<double>(*free_gpu) / 1000.0 + 1e-9 < request.gpu) return false;
    std::vector<const VictimEntry*> entries;
    std::set<uint32_t> jobs;
    for (const VictimEntry& e : pool.entries) {
      if (!take_entry(ssn, action, job, e, entries, jobs, cap)) break;
    }
    SolverOptions options;
    options.action = action;
    options.victims_must_move = true;
    // KAI's filter lets the counter reach max + 1 jobs (docs/kai-compatibility.md "Compatibility decisions"); we keep the cap exact.
    options.max_victim_jobs = cap;
    options.message = [](const TaskInfo& victim) {
      return "Pod " + victim.key + " was preempted and rescheduled due to bin packing (resource consolidation) procedure";
    };
    return solve_with_victims(ssn, stmt, j, entries, options);
  });
}

}  // namespace kai::core
