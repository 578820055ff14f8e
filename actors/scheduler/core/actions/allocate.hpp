#pragma once
// The allocate action (docs/kai-compatibility.md "Allocate"): jobs in queue order, gang all-or-nothing on minMember,
// elastic growth one pod per attempt, pipelining onto releasing resources.

#include <cstdint>
#include <string>

#include "actors/scheduler/core/action.hpp"
#include "actors/scheduler/core/statement.hpp"

namespace kai::core {

/// The action itself: every ready job with pending pods, in queue order, gets one attempt.
void allocate_action(Session& ssn);

/// Tries to place the next tasks of `job` in `stmt`. On failure the statement is rolled back to where
/// it was and the job carries a fit error. `pipelined` says the job was placed on releasing resources.
bool allocate_job(Session& ssn, Statement& stmt, uint32_t job, bool& pipelined);

/// Places one task on the best node that takes it (allocated if it fits idle resources, else pipelined;
/// always pipelined when `pipeline_only`), never on `excluded_node`; a ghost never in a GPU group its
/// pod leaves. False when no node takes it.
bool place_task(Session& ssn, Statement& stmt, uint32_t task, bool pipeline_only,
                int32_t excluded_node = kNoNode);

/// Why no node takes `task`: KAI's message, e.g. "no nodes with enough resources were found:
/// 2 node(s) didn't have enough resources: GPUs."
std::string explain_task_fit(Session& ssn, const TaskInfo& task);

}  // namespace kai::core
