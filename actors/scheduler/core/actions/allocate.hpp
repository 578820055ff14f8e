#pragma once
// The allocate action (docs/kai-compatibility.md "Allocate"): jobs in queue order, gang all-or-nothing on minMember,
// elastic growth one pod per attempt, pipelining onto releasing resources.

#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "actors/scheduler/core/action.hpp"
#include "actors/scheduler/core/statement.hpp"

namespace kai::core {

/// The action itself: every ready job with pending pods, in queue order, gets one attempt.
void allocate_action(Session& ssn);

/// Tries to place the next tasks of `job` in `stmt`. On failure the statement is rolled back to where
/// it was and the job carries a fit error. `pipelined` says the job was placed on releasing resources.
bool allocate_job(Session& ssn, Statement& stmt, uint32_t job, bool& pipelined);

/// The nodes a topology constraint leaves a task (KAI's node subsets, docs/topology.md), and the
/// topology plugin's scores that rank them before every other plugin's.
struct NodeChoice {
  std::span<const uint32_t> nodes;
  const std::unordered_map<uint32_t, double>* scores = nullptr;  ///< By node; null: none.
};

/// Places one task on the best node that takes it (allocated if it fits idle resources, else pipelined;
/// always pipelined when `pipeline_only`), never on `excluded_node`; a ghost never in a GPU group its
/// pod leaves; only on `choice`'s nodes when given. False when no node takes it.
bool place_task(Session& ssn, Statement& stmt, uint32_t task, bool pipeline_only,
                int32_t excluded_node = kNoNode, const NodeChoice* choice = nullptr);

/// Places `tasks` of `job` (pipelined when `pipeline_only`), through its topology scopes when it
/// has any (topology_placement.hpp), else one after another. On failure the statement is back where
/// it was and `why` holds the reason (when not null).
bool place_job_tasks(Session& ssn, Statement& stmt, uint32_t job, const std::vector<uint32_t>& tasks,
                     bool pipeline_only, std::vector<FitReason>* why);

/// KAI's message for a job whose `task` found no node after `placed` of its tasks did: the gang's
/// count when it is below minMember, else the task's own reason.
std::string task_failure_message(Session& ssn, const JobInfo& job, const TaskInfo& task, size_t placed);

/// Why no node takes `task`: KAI's message, e.g. "no nodes with enough resources were found:
/// 2 node(s) didn't have enough resources: GPUs."
std::string explain_task_fit(Session& ssn, const TaskInfo& task);

}  // namespace kai::core
