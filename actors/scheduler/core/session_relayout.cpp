// A kept session whose pods or PodGroups were added, removed or regrouped (session_keeper.hpp): the
// pods are grouped again (with the grouping memo, from the last grouping: regrouping.hpp), each group
// whose pods and PodGroup are the very objects of the last build keeps its job and tasks, moved to
// where a build would put them, and only the other groups are derived. The result is the session a
// build from the same objects gives.
#include <algorithm>
#include <boost/unordered/unordered_flat_map.hpp>
#include <optional>
#include <string_view>
#include <vector>

#include "actors/scheduler/core/gpu_group_users.hpp"
#include "actors/scheduler/core/grouping.hpp"
#include "actors/scheduler/core/grouping_memo.hpp"
#include "actors/scheduler/core/inter_pod_constraints.hpp"
#include "actors/scheduler/core/regrouping.hpp"
#include "actors/scheduler/core/session.hpp"
#include "actors/scheduler/core/session_builder.hpp"

namespace kai::core {
namespace {

/// What identifies a group across groupings: its PodGroup object, else its first pod's.
const void* identity(const PodGroupAssignment& g, const model::ObjectRefs& objects) {
  if (g.pod_group != nullptr) return g.pod_group;
  return g.pods.empty() ? nullptr : objects.pods[g.pods.front()];
}

/// Everything a derivation reads of a group (session_builder_jobs.cpp derive_job) is the same, down
/// to its pods' objects: its job derived again would be the job it has.
bool same_group(const PodGroupAssignment& a, const model::ObjectRefs& a_objects, const PodGroupAssignment& b,
                const model::ObjectRefs& b_objects) {
  if (a.pods.size() != b.pods.size() || a.pod_group != b.pod_group || a.missing_pod_group != b.missing_pod_group)
    return false;
  for (size_t m = 0; m < a.pods.size(); ++m) {
    if (a_objects.pods[a.pods[m]] != b_objects.pods[b.pods[m]]) return false;
  }
  if (a.pod_sub_groups != b.pod_sub_groups || a.invalid != b.invalid) return false;
  // The rest is the first pod's and its grouper decision's (grouping.cpp): the same decision object
  // (the grouping memo hands it on) for the same pods is the same group.
  if (a.spec == b.spec) return true;
  const bool same_spec = a.spec != nullptr && b.spec != nullptr && *a.spec == *b.spec;
  return same_spec && a.namespace_ == b.namespace_ && a.name == b.name && a.uid == b.uid &&
         a.queue() == b.queue() && a.queue_defaulted() == b.queue_defaulted() &&
         a.priority_class_name() == b.priority_class_name() && a.preemptibility() == b.preemptibility() &&
         a.min_member == b.min_member && a.creation_timestamp == b.creation_timestamp;
}

/// `table` at least `size` long, with room to grow: a relayout that adds a job reallocates it only
/// now and then, not each time.
template <class T>
void grow_with_room(std::vector<T>& table, size_t size) {
  if (table.capacity() < size) table.reserve(size + size / 8);
  if (table.size() < size) table.resize(size);
}

/// How far past the expected old group a new one is looked for (the groups that went just before
/// it), and how many new groups in a row may go unmatched before the rest are matched by a table.
constexpr size_t kLookAhead = 16;

}  // namespace

const char* SessionBuilder::relayout(const model::ObjectRefs& old_objects) {
  const model::ObjectRefs& objects = *objects_;
  const PodPairing pods = pair_pods(old_objects.pods, objects.pods);
  renumber_reservation_pods(pods);
  follow_gpu_group_users(old_objects, pods);
  if (const char* refusal = follow_foreign_pods(old_objects, pods)) return refusal;
  bool reads_beyond_pod = false;
  GroupingMemo* memo = ssn_.options().grouping_memo;
  // Most cuts add, remove or replace a few pods: only they are grouped, from the last grouping.
  if (memo != nullptr) {
    std::optional<Regrouping> regrouped =
        regroup_pods(ssn_.groups, old_objects, objects, ssn_.options().scheduler_name,
                     ssn_.options().default_queue, ssn_.options().grouper, *memo, &pods);
    if (regrouped) {
      const char* refusal = lay_out(std::move(regrouped->groups), old_objects, &regrouped->kept_from);
      if (refusal != nullptr) memo->rehold();
      return refusal;
    }
  }
  std::vector<PodGroupAssignment> fresh = group_pods(objects, ssn_.options().scheduler_name,
                                                     ssn_.options().default_queue, ssn_.options().grouper, memo,
                                                     &reads_beyond_pod);
  if (reads_beyond_pod) return "the pod grouper reads other pods (an MPI launcher, a Spark driver, Knative revisions)";
  const char* refusal = lay_out(std::move(fresh), old_objects);
  // The build that follows groups the same objects again: the memo serves it too.
  if (refusal != nullptr && memo != nullptr) memo->rehold();
  return refusal;
}

void SessionBuilder::renumber_reservation_pods(const PodPairing& pods) {
  std::optional<std::vector<uint32_t>>& positions = ssn_.reservation_pods_;
  if (!positions) return;
  std::vector<uint32_t> renumbered;
  renumbered.reserve(positions->size());
  // A pod paired is the same object, so in the same namespace.
  for (uint32_t old : *positions) {
    if (pods.at[old] >= 0) renumbered.push_back(static_cast<uint32_t>(pods.at[old]));
  }
  const std::string_view reservation_namespace = model::kReservationNamespace;
  for (uint32_t k : pods.added) {
    if (objects_->pods[k]->meta.namespace_ == reservation_namespace) renumbered.push_back(k);
  }
  std::sort(renumbered.begin(), renumbered.end());
  *positions = std::move(renumbered);
}

void SessionBuilder::follow_gpu_group_users(const model::ObjectRefs& old_objects, const PodPairing& pods) {
  if (!ssn_.gpu_group_users_) return;
  GpuGroupUsers& users = *ssn_.gpu_group_users_;
  // A pod paired is the same object, which uses what it used.
  for (size_t i = 0; i < old_objects.pods.size(); ++i) {
    if (pods.at[i] < 0) users.count(*old_objects.pods[i], -1);
  }
  for (uint32_t k : pods.added) users.count(*objects_->pods[k], +1);
}

const char* SessionBuilder::follow_foreign_pods(const model::ObjectRefs& old_objects,
                                                const PodPairing& pods) {
  const std::string& mine = ssn_.options().scheduler_name;
  // Only pods that did not pair can have come, gone or changed; a pod both gone and come (moved in
  // the list) holds what it held.
  std::vector<const model::Pod*> went;
  std::vector<const model::Pod*> came;
  for (size_t i = 0; i < old_objects.pods.size(); ++i) {
    if (pods.at[i] < 0 && holds_node_as_foreign(*old_objects.pods[i], mine))
      went.push_back(old_objects.pods[i]);
  }
  for (uint32_t k : pods.added) {
    if (holds_node_as_foreign(*objects_->pods[k], mine)) came.push_back(objects_->pods[k]);
  }
  if (went.empty() && came.empty()) return nullptr;  // the usual case
  std::sort(went.begin(), went.end());
  std::sort(came.begin(), came.end());
  // What went gives back what it held; what came takes it. Sums and counts: the order does not
  // matter (a build adds them after the jobs).
  std::vector<uint32_t> nodes;
  const size_t scalars = ssn_.scalar_names_.size();
  bool changed = false;
  for (const model::Pod* pod : went) {
    if (!std::binary_search(came.begin(), came.end(), pod))
      changed |= replace_foreign_pod(pod, nullptr, nodes);
  }
  for (const model::Pod* pod : came) {
    if (!std::binary_search(went.begin(), went.end(), pod))
      changed |= replace_foreign_pod(nullptr, pod, nodes);
  }
  if (ssn_.scalar_names_.size() != scalars) return "a pod of another scheduler requests a resource new to the session";
  if (changed) foreign_pods_replaced(nodes);
  return nullptr;
}

const char* SessionBuilder::lay_out(std::vector<PodGroupAssignment> fresh,
                                    const model::ObjectRefs& old_objects,
                                    const std::vector<int32_t>* kept_from) {
  const model::ObjectRefs& objects = *objects_;

  // The old job of each new group that has one, unchanged. Both groupings list the groups in the
  // same order (grouping.hpp), so the old group is looked for where the last match left off, a few
  // groups on: a group not found there is new (or its old one is further on: derived anew). After
  // that many new groups in a row, the rest are looked for in a table of all the old ones.
  Session::Built& built = ssn_.built_;
  std::vector<int32_t> reused(fresh.size(), -1);
  std::vector<char> old_reused(ssn_.jobs.size(), 0);
  boost::unordered_flat_map<const void*, uint32_t> old_job_of;
  size_t misses_in_a_row = 0;
  auto find_old = [&](const void* id, size_t from) -> int64_t {
    if (misses_in_a_row < kLookAhead) {
      for (size_t j = from; j < ssn_.groups.size() && j < from + kLookAhead; ++j) {
        if (identity(ssn_.groups[j], old_objects) == id) {
          misses_in_a_row = 0;
          return static_cast<int64_t>(j);
        }
      }
      ++misses_in_a_row;
      return -1;
    }
    if (old_job_of.empty()) {
      old_job_of.reserve(ssn_.groups.size());
      for (uint32_t j = 0; j < ssn_.groups.size(); ++j) {
        if (const void* g = identity(ssn_.groups[j], old_objects)) old_job_of.emplace(g, j);
      }
    }
    auto it = old_job_of.find(id);
    return it == old_job_of.end() ? -1 : static_cast<int64_t>(it->second);
  };
  // A reused job's warning stays where the build put it, which holds because matches only go
  // forward (the reused jobs keep their order); no other job may have warned or warn now.
  size_t expected = 0;
  for (size_t i = 0; i < fresh.size() && kept_from != nullptr; ++i) {
    const int32_t j = (*kept_from)[i];
    if (j < 0) continue;
    reused[i] = j;
    old_reused[static_cast<size_t>(j)] = 1;
  }
  for (size_t i = 0; i < fresh.size() && kept_from == nullptr; ++i) {
    const void* id = identity(fresh[i], objects);
    const int64_t found = id == nullptr ? -1 : find_old(id, expected);
    if (found < 0) continue;
    const auto j = static_cast<uint32_t>(found);
    if (j < expected) continue;  // out of order: derived anew rather than moved back
    expected = j + 1;
    if (!same_group(ssn_.groups[j], old_objects, fresh[i], objects)) continue;
    reused[i] = static_cast<int32_t>(j);
    old_reused[j] = 1;
  }
  for (uint32_t j = 0; j < ssn_.jobs.size(); ++j) {
    if (old_reused[j] == 0 && built.warned[j] != 0) return "a job that went or changed had warned";
  }
  // A pod with inter-pod constraints needs the index a build makes.
  for (size_t i = 0; i < fresh.size(); ++i) {
    if (reused[i] >= 0) continue;
    for (uint32_t p : fresh[i].pods) {
      if (InterPodConstraints::constrains(*objects.pods[p])) return "a new or changed job has a pod with inter-pod constraints";
    }
  }

  // What is kept by job id follows the jobs to their new ids (Session::renumber_jobs).
  Session::Relaid& relaid = ssn_.relaid_;
  relaid.new_of_old.assign(ssn_.jobs.size(), -1);
  relaid.derived.clear();
  for (size_t i = 0; i < fresh.size(); ++i) {
    if (reused[i] >= 0) relaid.new_of_old[static_cast<size_t>(reused[i])] = static_cast<int32_t>(i);
  }

  // Out with the jobs that go or change: their tasks leave their nodes and queues.
  std::vector<uint32_t> nodes;
  for (uint32_t j = 0; j < ssn_.jobs.size(); ++j) {
    if (old_reused[j] == 0) take_out_tasks(j, nodes);
  }

  // The new layout: the build's order, each job's tasks together. The reused jobs keep their order
  // (a match only goes forward), and so do their tasks: each moves within its own table, those
  // moving towards the start first, from the start, then those moving towards the end, from the
  // end, so that nothing is overwritten before it moved (in order, a job's new place holds either
  // what went or what already moved). The places of the jobs derived below hold what was left there.
  size_t task_count = 0;
  std::vector<uint32_t> first_task(fresh.size());
  for (size_t i = 0; i < fresh.size(); ++i) {
    first_task[i] = static_cast<uint32_t>(task_count);
    task_count += fresh[i].pods.size();
  }
  // Each reused job's first task before the moves, read from the jobs in their old order.
  std::vector<uint32_t> old_first(fresh.size());
  for (size_t i = 0; i < fresh.size(); ++i) {
    if (reused[i] < 0) continue;
    const TaskRange& tasks = ssn_.jobs[static_cast<size_t>(reused[i])].tasks;
    old_first[i] = tasks.empty() ? first_task[i] : tasks.first();
  }
  grow_with_room(ssn_.jobs, fresh.size());
  grow_with_room(ssn_.tasks, task_count);
  for (size_t i = 0; i < fresh.size(); ++i) {
    if (reused[i] > static_cast<int64_t>(i)) ssn_.jobs[i] = std::move(ssn_.jobs[static_cast<size_t>(reused[i])]);
  }
  for (size_t i = fresh.size(); i-- > 0;) {
    if (reused[i] >= 0 && reused[i] < static_cast<int64_t>(i))
      ssn_.jobs[i] = std::move(ssn_.jobs[static_cast<size_t>(reused[i])]);
  }
  for (size_t i = 0; i < fresh.size(); ++i) {
    if (reused[i] < 0 || old_first[i] <= first_task[i]) continue;
    const uint32_t from = old_first[i];
    for (size_t m = 0; m < ssn_.jobs[i].tasks.size(); ++m) ssn_.tasks[first_task[i] + m] = std::move(ssn_.tasks[from + m]);
  }
  for (size_t i = fresh.size(); i-- > 0;) {
    if (reused[i] < 0 || old_first[i] >= first_task[i]) continue;
    const uint32_t from = old_first[i];
    for (size_t m = ssn_.jobs[i].tasks.size(); m-- > 0;) ssn_.tasks[first_task[i] + m] = std::move(ssn_.tasks[from + m]);
  }
  ssn_.jobs.resize(fresh.size());
  ssn_.tasks.resize(task_count);
  Session::Built next;
  next.tasks = task_count;
  next.warnings = built.warnings;
  next.invalid.resize(fresh.size());
  next.base_times.resize(fresh.size());
  next.warned.resize(fresh.size());
  next.pod_task.assign(objects.pods.size(), -1);
  for (size_t i = 0; i < fresh.size(); ++i) {
    if (reused[i] < 0) continue;
    const auto j = static_cast<uint32_t>(reused[i]);
    JobInfo& job = ssn_.jobs[i];
    const uint32_t from = old_first[i];
    const auto count = static_cast<uint32_t>(job.tasks.size());
    // A job that kept its place and its tasks' ids needs only its pods' tasks noted.
    if (j != i || from != first_task[i]) {
      for (uint32_t m = 0; m < count; ++m) ssn_.tasks[first_task[i] + m].job = static_cast<uint32_t>(i);
    }
    for (uint32_t m = 0; m < count; ++m)
      next.pod_task[fresh[i].pods[m]] = static_cast<int32_t>(first_task[i] + m);
    if (from != first_task[i]) {
      job.tasks = TaskRange(first_task[i], count);
      for (auto& ps : job.pod_sets) {
        for (uint32_t& t : ps.tasks) t = t - from + first_task[i];
      }
    }
    next.invalid[i] = built.invalid[j];
    next.base_times[i] = built.base_times[j];
    next.warned[i] = built.warned[j];
  }
  ssn_.journaled_.assign(ssn_.tasks.size(), 0);
  built = std::move(next);
  ssn_.groups = std::move(fresh);

  // In with the jobs derived anew, as the build derives them.
  const size_t scalars = ssn_.scalar_names_.size();
  for (size_t i = 0; i < ssn_.groups.size(); ++i) {
    if (reused[i] >= 0) continue;
    const auto job_id = static_cast<uint32_t>(i);
    relaid.derived.push_back(job_id);
    derive_job(ssn_.groups[i], job_id, first_task[i]);
    if (built.warned[i] != 0) return "a new or changed job warns";
    count_derived_tasks(job_id, nodes);
  }
  // A resource name new to the session would be numbered otherwise by a build, and a request's
  // resources are listed in the order of their numbers.
  if (ssn_.scalar_names_.size() != scalars) return "a pod requests a resource new to the session";
  index_pod_group_jobs(ssn_.groups, 0);
  update_node_indexes(nodes);
  return nullptr;
}

}  // namespace kai::core
