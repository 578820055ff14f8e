#include "actors/scheduler/core/session.hpp"

#include <algorithm>
#include <boost/unordered/unordered_flat_set.hpp>
#include <cstdio>
#include <functional>

#include "actors/scheduler/core/gpu_group_ids.hpp"
#include "actors/scheduler/core/gpu_group_users.hpp"
#include "actors/scheduler/core/grouping.hpp"
#include "actors/scheduler/core/inter_pod_constraints.hpp"
#include "actors/scheduler/core/node_accounting.hpp"
#include "actors/scheduler/core/plugin.hpp"
#include "actors/scheduler/core/pod_group_objects.hpp"
#include "actors/scheduler/core/queue_sums.hpp"
#include "actors/scheduler/core/session_builder.hpp"
#include "actors/scheduler/core/status_memo.hpp"
#include "k8s/model/well_known_names.hpp"

namespace kai::core {

Session::Session(const model::ClusterObjects& objects, SessionOptions options)
    : Session(model::ObjectRefs::of(objects), std::move(options)) {}

Session::Session(const model::ObjectRefs& objects, SessionOptions options)
    : options_(std::move(options)), rng_(options_.seed) {
  TaskLabelIndexes label_indexes;
  const bool inter_pod_needed = InterPodConstraints::needed(objects, &label_indexes);
  builder_ = std::make_unique<SessionBuilder>(*this, objects);
  builder_->index_labels(inter_pod_needed ? &label_indexes : nullptr);
  builder_->build();
  builder_->index_labels(nullptr);
  builder_->retarget(nullptr);  // the objects are the caller's: a refresh names the next ones
  built_.tasks = tasks.size();
  built_.warnings = warnings.size();
  times_generation_ = options_.job_times_generation;
  build_node_indexes();
  if (inter_pod_needed) inter_pod = std::make_unique<InterPodConstraints>(*this, objects, std::move(label_indexes));
  open_plugins();
}

Session::~Session() = default;

void Session::build_node_indexes() {
  node_name_ranks.build(nodes);
  const auto free_gpus = [](const NodeInfo& n) { return std::max<int64_t>(0, n.non_allocated_gpu_milli()); };
  const auto free_cpu = [](const NodeInfo& n) { return n.idle.milli_cpu + n.releasing.milli_cpu; };
  gpu_free_index.build(
      nodes, node_name_ranks, [](const NodeInfo& n) { return n.has_gpus(); }, free_gpus);
  shared_room_index.build(
      nodes, node_name_ranks,
      [](const NodeInfo& n) {
        return std::any_of(n.shared_gpus.begin(), n.shared_gpus.end(),
                           [](const SharedGpu& g) { return g.joinable(1); });
      },
      free_gpus);
  // Nodes without allocatable CPU have no placement score for CPU-only tasks and take none of them
  // (their idle plus releasing CPU is never above zero): the CPU fast path leaves them out.
  cpu_free_on_cpu_nodes.build(
      nodes, node_name_ranks, [](const NodeInfo& n) { return !n.has_gpus() && n.allocatable.milli_cpu > 0; },
      free_cpu);
  cpu_free_on_gpu_nodes.build(
      nodes, node_name_ranks, [](const NodeInfo& n) { return n.has_gpus() && n.allocatable.milli_cpu > 0; },
      free_cpu);
}

void Session::update_node_indexes(uint32_t n) {
  gpu_free_index.update(n);
  shared_room_index.update(n);
  cpu_free_on_cpu_nodes.update(n);
  cpu_free_on_gpu_nodes.update(n);
}

const JobsByUid& Session::jobs_by_uid() const {
  if (!jobs_by_uid_) {
    jobs_by_uid_ = std::make_unique<JobsByUid>();
    for (uint32_t j = 0; j < groups.size(); ++j) jobs_by_uid_->add(j, uid_of_job());
  }
  return *jobs_by_uid_;
}

bool Session::has_job(std::string_view uid) const {
  return job_of_uid(uid).has_value();
}

void Session::forget_jobs_by_uid() {
  jobs_by_uid_.reset();
}

const std::vector<uint32_t>& Session::reservation_pod_positions(const model::ObjectRefs& objects) const {
  if (!reservation_pods_) {
    reservation_pods_.emplace();
    const std::string_view reservation_namespace = model::kReservationNamespace;
    for (uint32_t i = 0; i < objects.pods.size(); ++i) {
      if (objects.pods[i]->meta.namespace_ == reservation_namespace) reservation_pods_->push_back(i);
    }
  }
  return *reservation_pods_;
}

const GpuGroupUsers& Session::gpu_group_users(const model::ObjectRefs& objects) const {
  if (!gpu_group_users_) gpu_group_users_ = std::make_unique<GpuGroupUsers>(objects.pods);
  return *gpu_group_users_;
}

GroupsWritten& Session::groups_written() const {
  if (!groups_written_) groups_written_ = std::make_unique<GroupsWritten>();
  return *groups_written_;
}

DeadlineIndex& Session::deadline_index() const {
  for (const auto& e : journal_) {
    if (e.task < tasks.size()) deadline_index_.mark(tasks[e.task].job);
  }
  for (const auto& [j, updates] : annotation_updates) deadline_index_.mark(j);
  return deadline_index_;
}

StatusMemo& Session::status_memo() const {
  if (!status_memo_) status_memo_ = std::make_unique<StatusMemo>();
  return *status_memo_;
}

void Session::open_plugins() {
  const PluginRegistry& registry = builtin_plugins();
  for (const auto& pc : options_.config.plugins) {
    const PluginFactory* factory = registry.find(pc.name);
    if (factory == nullptr) {
      warnings.push_back("plugin \"" + pc.name + "\" is unknown and was skipped");
      continue;
    }
    plugins_.push_back((*factory)(pc));
    plugins_.back()->on_session_open(*this);
  }
  // The fast path is exact only when GPU placement is binpack and no other scorer reorders whole-GPU
  // tasks: gpusharingorder and resourcetype never score them, nodeavailability outweighs placement.
  // Each plugin declares what it changes (Plugin::capabilities); the first plugin that ranks GPU nodes
  // by allocation decides whether placement is binpack.
  // For CPU-only tasks the ranking is lexicographic (nodeavailability 100 > resourcetype 10 >
  // placement 0..9) only while each of them is configured at most once, and it follows the CPU
  // indexes only under CPU binpack.
  bool placement_seen = false;
  int cpu_placements = 0, idle_preferences = 0, cpu_node_preferences = 0;
  bool cpu_binpack = false;
  for (const auto& plugin : plugins_) {
    const PluginCapabilities c = plugin->capabilities();
    if (!placement_seen && c.gpu_node_placement != NodePlacement::kNone) {
      placement_seen = true;
      gpu_fast_path = c.gpu_node_placement == NodePlacement::kMostAllocated;
    }
    if (c.cpu_node_placement != NodePlacement::kNone) {
      ++cpu_placements;
      cpu_binpack = c.cpu_node_placement == NodePlacement::kMostAllocated;
    }
    idle_preferences += c.prefers_idle_nodes;
    cpu_node_preferences += c.prefers_cpu_nodes_for_cpu_tasks;
    prefers_idle_nodes = prefers_idle_nodes || c.prefers_idle_nodes;
    honours_nominated_node = honours_nominated_node || c.honours_nominated_node;
    prefers_shared_groups = prefers_shared_groups || c.orders_shared_gpu_groups_first;
    prefers_cpu_nodes_for_cpu_tasks = prefers_cpu_nodes_for_cpu_tasks || c.prefers_cpu_nodes_for_cpu_tasks;
  }
  cpu_fast_path = cpu_placements == 1 && cpu_binpack && idle_preferences <= 1 && cpu_node_preferences <= 1;
}

uint32_t Session::scalar_id(const std::string& name) {
  auto [it, inserted] = scalar_ids_.emplace(name, static_cast<uint32_t>(scalar_names_.size()));
  if (inserted) scalar_names_.push_back(name);
  return it->second;
}

std::string Session::new_gpu_group_id() {
  // An RFC 4122 version-4 UUID from the session's seeded generator.
  const uint64_t hi = rng_();
  const uint64_t lo = rng_();
  return format_gpu_group_id(hi, lo);
}

const TaskInfo* Session::moved_to(uint32_t task) const {
  for (auto it = tasks.rbegin(); it != tasks.rend() && it->ghost; ++it) {
    if (it->ghost_of == static_cast<int32_t>(task) && it->status == PodStatus::kPipelined) return &*it;
  }
  return nullptr;
}

uint32_t Session::add_ghost(uint32_t task) {
  TaskInfo ghost = tasks[task];
  ghost.ghost = true;
  ghost.status = PodStatus::kPending;
  ghost.node = kNoNode;
  ghost.gpu_groups.clear();
  ghost.placed_portion = 0;
  ghost.ghost_of = static_cast<int32_t>(task);
  tasks.push_back(std::move(ghost));
  return static_cast<uint32_t>(tasks.size() - 1);
}

void Session::set_task_state(uint32_t task_id, PodStatus status, int32_t node,
                             const std::vector<std::string>& gpu_groups, int64_t placed_portion) {
  TaskInfo& task = tasks[task_id];
  if (!undoing_) {
    if (journaled_.size() <= task_id) journaled_.resize(tasks.size(), 0);
    if (journaled_[task_id] == 0) {
      journaled_[task_id] = 1;
      journal_.push_back(JournalEntry{task_id, task.status, task.node, task.gpu_groups, task.placed_portion});
    }
  }
  const int32_t old_node = task.node;
  if (task.node != kNoNode && is_active_used(task.status)) node_remove_task(nodes[task.node], task);
  account_task_in_queue(task, -1);
  if (!task.ghost) {
    jobs[task.job].active_allocated -= is_active_allocated(task.status);
    jobs[task.job].pending -= task.status == PodStatus::kPending;
  }
  for (const auto& fn : allocate_event_fns) fn(task, -1);
  if (inter_pod) inter_pod->on_task(task_id, -1);
  task.status = status;
  task.node = node;
  if (&task.gpu_groups != &gpu_groups) task.gpu_groups = gpu_groups;
  task.placed_portion = placed_portion;
  if (task.node != kNoNode && is_active_used(task.status)) node_add_task(nodes[task.node], task);
  account_task_in_queue(task, +1);
  if (!task.ghost) {
    jobs[task.job].active_allocated += is_active_allocated(task.status);
    jobs[task.job].pending += task.status == PodStatus::kPending;
  }
  for (const auto& fn : allocate_event_fns) fn(task, +1);
  if (inter_pod) inter_pod->on_task(task_id, +1);
  for (int32_t n : {old_node, task.node == old_node ? kNoNode : task.node}) {
    if (n == kNoNode) continue;
    update_node_indexes(static_cast<uint32_t>(n));
  }
}

void Session::record(events::Decision d) {
  d.seq = decisions.size() + 1;
  decisions.push_back(std::move(d));
}

bool Session::job_less(const JobInfo& a, const JobInfo& b) const {
  for (const auto& fn : job_order_fns) {
    if (int c = fn(a, b); c != 0) return c < 0;
  }
  if (a.creation != b.creation) return a.creation < b.creation;
  return a.uid != b.uid ? a.uid < b.uid : a.key < b.key;
}

bool Session::task_less(const TaskInfo& a, const TaskInfo& b) const {
  for (const auto& fn : task_order_fns) {
    if (int c = fn(a, b); c != 0) return c < 0;
  }
  if (a.creation != b.creation) return a.creation < b.creation;
  return a.uid != b.uid ? a.uid < b.uid : a.key < b.key;
}

bool Session::pod_set_less(const JobInfo& job, const PodSetInfo& a, const PodSetInfo& b) const {
  for (const auto& fn : pod_set_order_fns) {
    if (int c = fn(job, a, b); c != 0) return c < 0;
  }
  return a.name < b.name;
}

int32_t Session::active_allocated_count(const JobInfo& job) const {
  return job.active_allocated;
}

int32_t Session::active_used_count(const JobInfo& job) const {
  int32_t n = 0;
  for (uint32_t t : job.tasks) n += is_active_used(tasks[t].status);
  return n;
}

int32_t Session::pod_set_active_allocated(const PodSetInfo& ps) const {
  int32_t n = 0;
  for (uint32_t t : ps.tasks) n += is_active_allocated(tasks[t].status);
  return n;
}

bool Session::has_pending_tasks(const JobInfo& job) const {
  return job.pending > 0;
}

std::vector<uint32_t> Session::tasks_to_allocate(const JobInfo& job) const {
  std::vector<const PodSetInfo*> sets;
  for (const auto& ps : job.pod_sets) {
    for (uint32_t t : ps.tasks) {
      if (tasks[t].status == PodStatus::kPending) {
        sets.push_back(&ps);
        break;
      }
    }
  }
  std::stable_sort(sets.begin(), sets.end(),
                   [&](const PodSetInfo* a, const PodSetInfo* b) { return pod_set_less(job, *a, *b); });
  size_t unsatisfied = 0;
  for (const auto* ps : sets) unsatisfied += pod_set_active_allocated(*ps) < ps->min_available;
  const size_t take_sets = std::max<size_t>(unsatisfied, 1);
  std::vector<uint32_t> out;
  for (size_t i = 0; i < sets.size() && i < take_sets; ++i) {
    const PodSetInfo& ps = *sets[i];
    std::vector<uint32_t> pending;
    for (uint32_t t : ps.tasks) {
      if (tasks[t].status == PodStatus::kPending) pending.push_back(t);
    }
    std::stable_sort(pending.begin(), pending.end(),
                     [&](uint32_t a, uint32_t b) { return task_less(tasks[a], tasks[b]); });
    const int32_t active = pod_set_active_allocated(ps);
    const size_t want = active < ps.min_available ? static_cast<size_t>(ps.min_available - active) : 1;
    for (size_t k = 0; k < pending.size() && k < want; ++k) out.push_back(pending[k]);
  }
  return out;
}

QueueQuantities Session::queue_request_of(std::span<const uint32_t> task_ids) const {
  QueueQuantities q;
  for (uint32_t id : task_ids) {
    const TaskInfo& t = tasks[id];
    QueueQuantities one;
    one.cpu = static_cast<double>(t.req.milli_cpu);
    one.memory = static_cast<double>(t.req.memory);
    one.gpu = static_cast<double>(t.req.milli_gpu) / 1000.0 + t.mig_gpus;
    // gpu-memory tasks count no GPU at the job level (KAI's GetGpusQuota), fractions count their portion.
    if (t.gpu.kind == GpuRequestKind::kFraction) {
      one.gpu += static_cast<double>(t.gpu.fraction_milli) * t.gpu.num_devices / 1000.0;
    }
    add_queue_quantities(q, one);
  }
  return q;
}

QueueQuantities Session::allocated_quantities(const TaskInfo& task) const {
  QueueQuantities q;
  q.cpu = static_cast<double>(task.req.milli_cpu);
  q.memory = static_cast<double>(task.req.memory);
  q.gpu = static_cast<double>(task.req.milli_gpu) / 1000.0 + task.mig_gpus;
  if (task.gpu.is_shared()) q.gpu += static_cast<double>(task.placed_portion) * task.gpu.num_devices / 1000.0;
  q.gpu = on_gpu_grid(q.gpu);
  return q;
}

void Session::account_task_in_queue(const TaskInfo& task, int sign) {
  const JobInfo& job = jobs[task.job];
  if (job.queue == kNoQueue || task.ghost) return;
  QueueQuantities q;
  q.cpu = static_cast<double>(task.req.milli_cpu);
  q.memory = static_cast<double>(task.req.memory);
  double gpus = static_cast<double>(task.req.milli_gpu) / 1000.0 + task.mig_gpus;
  const bool allocated = is_allocated_status(task.status);
  if (task.gpu.is_shared()) {
    if (allocated) {
      gpus += static_cast<double>(task.placed_portion) * task.gpu.num_devices / 1000.0;
    } else if (task.gpu.kind == GpuRequestKind::kFraction) {
      gpus += static_cast<double>(task.gpu.fraction_milli) * task.gpu.num_devices / 1000.0;
    } else {
      gpus += static_cast<double>(task.gpu.memory_mib) * task.gpu.num_devices /
              static_cast<double>(min_node_gpu_memory_mib);
    }
  }
  q.gpu = gpus;
  const double s = sign;
  if (!allocated && task.status != PodStatus::kPending) return;
  for (int32_t id = job.queue; id != kNoQueue; id = queues[id].parent) {
    QueueInfo& queue = queues[id];
    add_queue_quantities(queue.request, q, s);
    if (allocated) {
      add_queue_quantities(queue.allocated, q, s);
      if (!job.preemptible) add_queue_quantities(queue.allocated_non_preemptible, q, s);
    }
  }
}

const Session::StaticFit& Session::static_fit(const TaskInfo& task) {
  const auto sig = static_cast<size_t>(task.constraints);
  if (static_fit_cache_.size() <= sig) static_fit_cache_.resize(sig + 1);
  auto& slot = static_fit_cache_[sig];
  if (!slot) {
    slot = std::make_unique<StaticFit>();
    slot->mask.assign(nodes.size(), 0);
    for (uint32_t i = 0; i < nodes.size(); ++i) {
      if (static_rejection(task, nodes[i])) continue;
      slot->nodes.push_back(i);
      slot->mask[i] = 1;
    }
  }
  return *slot;
}

const std::vector<uint32_t>& Session::statically_fitting_nodes(const TaskInfo& task) {
  return static_fit(task).nodes;
}

const std::vector<char>& Session::static_fit_mask(const TaskInfo& task) {
  return static_fit(task).mask;
}

std::optional<std::string> Session::static_rejection(const TaskInfo& task, const NodeInfo& node) const {
  for (const auto& fn : static_predicate_fns) {
    if (auto why = fn(task, node)) return why;
  }
  return std::nullopt;
}

}  // namespace kai::core
