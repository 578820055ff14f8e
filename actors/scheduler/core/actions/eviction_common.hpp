#pragma once
// What the eviction actions (reclaim, preempt, consolidation) share: which jobs may evict, the
// session's victim pool in victim order, how a victim entry is admitted for a preemptor, and the loop
// that gives each preemptor one attempt in queue order.

#include <cstddef>
#include <cstdint>
#include <memory>
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
  size_t limit = SIZE_MAX;                      ///< victim jobs ordered (the first `limit`)
};

/// The jobs the eviction actions start from, found in one pass over every job while nothing is
/// committed: at 150,000 jobs each pass costs milliseconds, and the three actions made five of them.
struct JobCensus {
  /// Valid jobs in a queue with pods pending and every pod set's minimum alive, by id (before the
  /// preemption delay, which pending_jobs applies and reports).
  std::vector<uint32_t> ready_pending;
  /// Per queue id: its preemptible jobs with pods on nodes (the possible victims), by id.
  std::vector<std::vector<uint32_t>> running_preemptible;
  /// Per queue id: the lowest priority among them (none when the queue has no possible victim).
  std::vector<std::optional<int32_t>> lowest_victim_priority;
  /// Per queue id: the one of them that victim order puts first (the last in job order), found in
  /// the same pass while each job is in cache; -1 when the queue has no possible victim.
  std::vector<int64_t> first_victim_job;
};

/// How many copies of a request each node could take with what is idle or releasing on it (the
/// victim solver's bound before simulating), for one request and static-fit mask.
struct NodeRoom {
  const std::vector<char>* mask = nullptr;
  Resources request;  ///< cpu, memory, GPUs and pods only
  std::vector<int64_t> room;
  int64_t total = 0;
};

/// The session's eviction cache (Session::eviction_cache), valid while ssn.decisions is unchanged:
/// every commit records a decision, and nothing else changes what a job holds or waits for or what a
/// node holds.
struct EvictionCache {
  size_t taken_at_decision = 0;
  std::optional<JobCensus> census;
  /// Shared with the action that asked for it, which goes on reading it after its commits.
  std::shared_ptr<const VictimPool> pool;
  /// The rooms the solver counted for the preemptors so far (most pending groups share a few
  /// shapes, and each count is a pass over every node).
  std::vector<NodeRoom> rooms;
  /// Consolidation's bound: the GPUs free on ready, schedulable nodes, in thousandths.
  std::optional<int64_t> free_gpu_milli;
};

/// The session's eviction cache as it stands (emptied after a commit).
EvictionCache& eviction_cache(Session& ssn);

/// The census of the session as it stands (taken again after a commit).
const JobCensus& job_census(Session& ssn);

/// Jobs that can be scheduled by an eviction action: valid, ready, with pending pods, past their
/// preemption delay (a job within it gets KAI's PreemptionDelayNotElapsed reason instead).
std::vector<uint32_t> pending_jobs(Session& ssn, bool preemptible_only);

/// The session's victim pool (the first `limit` victim jobs in victim order), rebuilt only when
/// something was committed since it was last built: the eviction actions run back to back and usually
/// decide nothing at steady state. An action keeps reading the pool it took through its own commits.
std::shared_ptr<const VictimPool> victim_pool(Session& ssn, size_t limit = SIZE_MAX);

/// Each queue's first victim entry, as victim_pool(ssn).by_queue[q].front() would give it, without
/// ordering every victim: within a queue the order is the jobs sorted by reversed job order, so the
/// first is a maximum found in one pass. nullopt for a queue without victims; `exact` is cleared when a
/// queue's first job has no entry (then only the full pool knows).
std::vector<std::optional<VictimEntry>> first_victim_entries(Session& ssn, bool& exact);

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
