#include "actors/scheduler/core/actions/allocate.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <numeric>

#include "actors/scheduler/core/grouping.hpp"
#include "actors/scheduler/core/inter_pod_constraints.hpp"
#include "actors/scheduler/core/job_queue_tree.hpp"
#include "actors/scheduler/core/node_fit.hpp"
#include "actors/scheduler/core/topology_placement.hpp"
#include "k8s/model/time.hpp"

namespace kai::core {
namespace {

constexpr const char* kNoNodesFound = "no nodes with enough resources were found";

/// FilterUnready: every pod set needs minAvailable pods that exist and are not gated.
std::optional<FitReason> not_ready_reason(const Session& ssn, const JobInfo& job) {
  for (const auto& ps : job.pod_sets) {
    int32_t alive = 0, gated = 0;
    for (uint32_t t : ps.tasks) {
      alive += is_alive(ssn.tasks[t].status);
      gated += ssn.tasks[t].status == PodStatus::kGated;
    }
    if (alive - gated < ps.min_available) {
      return FitReason{"NotReady", "Job is not ready for scheduling. Waiting for " +
                                       std::to_string(ps.min_available) + " pods, currently " +
                                       std::to_string(alive) + " exist, " + std::to_string(gated) +
                                       " are gated"};
    }
  }
  return std::nullopt;
}

std::optional<std::string> capacity_rejection(const Session& ssn, const TaskInfo& task,
                                              const NodeInfo& node) {
  for (const auto& fn : ssn.task_capacity_fns) {
    if (auto why = fn(task, node)) return why;
  }
  return std::nullopt;
}

/// Removes from `c` the GPU groups `victim` is leaving: its ghost must free that device, not stay on it.
void drop_groups_left(const TaskInfo& victim, const NodeInfo& node, GpuCandidates& c) {
  for (size_t i = c.candidates.size(); i-- > 0;) {
    const int32_t g = c.candidates[i].group_index;
    if (g < 0 || std::find(victim.gpu_groups.begin(), victim.gpu_groups.end(), node.shared_gpus[g].group) ==
                     victim.gpu_groups.end()) {
      continue;
    }
    c.candidates.erase(c.candidates.begin() + static_cast<std::ptrdiff_t>(i));
    c.fits_idle.erase(c.fits_idle.begin() + static_cast<std::ptrdiff_t>(i));
  }
}

bool place_on_node(Session& ssn, Statement& stmt, uint32_t task_id, uint32_t node_id, bool pipeline_only) {
  const TaskInfo& task = ssn.tasks[task_id];
  const NodeInfo& node = ssn.nodes[node_id];
  if (!task.gpu.is_shared()) {
    if (!pipeline_only && fits_idle(task, node)) {
      stmt.allocate(task_id, node_id);
    } else {
      stmt.pipeline(task_id, node_id);
    }
    return true;
  }
  GpuCandidates c = fitting_gpus(task, node);
  if (task.ghost) drop_groups_left(ssn.tasks[task.ghost_of], node, c);
  if (static_cast<int32_t>(c.candidates.size()) < task.gpu.num_devices) return false;
  std::vector<size_t> order(c.candidates.size());
  std::iota(order.begin(), order.end(), 0);
  std::vector<double> score(c.candidates.size(), 0.0);
  for (size_t i = 0; i < c.candidates.size(); ++i) {
    for (const auto& fn : ssn.gpu_order_fns) score[i] += fn(task, node, c.candidates[i]);
  }
  // Equal scores: shared devices before whole ones (idle whole devices before releasing ones, as
  // listed), the shared devices by group name, not by where the build happened to list them.
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (score[a] != score[b]) return score[a] > score[b];
    const int32_t ga = c.candidates[a].group_index, gb = c.candidates[b].group_index;
    if ((ga < 0) != (gb < 0)) return gb < 0;
    return ga >= 0 &&
           node.shared_gpus[static_cast<size_t>(ga)].group < node.shared_gpus[static_cast<size_t>(gb)].group;
  });
  Resources non_gpu = task.req;
  non_gpu.milli_gpu = 0;
  Resources idle = node.idle;
  idle.milli_gpu = 0;
  bool pipelined = pipeline_only || !non_gpu.fits_in(idle);
  std::vector<std::string> groups;
  for (int32_t k = 0; k < task.gpu.num_devices; ++k) {
    const GpuCandidate& cand = c.candidates[order[k]];
    pipelined = pipelined || !c.fits_idle[order[k]];
    groups.push_back(cand.group_index >= 0 ? node.shared_gpus[cand.group_index].group
                                           : ssn.new_gpu_group_id());
  }
  const int64_t portion = shared_portion_on(task, node);
  if (pipelined) {
    stmt.pipeline(task_id, node_id, std::move(groups), portion);
  } else {
    stmt.allocate(task_id, node_id, std::move(groups), portion);
  }
  return true;
}

/// Calls `visit` with the nodes of `first` and then of `second` (or of both merged into one ranking
/// order when `merged`), from the first entry with at least `from` free, until it returns true.
template <class Visit>
void visit_in_order(const NodeFreeIndex& first, const NodeFreeIndex* second, bool merged, int64_t from,
                    Visit visit) {
  auto a = first.lower_bound(from);
  if (second == nullptr || !merged) {
    for (; a != first.end(); ++a) {
      if (visit(first.node_of(*a))) return;
    }
    if (second == nullptr) return;
    for (auto b = second->lower_bound(from); b != second->end(); ++b) {
      if (visit(second->node_of(*b))) return;
    }
    return;
  }
  auto b = second->lower_bound(from);
  while (a != first.end() || b != second->end()) {
    const bool take_a = b == second->end() || (a != first.end() && *a < *b);
    if (visit(take_a ? first.node_of(*a++) : second->node_of(*b++))) return;
  }
}

/// The first node in ranking order (see visit_in_order) that takes the task: with nodeavailability the
/// first that fits idle resources wins (its 100 points outweigh the other scores), otherwise the first
/// that fits at all. `accept` adds conditions (capacity, a fitting shared group).
template <class Accept>
std::optional<uint32_t> walk_indexes(Session& ssn, const TaskInfo& task, const NodeFreeIndex& first,
                                     const NodeFreeIndex* second, bool merged, int64_t from, Accept accept) {
  // `accept` also rules out the excluded node (see place_task).
  const std::vector<char>& mask = ssn.static_fit_mask(task);
  std::optional<uint32_t> found, fallback;
  visit_in_order(first, second, merged, from, [&](uint32_t n) {
    if (!mask[n]) return false;
    const NodeInfo& node = ssn.nodes[n];
    if (!fits_idle_or_releasing(task, node) || !accept(node)) return false;
    if (!ssn.prefers_idle_nodes || fits_idle(task, node)) {
      found = n;
      return true;
    }
    if (!fallback) fallback = n;
    return false;
  });
  return found ? found : fallback;
}

template <class Accept>
std::optional<uint32_t> walk_index(Session& ssn, const TaskInfo& task, const NodeFreeIndex& index,
                                   int64_t from, Accept accept) {
  return walk_indexes(ssn, task, index, nullptr, false, from, accept);
}

/// Under GPU binpack the node-order plugins rank GPU nodes for a GPU task lexicographically:
/// gpusharingorder (1000, shared tasks with a fitting device in use) > nodeavailability (100) >
/// placement (0..9, falling as free GPUs rise) > name. Walking the indexes in that order finds the
/// generic path's choice without scoring every node (tested equal on random clusters).
std::optional<uint32_t> best_gpu_node(Session& ssn, const TaskInfo& task,
                                      const std::function<bool(const NodeInfo&)>& capacity_ok) {
  if (!task.gpu.is_shared())
    return walk_index(ssn, task, ssn.gpu_free_index, task.req.milli_gpu, capacity_ok);
  const int64_t from = task.gpu.kind == GpuRequestKind::kFraction ? task.gpu.fraction_milli : 1;
  if (ssn.prefers_shared_groups) {
    auto in_group = walk_index(ssn, task, ssn.shared_room_index, from, [&](const NodeInfo& node) {
      return has_fitting_shared_group(task, node) && capacity_ok(node);
    });
    if (in_group) return in_group;
  }
  return walk_index(ssn, task, ssn.gpu_free_index, from, capacity_ok);
}

/// Under CPU binpack the node-order plugins rank nodes for a CPU-only task lexicographically:
/// nodeavailability (100) > resourcetype (10, nodes without GPUs) > placement (0..9, falling as idle
/// plus releasing CPU rises) > name. Without resourcetype both kinds of node share one order.
std::optional<uint32_t> best_cpu_node(Session& ssn, const TaskInfo& task,
                                      const std::function<bool(const NodeInfo&)>& capacity_ok) {
  return walk_indexes(ssn, task, ssn.cpu_free_on_cpu_nodes, &ssn.cpu_free_on_gpu_nodes,
                      !ssn.prefers_cpu_nodes_for_cpu_tasks, task.req.milli_cpu, capacity_ok);
}

/// No other scorer reorders the task's nodes: preferred pod affinity ranks them by where other pods
/// are, and the nominated node goes first, neither of which the indexes know.
bool ranked_by_indexes_alone(const Session& ssn, const TaskInfo& task) {
  if (ssn.inter_pod && ssn.inter_pod->scores(task)) return false;
  return task.nominated_node.empty() || !ssn.honours_nominated_node;
}

bool uses_cpu_fast_path(const Session& ssn, const TaskInfo& task) {
  // A task asking no CPU fits nodes whose free CPU is at or below zero, which the indexes rank by
  // name only among themselves: it takes the generic path.
  return ssn.cpu_fast_path && task.is_cpu_only() && task.req.milli_cpu > 0 &&
         ranked_by_indexes_alone(ssn, task);
}

bool uses_gpu_fast_path(const Session& ssn, const TaskInfo& task) {
  // A shared-GPU ghost must skip the groups its pod leaves, which the indexes do not know: it takes the
  // generic path, where a node whose only fitting group is its own is passed over.
  if (task.ghost && task.gpu.is_shared()) return false;
  return ssn.gpu_fast_path && (task.gpu.kind == GpuRequestKind::kWhole || task.gpu.is_shared()) &&
         ranked_by_indexes_alone(ssn, task);
}

}  // namespace

bool place_task(Session& ssn, Statement& stmt, uint32_t task_id, bool pipeline_only, int32_t excluded_node,
                const NodeChoice* choice) {
  const TaskInfo& task = ssn.tasks[task_id];
  // The queue-capacity check depends on the node only through the GPU portion the task would take
  // there (gpu-memory is converted per node), so it is computed once per distinct portion.
  std::vector<std::pair<int64_t, bool>> capacity_by_portion;
  const bool inter_pod = ssn.inter_pod_predicates && ssn.inter_pod && ssn.inter_pod->concerns(task);
  auto capacity_ok = [&](const NodeInfo& node) {
    if (excluded_node != kNoNode && &node == &ssn.nodes[excluded_node]) return false;
    if (inter_pod && ssn.inter_pod->rejection(task, node)) return false;
    const int64_t portion = task.gpu.is_shared() ? shared_portion_on(task, node) : -1;
    for (const auto& [p, ok] : capacity_by_portion) {
      if (p == portion) return ok;
    }
    const bool ok = !capacity_rejection(ssn, task, node);
    capacity_by_portion.emplace_back(portion, ok);
    return ok;
  };
  if (choice == nullptr && (uses_gpu_fast_path(ssn, task) || uses_cpu_fast_path(ssn, task))) {
    auto best =
        task.is_cpu_only() ? best_cpu_node(ssn, task, capacity_ok) : best_gpu_node(ssn, task, capacity_ok);
    return best && place_on_node(ssn, stmt, task_id, *best, pipeline_only);
  }
  std::vector<uint32_t> fitting;
  auto consider = [&](uint32_t n) {
    const NodeInfo& node = ssn.nodes[n];
    if (fits_idle_or_releasing(task, node) && capacity_ok(node)) fitting.push_back(n);
  };
  if (choice != nullptr) {
    const std::vector<char>& mask = ssn.static_fit_mask(task);
    for (uint32_t n : choice->nodes) {
      if (mask[n]) consider(n);
    }
  } else {
    for (uint32_t n : ssn.statically_fitting_nodes(task)) consider(n);
  }
  if (fitting.empty()) return false;
  for (const auto& fn : ssn.node_pre_order_fns) fn(task);
  std::vector<double> scores(fitting.size(), 0.0);
  for (const auto& fn : ssn.node_order_fns) fn(task, fitting, scores);
  if (choice != nullptr && choice->scores != nullptr) {
    for (size_t i = 0; i < fitting.size(); ++i) {
      if (auto it = choice->scores->find(fitting[i]); it != choice->scores->end()) scores[i] += it->second;
    }
  }
  std::vector<bool> tried(fitting.size(), false);
  for (size_t attempt = 0; attempt < fitting.size(); ++attempt) {
    size_t best = fitting.size();
    for (size_t i = 0; i < fitting.size(); ++i) {
      if (tried[i]) continue;
      if (best == fitting.size() || scores[i] > scores[best] ||
          (scores[i] == scores[best] && ssn.nodes[fitting[i]].name < ssn.nodes[fitting[best]].name)) {
        best = i;
      }
    }
    tried[best] = true;
    if (place_on_node(ssn, stmt, task_id, fitting[best], pipeline_only)) return true;
  }
  return false;
}

namespace {

bool should_pipeline_job(const Session& ssn, const JobInfo& job) {
  for (const auto& ps : job.pod_sets) {
    bool has_pipelined = false;
    int32_t allocated = 0;
    for (uint32_t t : ps.tasks) {
      const PodStatus s = ssn.tasks[t].status;
      if (s == PodStatus::kPipelined) {
        has_pipelined = true;
      } else if (is_active_allocated(s)) {
        ++allocated;
      }
    }
    if (has_pipelined && allocated < ps.min_available) return true;
  }
  return false;
}

}  // namespace

std::string explain_task_fit(Session& ssn, const TaskInfo& task) {
  std::map<std::string, int> histogram;
  std::map<uint32_t, int> lack_counts;  // by ResourceLack bit set; strings are built once per distinct set
  std::map<const char*, int> inter_pod_counts;  // by fixed text: no string built per node
  const std::vector<char>& mask = ssn.static_fit_mask(task);
  // Once per task, not per node: most tasks have no inter-pod constraint and skip the check.
  const bool inter_pod = ssn.inter_pod_predicates && ssn.inter_pod && ssn.inter_pod->concerns(task);
  for (uint32_t n = 0; n < ssn.nodes.size(); ++n) {
    const NodeInfo& node = ssn.nodes[n];
    if (!mask[n]) {
      if (auto why = ssn.static_rejection(task, node)) ++histogram[*why];
      continue;
    }
    if (const char* why = inter_pod ? ssn.inter_pod->rejection(task, node) : nullptr) {
      ++inter_pod_counts[why];
    } else if (const uint32_t bits = resource_rejection_bits(task, node); bits != 0) {
      ++lack_counts[bits];
    } else if (auto why = capacity_rejection(ssn, task, node)) {
      ++histogram[*why];
    }
  }
  for (const auto& [why, count] : inter_pod_counts) histogram[why] += count;
  for (const auto& [bits, count] : lack_counts) {
    // Any node with this set of lacks gives the same reasons; pick one to render them.
    for (uint32_t n = 0; n < ssn.nodes.size(); ++n) {
      if (mask[n] && resource_rejection_bits(task, ssn.nodes[n]) == bits) {
        for (const auto& r : resource_rejections(ssn, task, ssn.nodes[n])) histogram[r] += count;
        break;
      }
    }
  }
  std::vector<std::string> lines;
  lines.reserve(histogram.size());
  for (const auto& [reason, count] : histogram) lines.push_back(std::to_string(count) + " " + reason);
  std::sort(lines.begin(), lines.end());
  std::string message = kNoNodesFound;
  if (!lines.empty()) {
    message += ": ";
    for (size_t i = 0; i < lines.size(); ++i) message += (i ? ". \n" : "") + lines[i];
    message += ".";
  }
  return message;
}

bool allocate_job(Session& ssn, Statement& stmt, uint32_t job_id, bool& pipelined) {
  JobInfo& job = ssn.jobs[job_id];
  pipelined = false;
  const std::vector<uint32_t> tasks = ssn.tasks_to_allocate(job);
  if (tasks.empty()) return false;
  for (const auto& fn : ssn.job_capacity_fns) {
    if (auto why = fn(job, tasks)) {
      job.fit_errors = {*why};
      return false;
    }
  }
  if (!place_job_tasks(ssn, stmt, job_id, tasks, false, &job.fit_errors)) return false;
  if (should_pipeline_job(ssn, job)) {
    stmt.convert_allocated_to_pipelined(job_id);
    pipelined = true;
  }
  return true;
}

std::string task_failure_message(Session& ssn, const JobInfo& job, const TaskInfo& task, size_t placed) {
  const std::string why = explain_task_fit(ssn, task);
  if (job.min_member > 1 && ssn.active_allocated_count(job) < job.min_member) {
    return "Resources were found for " + std::to_string(placed) + " pods while " + std::to_string(job.min_member) +
           " are required for gang scheduling. Additional pods cannot be scheduled due to: " + why;
  }
  return "Resources were not found for pod " + task.key + " due to: " + why;
}

bool place_job_tasks(Session& ssn, Statement& stmt, uint32_t job_id, const std::vector<uint32_t>& tasks,
                     bool pipeline_only, std::vector<FitReason>* why) {
  if (ssn.topology_plugin && ssn.jobs[job_id].topology) return place_with_topology(ssn, stmt, job_id, tasks, pipeline_only, why);
  const auto cp = stmt.checkpoint();
  for (size_t i = 0; i < tasks.size(); ++i) {
    if (place_task(ssn, stmt, tasks[i], pipeline_only)) continue;
    stmt.rollback(cp);
    if (why != nullptr) {
      *why = {{"PodSchedulingErrors", task_failure_message(ssn, ssn.jobs[job_id], ssn.tasks[tasks[i]], i)}};
    }
    return false;
  }
  return true;
}

void allocate_action(Session& ssn) {
  std::vector<uint32_t> candidates;
  for (uint32_t j = 0; j < ssn.jobs.size(); ++j) {
    JobInfo& job = ssn.jobs[j];
    if (!job.invalid.empty()) {
      job.fit_errors = job.invalid;
      continue;
    }
    if (!ssn.has_pending_tasks(job)) continue;
    if (auto why = not_ready_reason(ssn, job)) {
      job.fit_errors = {*why};
      continue;
    }
    candidates.push_back(j);
  }
  JobQueueTree tree(ssn, candidates);
  while (!tree.empty()) {
    const uint32_t j = tree.pop();
    JobInfo& job = ssn.jobs[j];
    const bool already_allocated = ssn.active_allocated_count(job) > 0;
    Statement stmt(ssn);
    bool pipelined = false;
    if (!allocate_job(ssn, stmt, j, pipelined)) {
      stmt.discard();
      continue;
    }
    stmt.commit(std::string(action_names::kAllocate), job.key);
    if (!pipelined && !already_allocated) {
      job.last_start = ssn.record_time();
      ssn.annotation_updates[j][model::kLastStartAnnotation] = model::format_rfc3339(*job.last_start);
    }
    if (ssn.has_pending_tasks(job)) tree.push(j);
  }
}

}  // namespace kai::core
