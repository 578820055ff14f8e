// A kept session between cycles (session_keeper.hpp): undoing what a cycle changed, and deriving
// again the jobs whose pods or PodGroup changed. Both end where a build from the same objects would.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "actors/scheduler/core/gpu_group_users.hpp"
#include "actors/scheduler/core/node_accounting.hpp"
#include "actors/scheduler/core/paired_lists.hpp"
#include "actors/scheduler/core/plugin.hpp"
#include "actors/scheduler/core/pod_group_objects.hpp"
#include "actors/scheduler/core/session.hpp"
#include "actors/scheduler/core/session_builder.hpp"
#include "actors/scheduler/core/status_memo.hpp"

namespace kai::core {
namespace {

/// What the actions read of a pod through its task (the predicates read its spec) is the same: all
/// of it but the status and resourceVersion, which reach the actions only through the task's fields.
bool same_spec(const model::Pod& a, const model::Pod& b) {
  if (&a == &b) return true;
  model::Pod x = a, y = b;
  for (model::Pod* p : {&x, &y}) {
    p->meta.resource_version.clear();
    p->phase.clear();
    p->conditions.clear();
  }
  return x == y;
}

/// Per-job flags `old` moved to a relayout's numbering (`new_of_old`, `jobs` jobs now): a job that
/// kept its place keeps its flag, one derived anew has none.
std::vector<char> flags_renumbered(const std::vector<char>& old, const std::vector<int32_t>& new_of_old,
                                   size_t jobs) {
  std::vector<char> flags(jobs, 0);
  for (size_t j = 0; j < new_of_old.size() && j < old.size(); ++j) {
    if (new_of_old[j] >= 0) flags[static_cast<size_t>(new_of_old[j])] = old[j];
  }
  return flags;
}

}  // namespace

void Session::undo_cycle() {
  plugins_.clear();
  job_order_fns.clear();
  task_order_fns.clear();
  pod_set_order_fns.clear();
  queue_order_fn = nullptr;
  node_pre_order_fns.clear();
  node_order_fns.clear();
  gpu_order_fns.clear();
  static_predicate_fns.clear();
  job_capacity_fns.clear();
  task_capacity_fns.clear();
  allocate_event_fns.clear();
  victim_filter_fns.clear();
  reclaim_validator_fns.clear();
  can_reclaim_fns.clear();
  reclaim_message_fn = nullptr;
  gpu_fast_path = false;
  cpu_fast_path = false;
  prefers_idle_nodes = false;
  prefers_cpu_nodes_for_cpu_tasks = false;
  honours_nominated_node = false;
  prefers_shared_groups = false;
  topology_plugin = false;
  inter_pod_predicates = false;
  pod_affinity_scoring = false;
  // Each task back to its state before its first change; the sums follow, as for a rollback.
  // The jobs the last cycle's actions moved a task of: their deadlines are read again.
  for (const auto& e : journal_) {
    if (e.task < tasks.size()) deadline_index_.mark(tasks[e.task].job);
  }
  undoing_ = true;
  for (auto it = journal_.rbegin(); it != journal_.rend(); ++it) {
    set_task_state(it->task, it->status, it->node, it->gpu_groups, it->placed_portion);
  }
  undoing_ = false;
  for (const auto& e : journal_) journaled_[e.task] = 0;
  journal_.clear();
  tasks.resize(built_.tasks);  // the victim solver's ghosts
  if (journaled_.size() > tasks.size()) journaled_.resize(tasks.size());
  // Only the jobs the last cycle gave reasons have any beyond their input's (note_outcome found
  // them; a cycle that did not note its outcome leaves every job to look at).
  auto clear_reasons = [&](size_t j) {
    jobs[j].invalid.resize(built_.invalid[j]);
    jobs[j].fit_errors.clear();
  };
  if (outcome_.scanned) {
    for (uint32_t j : outcome_.with_reasons) clear_reasons(j);
  } else {
    for (size_t j = 0; j < jobs.size(); ++j) clear_reasons(j);
  }
  outcome_.scanned = false;
  outcome_.with_reasons.clear();
  outcome_.repeated = false;
  for (auto& q : queues) q.fair_share = {};
  // The jobs whose times the actions set (each with an annotation to write): a refresh takes them
  // back from the options, whatever else changed.
  for (const auto& [j, updates] : annotation_updates) {
    times_set_.push_back(j);
    deadline_index_.mark(j);
  }
  annotation_updates.clear();
  decisions.clear();
  warnings.resize(built_.warnings);
  eviction_cache.reset();
}

bool Session::refresh(const model::ObjectRefs& objects, const SessionOptions& options,
                      const std::vector<uint32_t>& changed_pods, const std::vector<uint32_t>& changed_pod_groups,
                      const std::vector<std::pair<const model::Node*, const model::Node*>>& replaced_nodes,
                      const model::ObjectRefs* regroup_from, const model::ObjectRefs* previous) {
  auto refuse = [&](const char* why) {
    refusal_ = why;
    return false;
  };
  // The inter-pod index and a grouping that read other pods follow every pod: not kept.
  if (inter_pod) return refuse("the session indexes inter-pod constraints");
  if (built_.grouping_reads_beyond_pod) {
    return refuse("the pod grouper reads other pods (an MPI launcher, a Spark driver, Knative revisions)");
  }
  if (regroup_from != nullptr) return relayout(objects, options, replaced_nodes, *regroup_from);
  if (objects.pods.size() != built_.pod_task.size() || objects.pod_groups.size() != built_.pod_group_job.size())
    return refuse("pods or PodGroups were added or removed");
  std::vector<uint32_t> dirty;
  for (uint32_t k : changed_pod_groups) {
    if (built_.pod_group_job[k] < 0) return refuse("a changed PodGroup has no job");
    dirty.push_back(static_cast<uint32_t>(built_.pod_group_job[k]));
  }
  std::vector<uint32_t> untasked;  // pods of other schedulers, and ours that are no task
  for (uint32_t p : changed_pods) {
    if (built_.pod_task[p] < 0) {
      untasked.push_back(p);
      continue;
    }
    dirty.push_back(tasks[static_cast<uint32_t>(built_.pod_task[p])].job);
  }
  if (!untasked.empty() && previous == nullptr) {
    return refuse("a pod of another scheduler (a GPU reservation pod, say) changed on a node");
  }
  std::sort(dirty.begin(), dirty.end());
  dirty.erase(std::unique(dirty.begin(), dirty.end()), dirty.end());
  // A job whose derivation warns would repeat or drop its warning out of the build's order.
  for (uint32_t j : dirty) {
    if (built_.warned[j] != 0) return refuse("a changed job had warned");
  }

  // A quiet last cycle (decided nothing, moved no task for good, wrote no annotation) left its state
  // as it found it (the victim solver's ghosts aside, which belong to no job and hold nothing once
  // rolled back): if the refresh changes nothing the actions read either, they would repeat
  // themselves.
  const bool quiet = outcome_.scanned && decisions.empty() && annotation_updates.empty() && moved_no_task();
  std::vector<std::pair<uint32_t, std::vector<FitReason>>> reasons;
  if (quiet) {
    // The outcome noted lists every job with reasons (note_outcome).
    for (uint32_t j : outcome_.with_reasons) {
      if (!jobs[j].fit_errors.empty()) reasons.emplace_back(j, std::move(jobs[j].fit_errors));
    }
  }
  outcome_.same_inputs = false;
  outcome_.reasons.clear();
  undo_cycle();
  // What the actions read of the jobs about to be derived again, as the last cycle had it.
  std::vector<JobInfo> jobs_before;
  std::vector<TaskInfo> tasks_before;
  if (quiet) {
    for (uint32_t j : dirty) {
      jobs_before.push_back(jobs[j]);
      for (uint32_t t : jobs[j].tasks) tasks_before.push_back(tasks[t]);
    }
  }
  take_objects(options, replaced_nodes);
  if (status_memo_ && status_memo_->primed) {
    // The status pass follows the PodGroups replaced and the jobs derived again; without the old
    // objects it cannot, and starts afresh.
    if (previous == nullptr && !changed_pod_groups.empty()) {
      status_memo_.reset();
    } else {
      for (uint32_t k : changed_pod_groups)
        status_memo_->replace_pod_group(*previous->pod_groups[k], *objects.pod_groups[k]);
      for (uint32_t j : dirty) status_memo_->unsettle(j);
    }
  }
  // The groups whose PodGroup and pods needed nothing: not those derived again, nor, when a pod of
  // ours that is no task changed (it may be in a group), any.
  if (groups_written_) {
    const bool ours_untasked = std::any_of(untasked.begin(), untasked.end(), [&](uint32_t p) {
      return objects.pods[p]->scheduler_name == options.scheduler_name;
    });
    if (ours_untasked) {
      groups_written_.reset();
    } else {
      for (uint32_t j : dirty) groups_written_->unmark(j);
    }
  }
  // The GPU groups the pods use follow the pods replaced; without the old objects they are counted
  // afresh when next asked.
  if (gpu_group_users_) {
    if (previous == nullptr && !changed_pods.empty()) {
      gpu_group_users_.reset();
    } else {
      for (uint32_t p : changed_pods) gpu_group_users_->replace(*previous->pods[p], *objects.pods[p]);
    }
  }
  for (uint32_t k : changed_pod_groups) {
    const auto j = static_cast<uint32_t>(built_.pod_group_job[k]);
    // The index of jobs by uid holds the uid's hash, which the new object keeps (session_keeper.cpp
    // compares the uids).
    groups[j].pod_group = objects.pod_groups[k];
  }
  builder_->retarget(&objects);
  // What a changed pod of another scheduler holds on its node, taken back and put anew (a build
  // accounts them after the jobs: sums and counts, whose order does not matter).
  bool foreign_changed = false;
  if (!untasked.empty()) {
    std::vector<uint32_t> nodes;
    const size_t scalars = scalar_names_.size();
    for (uint32_t p : untasked) foreign_changed |= builder_->replace_foreign_pod(previous->pods[p], objects.pods[p], nodes);
    // A resource name new to the session would be numbered otherwise by a build (session_relayout.cpp).
    if (scalar_names_.size() != scalars) {
      builder_->retarget(nullptr);
      return refuse("a pod of another scheduler requests a resource new to the session");
    }
    if (foreign_changed) builder_->foreign_pods_replaced(nodes);
  }
  for (uint32_t j : dirty) builder_->rederive_job(j);
  builder_->retarget(nullptr);
  for (uint32_t j : dirty) {
    if (built_.warned[j] != 0) return refuse("a changed job warns");
  }
  const bool same = quiet && !foreign_changed && same_for_actions(jobs_before, tasks_before, dirty);
  if (take_times_and_usage(false) && same) {
    outcome_.same_inputs = true;
    outcome_.reasons = std::move(reasons);
  }
  open_plugins();
  return true;
}

bool Session::relayout(const model::ObjectRefs& objects, const SessionOptions& options,
                       const std::vector<std::pair<const model::Node*, const model::Node*>>& replaced_nodes,
                       const model::ObjectRefs& old_objects) {
  outcome_.same_inputs = false;
  outcome_.reasons.clear();
  undo_cycle();
  take_objects(options, replaced_nodes);
  // reservation_pods_: by position, renumbered by the relayout (session_relayout.cpp); the jobs by
  // uid, the deadlines, the jobs whose times were set and the status pass's memo: by job id,
  // renumbered below.
  builder_->retarget(&objects);
  const char* refusal = builder_->relayout(old_objects);
  builder_->retarget(nullptr);
  if (refusal != nullptr) {
    refusal_ = refusal;
    return false;
  }
  renumber_jobs();
  follow_pod_groups_in_status_memo(old_objects.pod_groups, objects.pod_groups);
  renumber_groups_written();
  relaid_ = {};
  // The jobs derived anew took their times; the others take, as after a refresh, those of the job
  // state that changed and those the last cycle's actions set.
  take_times_and_usage(false);
  open_plugins();
  return true;
}

void Session::renumber_jobs() {
  const std::vector<int32_t>& new_of_old = relaid_.new_of_old;
  if (jobs_by_uid_) {
    if (jobs_by_uid_->renumber(new_of_old)) {
      for (uint32_t j : relaid_.derived) jobs_by_uid_->add(j, uid_of_job());
    } else {
      forget_jobs_by_uid();
    }
  }
  deadline_index_.renumber(new_of_old);
  std::erase_if(times_set_, [&](uint32_t j) { return j >= new_of_old.size() || new_of_old[j] < 0; });
  for (uint32_t& j : times_set_) j = static_cast<uint32_t>(new_of_old[j]);
  // The jobs derived anew took their times from these options (derive_job): only their deadlines
  // are to be read.
  for (uint32_t j : relaid_.derived) deadline_index_.mark(j);
}

void Session::renumber_groups_written() {
  if (!groups_written_ || groups_written_->in_sync.empty()) return;
  groups_written_->in_sync = flags_renumbered(groups_written_->in_sync, relaid_.new_of_old, groups.size());
}

void Session::follow_pod_groups_in_status_memo(const std::vector<const model::PodGroup*>& before,
                                               const std::vector<const model::PodGroup*>& now) {
  if (!status_memo_ || !status_memo_->primed) {
    status_memo_.reset();
    return;
  }
  StatusMemo& memo = *status_memo_;
  // The groups that kept their job stay settled where they are now; those derived anew are not.
  memo.settled = flags_renumbered(memo.settled, relaid_.new_of_old, jobs.size());
  // The queues' sums of the PodGroups' watched lists: out with the PodGroups that went (or were
  // replaced), in with those that came.
  const auto [went, came] = went_and_came(before, now);
  for (const model::PodGroup* pg : went) memo.watched[pg->queue].add(pg->resources_status, -1);
  for (const model::PodGroup* pg : came) memo.watched[pg->queue].add(pg->resources_status, +1);
  memo.totals_current = false;
}

void Session::take_objects(const SessionOptions& options,
                           const std::vector<std::pair<const model::Node*, const model::Node*>>& replaced_nodes) {
  // Nodes that differ at most in their resourceVersion (session_keeper.cpp): the same node, read
  // from its new object.
  for (const auto& [old_object, new_object] : replaced_nodes) {
    auto it = node_index.find(new_object->meta.name);
    if (it != node_index.end() && nodes[it->second].object == old_object) nodes[it->second].object = new_object;
  }
  options_ = options;
  rng_.seed(options_.seed);
}

bool Session::take_times_and_usage(bool every_job) {
  bool same = true;
  for (auto& q : queues) {
    const QueueQuantities usage = SessionBuilder::queue_usage_of(q.name, options_);
    same = same && usage.gpu == q.usage.gpu && usage.cpu == q.usage.cpu && usage.memory == q.usage.memory;
    q.usage = usage;
  }
  auto take = [&](uint32_t j) {
    deadline_index_.mark(j);
    const JobTimes before{jobs[j].last_start, jobs[j].stale_since, jobs[j].last_eviction};
    SessionBuilder::set_job_times(jobs[j], built_.base_times[j], options_);
    same = same && before == JobTimes{jobs[j].last_start, jobs[j].stale_since, jobs[j].last_eviction};
  };
  // The other jobs' entries are those the session took last time (JobStateMemo), and their base
  // times are their build's or derivation's, which a job derived again took with the new table.
  const bool changed_only = !every_job && options_.job_times_changed != nullptr &&
                            options_.job_times_generation != 0 &&
                            options_.job_times_generation == times_generation_ + 1 && jobs_by_uid().unique();
  if (changed_only) {
    for (const std::string& uid : *options_.job_times_changed) {
      if (auto j = job_of_uid(uid)) take(*j);
    }
    for (uint32_t j : times_set_) take(j);
  } else {
    for (uint32_t j = 0; j < jobs.size(); ++j) take(j);
    deadline_index_.reset();
  }
  times_generation_ = options_.job_times_generation;
  times_set_.clear();
  return same;
}

bool Session::same_for_actions(const std::vector<JobInfo>& jobs_before, const std::vector<TaskInfo>& tasks_before,
                               const std::vector<uint32_t>& dirty) const {
  size_t next_task = 0;
  for (size_t i = 0; i < dirty.size(); ++i) {
    const JobInfo& now = jobs[dirty[i]];
    JobInfo before = jobs_before[i];
    before.object = now.object;  // a new object of the same PodGroup: what the job took from it is compared
    if (!(before == now)) return false;
    for (uint32_t t : now.tasks) {
      TaskInfo task = tasks_before[next_task++];
      const model::Pod* old_pod = task.pod;
      task.pod = tasks[t].pod;
      if (!(task == tasks[t]) || !same_spec(*old_pod, *tasks[t].pod)) return false;
    }
  }
  return true;
}

bool Session::moved_no_task() const {
  for (const JournalEntry& e : journal_) {
    const TaskInfo& t = tasks[e.task];
    if (t.status != e.status || t.node != e.node || t.gpu_groups != e.gpu_groups ||
        t.placed_portion != e.placed_portion) {
      return false;
    }
  }
  return true;
}

bool Session::repeat_last_outcome(bool backing_off) {
  // The last deadline's second is left out: it was rounded up from the moment a victim's protection
  // or a gang's grace ends.
  const bool repeat = outcome_.same_inputs && !outcome_.backing_off && !backing_off &&
                      (!outcome_.next_deadline || now_ms() < (*outcome_.next_deadline - 1) * 1000);
  outcome_.same_inputs = false;
  if (repeat) {
    // The jobs with reasons are these (no action runs, and no group is backing off): note_outcome
    // need not look at every job for them.
    outcome_.with_reasons.clear();
    for (auto& [j, why] : outcome_.reasons) {
      jobs[j].fit_errors = std::move(why);
      outcome_.with_reasons.push_back(j);
    }
    outcome_.repeated = true;
  }
  outcome_.reasons.clear();
  return repeat;
}

void Session::note_outcome(std::optional<int64_t> next_deadline, bool backing_off) {
  outcome_.backing_off = backing_off;
  outcome_.next_deadline = next_deadline;
  if (!outcome_.repeated) {
    outcome_.with_reasons.clear();
    for (uint32_t j = 0; j < jobs.size(); ++j) {
      if (!jobs[j].fit_errors.empty() || jobs[j].invalid.size() != built_.invalid[j])
        outcome_.with_reasons.push_back(j);
    }
  }
  outcome_.repeated = false;
  outcome_.scanned = true;
}

void SessionBuilder::rederive_job(uint32_t job_id) {
  ssn_.deadline_index_.mark(job_id);
  std::vector<uint32_t> nodes;
  // Out with the job's tasks as they stand (their built state: the cycle was undone)...
  take_out_tasks(job_id, nodes);
  // ...and in with them as the objects say now, at the same ids (the group and its pods' positions
  // are unchanged).
  derive_job(ssn_.groups[job_id], job_id, ssn_.jobs[job_id].tasks.first());
  count_derived_tasks(job_id, nodes);
  update_node_indexes(nodes);
}

void SessionBuilder::take_out_tasks(uint32_t job_id, std::vector<uint32_t>& nodes) {
  for (uint32_t t : ssn_.jobs[job_id].tasks) {
    const TaskInfo& task = ssn_.tasks[t];
    if (task.node != kNoNode && is_active_used(task.status)) {
      node_remove_task(ssn_.nodes[static_cast<uint32_t>(task.node)], task);
      nodes.push_back(static_cast<uint32_t>(task.node));
    }
    ssn_.account_task_in_queue(task, -1);
  }
}

void SessionBuilder::count_derived_tasks(uint32_t job_id, std::vector<uint32_t>& nodes) {
  JobInfo& job = ssn_.jobs[job_id];
  for (uint32_t t : job.tasks) {
    const TaskInfo& task = ssn_.tasks[t];
    ssn_.account_task_in_queue(task, +1);
    job.active_allocated += is_active_allocated(task.status);
    job.pending += task.status == PodStatus::kPending;
    if (task.node != kNoNode) nodes.push_back(static_cast<uint32_t>(task.node));
  }
}

void SessionBuilder::update_node_indexes(std::vector<uint32_t>& nodes) {
  std::sort(nodes.begin(), nodes.end());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  for (uint32_t n : nodes) {
    ssn_.update_node_indexes(n);
  }
}

}  // namespace kai::core
