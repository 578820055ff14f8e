#pragma once
// How a task's status on a node moves the node's idle / releasing / used resources and its shared GPUs
// (KAI's node info add / remove task). Statement and session build both go through here, so that
// undoing an operation restores the node exactly.

#include "actors/scheduler/core/cluster_info.hpp"

namespace kai::core {

/// Adds `task` (its status, gpu_groups and placed_portion) to `node`.
void node_add_task(NodeInfo& node, const TaskInfo& task);
/// Exact inverse of node_add_task for the same task state.
void node_remove_task(NodeInfo& node, const TaskInfo& task);
/// A reservation pod of GPU group `group` on the node (terminating or not): it holds one device while
/// no task of its group does (an orphan after an abandoned bind), and fraction pods may join it.
void node_add_reservation(NodeInfo& node, const std::string& group, bool terminating);
/// Exact inverse of node_add_reservation (a kept session following a reservation pod that went or changed).
void node_remove_reservation(NodeInfo& node, const std::string& group, bool terminating);

}  // namespace kai::core
