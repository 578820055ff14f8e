#pragma once
// What the eviction actions (reclaim, preempt, consolidation) share: which jobs may evict, the
// session's victim pool in victim order, how a victim entry is admitted for a preemptor, and the loop
// that gives each preemptor one attempt in queue order.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "actors/scheduler/core/actions/victim_solver.hpp"
#include "actors/scheduler/core/job_queue_tree.hpp"
#include "actors/scheduler/core/statement.hpp"

namespace kai::core {

/// Every possible victim entry of a session, in victim order, with each queue's entries indexed.
struct VictimPool {
  std::vector<VictimEntry> entries;
  std::vector<std::vector<uint32_t>> by_queue;  ///< per queue id: entry indexes, in victim order
  size_t built_at_decision = 0;                 ///< ssn.decisions.size() when built
  size_t limit = SIZE_MAX;                      ///< victim jobs ordered (the first `limit`)
};

/// Jobs that can be scheduled by an eviction action: valid, ready, with pending pods, past their
/// preemption delay (a job within it gets KAI's PreemptionDelayNotElapsed reason instead).
std::vector<uint32_t> pending_jobs(Session& ssn, bool preemptible_only);

/// The session's victim pool (the first `limit` victim jobs in victim order), rebuilt only when
/// something was committed since it was last built: the eviction actions run back to back and usually
/// decide nothing at steady state.
const VictimPool& victim_pool(Session& ssn, size_t limit = SIZE_MAX);

/// Each queue's first victim entry, as victim_pool(ssn).by_queue[q].front() would give it, without
/// ordering every victim: within a queue the order is the jobs sorted by reversed job order, so the
/// first is a maximum found in one pass. nullopt for a queue without victims; `exact` is cleared when a
/// queue's first job has no entry (then only the full pool knows).
std::vector<std::optional<VictimEntry>> first_victim_entries(const Session& ssn, bool& exact);

/// Adds `e` when the victim filters allow it for `preemptor`; false once `max_jobs` victim jobs are in.
bool take_entry(const Session& ssn, const std::string& action, const JobInfo& preemptor, const VictimEntry& e,
                std::vector<const VictimEntry*>& out, std::set<uint32_t>& jobs, int32_t max_jobs);

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

}  // namespace kai::core
