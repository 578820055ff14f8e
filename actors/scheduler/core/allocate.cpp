#include "actors/scheduler/core/allocate.hpp"

#include <algorithm>
#include <map>
#include <numeric>

#include "actors/scheduler/core/job_queue_tree.hpp"
#include "actors/scheduler/core/node_fit.hpp"

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
      return FitReason{"NotReady", "Job is not ready for scheduling. Waiting for " + std::to_string(ps.min_available) +
                                       " pods, currently " + std::to_string(alive) + " exist, " +
                                       std::to_string(gated) + " are gated"};
    }
  }
  return std::nullopt;
}

std::optional<std::string> capacity_rejection(const Session& ssn, const TaskInfo& task, const NodeInfo& node) {
  for (const auto& fn : ssn.task_capacity_fns) {
    if (auto why = fn(task, node)) return why;
  }
  return std::nullopt;
}

bool place_on_node(Session& ssn, Statement& stmt, uint32_t task_id, uint32_t node_id) {
  const TaskInfo& task = ssn.tasks[task_id];
  const NodeInfo& node = ssn.nodes[node_id];
  if (!task.gpu.is_shared()) {
    if (fits_idle(task, node)) {
      stmt.allocate(task_id, node_id);
    } else {
      stmt.pipeline(task_id, node_id);
    }
    return true;
  }
  GpuCandidates c = fitting_gpus(task, node);
  if (static_cast<int32_t>(c.candidates.size()) < task.gpu.num_devices) return false;
  std::vector<size_t> order(c.candidates.size());
  std::iota(order.begin(), order.end(), 0);
  std::vector<double> score(c.candidates.size(), 0.0);
  for (size_t i = 0; i < c.candidates.size(); ++i) {
    for (const auto& fn : ssn.gpu_order_fns) score[i] += fn(task, node, c.candidates[i]);
  }
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return score[a] > score[b]; });
  Resources non_gpu = task.req;
  non_gpu.milli_gpu = 0;
  Resources idle = node.idle;
  idle.milli_gpu = 0;
  bool pipelined = !non_gpu.fits_in(idle);
  std::vector<std::string> groups;
  for (int32_t k = 0; k < task.gpu.num_devices; ++k) {
    const GpuCandidate& cand = c.candidates[order[k]];
    pipelined = pipelined || !c.fits_idle[order[k]];
    groups.push_back(cand.group_index >= 0 ? node.shared_gpus[cand.group_index].group : ssn.new_gpu_group_id());
  }
  const int64_t portion = shared_portion_on(task, node);
  if (pipelined) {
    stmt.pipeline(task_id, node_id, std::move(groups), portion);
  } else {
    stmt.allocate(task_id, node_id, std::move(groups), portion);
  }
  return true;
}

/// The node the node-order plugins would rank first for a whole-GPU task under GPU binpack, found by
/// walking nodes in (free GPUs, name) order from the first with enough free GPUs: with nodeavailability
/// the first node that fits idle resources wins (100 points outweigh placement's 9), otherwise the
/// first node that fits at all. Exactly the generic path's choice (tested), without scoring every node.
std::optional<uint32_t> best_node_for_whole_gpu_task(Session& ssn, const TaskInfo& task) {
  for (const auto& fn : ssn.task_capacity_fns) {
    if (!ssn.nodes.empty() && fn(task, ssn.nodes.front())) return std::nullopt;  // node-independent here
  }
  const std::vector<char>& mask = ssn.static_fit_mask(task);
  std::optional<uint32_t> fallback;
  for (auto it = ssn.gpu_free_index.lower_bound(task.req.milli_gpu); it != ssn.gpu_free_index.end(); ++it) {
    const uint32_t n = ssn.gpu_free_index.node_of(*it);
    if (!mask[n]) continue;
    const NodeInfo& node = ssn.nodes[n];
    if (!fits_idle_or_releasing(task, node)) continue;
    if (!ssn.prefers_idle_nodes || fits_idle(task, node)) return n;
    if (!fallback) fallback = n;
  }
  return fallback;
}

bool uses_whole_gpu_fast_path(const Session& ssn, const TaskInfo& task) {
  return ssn.whole_gpu_fast_path && task.gpu.kind == GpuRequestKind::kWhole &&
         (task.nominated_node.empty() || !ssn.honours_nominated_node);
}

bool allocate_task(Session& ssn, Statement& stmt, uint32_t task_id) {
  const TaskInfo& task = ssn.tasks[task_id];
  if (uses_whole_gpu_fast_path(ssn, task)) {
    auto best = best_node_for_whole_gpu_task(ssn, task);
    return best && place_on_node(ssn, stmt, task_id, *best);
  }
  std::vector<uint32_t> fitting;
  for (uint32_t n : ssn.statically_fitting_nodes(task)) {
    const NodeInfo& node = ssn.nodes[n];
    if (!fits_idle_or_releasing(task, node)) continue;
    if (capacity_rejection(ssn, task, node)) continue;
    fitting.push_back(n);
  }
  if (fitting.empty()) return false;
  for (const auto& fn : ssn.node_pre_order_fns) fn(task);
  std::vector<double> scores(fitting.size(), 0.0);
  for (const auto& fn : ssn.node_order_fns) fn(task, fitting, scores);
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
    if (place_on_node(ssn, stmt, task_id, fitting[best])) return true;
  }
  return false;
}

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
  for (const NodeInfo& node : ssn.nodes) {
    if (auto why = ssn.static_rejection(task, node)) {
      ++histogram[*why];
      continue;
    }
    auto reasons = resource_rejections(ssn, task, node);
    if (reasons.empty()) {
      if (auto why = capacity_rejection(ssn, task, node)) reasons.push_back(*why);
    }
    for (const auto& r : reasons) ++histogram[r];
  }
  std::vector<std::string> lines;
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
  const auto cp = stmt.checkpoint();
  for (size_t i = 0; i < tasks.size(); ++i) {
    if (allocate_task(ssn, stmt, tasks[i])) continue;
    stmt.rollback(cp);
    const TaskInfo& task = ssn.tasks[tasks[i]];
    const std::string why = explain_task_fit(ssn, task);
    const int32_t running = ssn.active_allocated_count(job);
    if (job.min_member > 1 && running < job.min_member) {
      job.fit_errors = {{"PodSchedulingErrors",
                         "Resources were found for " + std::to_string(i) + " pods while " +
                             std::to_string(job.min_member) +
                             " are required for gang scheduling. Additional pods cannot be scheduled due to: " + why}};
    } else {
      job.fit_errors = {{"PodSchedulingErrors", "Resources were not found for pod " + task.key + " due to: " + why}};
    }
    return false;
  }
  if (should_pipeline_job(ssn, job)) {
    stmt.convert_allocated_to_pipelined(job_id);
    pipelined = true;
  }
  return true;
}

void AllocateAction::execute(Session& ssn) {
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
    stmt.commit(std::string(name()), job.key);
    if (!pipelined && !already_allocated) job.last_start = ssn.now();
    if (ssn.has_pending_tasks(job)) tree.push(j);
  }
}

std::unique_ptr<Action> make_action(std::string_view name) {
  if (name == "allocate") return std::make_unique<AllocateAction>();
  return nullptr;
}

std::vector<std::string> run_actions(Session& ssn, const std::vector<std::string>& actions) {
  std::vector<std::string> skipped;
  for (const auto& a : actions) {
    auto action = make_action(a);
    if (!action) {
      skipped.push_back(a);
      continue;
    }
    action->execute(ssn);
  }
  return skipped;
}

}  // namespace kai::core
