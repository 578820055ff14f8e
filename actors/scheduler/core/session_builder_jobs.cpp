#include <algorithm>
#include <cstdint>
#include <set>
#include <string>

#include "actors/scheduler/core/gpu_group_ids.hpp"
#include "actors/scheduler/core/gpu_group_users.hpp"
#include "actors/scheduler/core/node_accounting.hpp"
#include "actors/scheduler/core/plugins/builtin.hpp"
#include "actors/scheduler/core/session_builder.hpp"
#include "actors/scheduler/core/sub_group_tree.hpp"
#include "actors/scheduler/core/topology_scopes.hpp"
#include "actors/scheduler/core/workload_groupers.hpp"
#include "k8s/model/namespaced_key.hpp"
#include "k8s/model/time.hpp"

namespace kai::core {
namespace {

/// Subgroups a job may have: a task names its own by a 16-bit index.
constexpr size_t kMaxPodSets = size_t{UINT16_MAX} + 1;

}  // namespace

void SessionBuilder::build_priority_classes() {
  for (const auto* pc_ptr : objects_->priority_classes) {
    const auto& pc = *pc_ptr;
    priority_classes_.emplace(pc.meta.name, pc.value);
    if (pc.global_default) global_default_priority_ = pc.value;
  }
}

void SessionBuilder::build_bind_requests() {
  for (const auto* br_ptr : objects_->bind_requests) {
    const auto& br = *br_ptr;
    const bool failed =
        br.phase == "Failed" && (!br.backoff_limit || br.failed_attempts >= *br.backoff_limit);
    if (failed || !ssn_.node_index.count(br.selected_node)) continue;  // deleted by KAI next cycle
    bind_requests_[{br.meta.namespace_, br.pod_name}] = &br;
  }
}

int32_t SessionBuilder::priority_of(const std::string& class_name, std::string& warning) {
  if (class_name.empty()) return global_default_priority_.value_or(50);
  if (auto it = priority_classes_.find(class_name); it != priority_classes_.end()) return it->second;
  if (int32_t v = builtin_priority_class_value(class_name); v >= 0) return v;
  warning = "priority class \"" + class_name + "\" not found; using the default priority";
  return global_default_priority_.value_or(50);
}

PodStatus SessionBuilder::derive_status(const model::Pod& pod, const model::BindRequest*& bind_request) {
  bind_request = nullptr;
  if (pod.phase == "Succeeded") return PodStatus::kSucceeded;
  if (pod.phase == "Failed") return PodStatus::kFailed;
  if (pod.phase == "Running")
    return pod.meta.deletion_timestamp ? PodStatus::kReleasing : PodStatus::kRunning;
  if (pod.phase == "Pending" || pod.phase.empty()) {
    if (pod.meta.deletion_timestamp) return PodStatus::kReleasing;
    if (!pod.node_name.empty()) return PodStatus::kBound;
    if (auto it = bind_requests_.find({pod.meta.namespace_, pod.meta.name}); it != bind_requests_.end()) {
      bind_request = it->second;
      return PodStatus::kBinding;
    }
    if (pod.scheduling_gates > 0) return PodStatus::kGated;
    return PodStatus::kPending;
  }
  return PodStatus::kUnknown;
}

int32_t SessionBuilder::constraint_signature(const model::Pod& pod, const TaskInfo& t) {
  // Most pods constrain nothing but their GPU kind: their signature is remembered per kind, so that
  // a session build does not spell and look up the same key for each of them.
  const bool plain = pod.node_selector.empty() && !pod.required_node_affinity && pod.tolerations.empty();
  const size_t plain_slot = static_cast<size_t>(t.gpu.kind) * 2 + (t.legacy_mig ? 1 : 0);
  if (plain && plain_slot < plain_signatures_.size() && plain_signatures_[plain_slot] >= 0)
    return plain_signatures_[plain_slot];
  std::string key;
  key.reserve(64);
  key += std::to_string(static_cast<int>(t.gpu.kind));
  key += t.legacy_mig ? "L" : "-";
  for (const auto& [k, v] : pod.node_selector) key.append("|s").append(k).append("=").append(v);
  if (pod.required_node_affinity) {
    key += "|a";
    for (const auto& term : *pod.required_node_affinity) {
      key += "(";
      for (const auto* list : {&term.match_expressions, &term.match_fields}) {
        key += list == &term.match_fields ? "F" : "E";
        for (const auto& r : *list) {
          key += r.key + " " + r.op;
          for (const auto& v : r.values) key += "," + v;
          key += ";";
        }
      }
      key += ")";
    }
  }
  for (const auto& tol : pod.tolerations)
    key += "|t" + tol.key + "/" + tol.op + "/" + tol.value + "/" + tol.effect;
  auto [it, inserted] = signatures_.emplace(std::move(key), static_cast<int32_t>(signatures_.size()));
  if (plain && plain_slot < plain_signatures_.size()) plain_signatures_[plain_slot] = it->second;
  return it->second;
}

std::optional<std::string> SessionBuilder::add_task(uint32_t pod_index, uint32_t job_id, uint16_t pod_set,
                                                    uint32_t task_id) {
  const model::Pod& pod = *objects_->pods[pod_index];
  if (label_indexes_ != nullptr) {
    for (auto& [key, index] : *label_indexes_) index.add_task(pod.meta.labels, key, task_id);
  }
  TaskInfo t;
  t.pod = &pod;
  t.key = model::namespaced_key(pod.meta.namespace_, pod.meta.name);
  t.job = job_id;
  t.pod_set = pod_set;
  t.uid = pod.meta.uid;
  t.creation = pod.meta.creation_timestamp;
  t.nominated_node = pod.nominated_node_name;
  const model::BindRequest* br = nullptr;
  t.status = derive_status(pod, br);
  bool has_mig = false;
  t.req = pod_request(pod, has_mig);
  std::optional<std::string> error;
  for (const auto& e : pod.errors) {
    if (!error) error = "pod " + t.key + ": " + e.field + ": " + e.message;
  }
  for (const auto& field : pod.unsupported_constraints) {
    if (!error) error = "pod " + t.key + " uses " + field + ", which kai-scheduler does not support";
  }
  if (has_mig) t.mig_gpus = mig_gpus_of(t.req);
  auto gpu = parse_gpu_request(pod, t.req.milli_gpu, has_mig);
  if (gpu) {
    t.gpu = *gpu;
  } else {
    if (!error) error = "pod " + t.key + ": " + gpu.message();
    t.req.milli_gpu -= t.req.milli_gpu % 1000;
  }
  for (const auto& [k, v] : pod.meta.annotations) {
    int64_t ignored = 0;
    if (k.rfind("nvidia.com/mig-", 0) == 0 && parse_int64(v, ignored)) t.legacy_mig = true;
  }
  if (const std::string* priority = find_in(pod.meta.labels, "kai.scheduler/task-priority")) {
    int64_t p = 0;
    const bool neg = !priority->empty() && (*priority)[0] == '-';
    if (parse_int64(neg ? priority->substr(1) : *priority, p))
      t.task_priority = static_cast<int32_t>(neg ? -p : p);
  }
  if (const auto* role = find_in(pod.meta.labels, "training.kubeflow.org/job-role")) {
    t.leader = *role == "master" || *role == "launcher";
  }
  if (const auto* type = find_in(pod.meta.labels, "ray.io/node-type"))
    t.leader = t.leader || *type == "head";
  t.constraints = constraint_signature(pod, t);

  // Where an active pod sits.
  const std::string& node_name = br ? br->selected_node : pod.node_name;
  if (is_active_used(t.status) && !node_name.empty()) {
    auto it = ssn_.node_index.find(node_name);
    if (it != ssn_.node_index.end()) {
      t.node = static_cast<int32_t>(it->second);
      NodeInfo& node = ssn_.nodes[it->second];
      if (t.gpu.is_shared()) {
        t.gpu_groups = br ? br->selected_gpu_groups : running_gpu_groups(pod);
        while (static_cast<int32_t>(t.gpu_groups.size()) < t.gpu.num_devices) {
          t.gpu_groups.push_back(unnamed_gpu_group_id(pod.meta.uid, t.gpu_groups.size()));
        }
        t.placed_portion = t.gpu.kind == GpuRequestKind::kFraction
                               ? t.gpu.fraction_milli
                               : memory_to_fraction_milli(t.gpu.memory_mib, node.gpu_memory_mib);
      }
      node_add_task(node, t);
    }
  }
  ssn_.tasks[task_id] = std::move(t);
  if (pod_index < ssn_.built_.pod_task.size()) ssn_.built_.pod_task[pod_index] = static_cast<int32_t>(task_id);
  return error;
}

std::vector<std::string> SessionBuilder::running_gpu_groups(const model::Pod& pod) {
  std::vector<std::string> groups;
  for_each_gpu_group(pod, [&](std::string_view g) { groups.emplace_back(g); });
  return groups;
}

std::optional<int64_t> SessionBuilder::timestamp_annotation(const model::PodGroup& pg, const char* key,
                                                            const std::string& job) {
  auto it = pg.meta.annotations.find(key);
  if (it == pg.meta.annotations.end()) return std::nullopt;
  auto t = model::parse_rfc3339(it->second);
  if (t) return *t;
  ssn_.warnings.push_back("pod group " + job + ": annotation " + key + ": " + t.message() + "; ignored");
  return std::nullopt;
}

void SessionBuilder::times_from_pods(JobTimes& times, const PodGroupAssignment& g) {
  if (times.last_start) return;
  for (uint32_t pod_index : g.pods) {
    const model::Pod& pod = *objects_->pods[pod_index];
    if (pod.node_name.empty() || pod.phase == "Succeeded" || pod.phase == "Failed") continue;
    for (const auto& c : pod.conditions) {
      if (c.type != "PodScheduled" || c.status != "True" || !c.last_transition_time) continue;
      times.last_start = std::max(times.last_start.value_or(*c.last_transition_time), *c.last_transition_time);
    }
  }
}

void SessionBuilder::set_job_times(JobInfo& job, const JobTimes& base, const SessionOptions& options) {
  const JobTimes* t = &base;
  if (options.job_times != nullptr && !job.uid.empty()) {
    if (auto it = options.job_times->find(job.uid); it != options.job_times->end()) t = &it->second;
  }
  job.last_start = t->last_start;
  job.stale_since = t->stale_since;
  job.last_eviction = t->last_eviction;
}

void SessionBuilder::build_jobs() {
  auto groups = group_pods(*objects_, ssn_.options().scheduler_name, ssn_.options().default_queue,
                           ssn_.options().grouper, ssn_.options().grouping_memo,
                           &ssn_.built_.grouping_reads_beyond_pod);
  // Sized once: at 150,000 pods, growing by doubling moved every job and task several times.
  size_t task_count = 0;
  for (const auto& g : groups) task_count += g.pods.size();
  Session::Built& built = ssn_.built_;
  built.pod_task.assign(objects_->pods.size(), -1);
  const size_t first_job = ssn_.jobs.size();
  ssn_.jobs.resize(first_job + groups.size());
  built.invalid.resize(ssn_.jobs.size());
  built.base_times.resize(ssn_.jobs.size());
  built.warned.resize(ssn_.jobs.size());
  uint32_t next_task = static_cast<uint32_t>(ssn_.tasks.size());
  ssn_.tasks.resize(ssn_.tasks.size() + task_count);
  for (size_t i = 0; i < groups.size(); ++i) {
    derive_job(groups[i], static_cast<uint32_t>(first_job + i), next_task);
    next_task += static_cast<uint32_t>(groups[i].pods.size());
  }
  index_pod_group_jobs(groups, first_job);
  ssn_.groups = std::move(groups);
}

void SessionBuilder::index_pod_group_jobs(const std::vector<PodGroupAssignment>& groups, size_t first_job) {
  // group_pods lists the objects' groups first, in input order, a duplicate name keeping the first.
  Session::Built& built = ssn_.built_;
  built.pod_group_job.assign(objects_->pod_groups.size(), -1);
  size_t next_group = 0;
  for (size_t k = 0; k < objects_->pod_groups.size() && next_group < groups.size(); ++k) {
    if (groups[next_group].pod_group != objects_->pod_groups[k]) continue;
    built.pod_group_job[k] = static_cast<int32_t>(first_job + next_group);
    ++next_group;
  }
}

void SessionBuilder::derive_job(const PodGroupAssignment& g, uint32_t job_id, uint32_t first_task) {
  const size_t warnings_before = ssn_.warnings.size();
  JobInfo job;
  job.namespace_ = g.namespace_;
  job.name = g.name;
  job.key = model::namespaced_key(g.namespace_, g.name);
  job.object = g.pod_group;
  // Pointed at, not copied: the group and its object outlive the build.
  const std::string* class_name = nullptr;
  const std::string* preemptibility = nullptr;
  std::vector<std::pair<std::string, int32_t>> leaf_sets;
  const std::vector<model::SubGroup>* sub_groups = nullptr;
  const model::TopologyConstraint* topology = nullptr;
  std::optional<int32_t> root_min_sub_group;
  for (const auto& [reason, message] : g.invalid) job.invalid.push_back({reason, message});
  if (g.pod_group) {
    const model::PodGroup& pg = *g.pod_group;
    job.uid = pg.meta.uid;
    job.queue_name = pg.queue;
    job.creation = pg.meta.creation_timestamp;
    job.min_member = std::max(pg.min_member, 1);
    class_name = &pg.priority_class_name;
    preemptibility = &pg.preemptibility;
    job.staleness_grace_seconds = pg.staleness_grace_period_seconds;
    job.last_start = timestamp_annotation(pg, model::kLastStartAnnotation, job.key);
    job.stale_since = timestamp_annotation(pg, model::kStaleSinceAnnotation, job.key);
    job.last_eviction = timestamp_annotation(pg, model::kLastEvictionAnnotation, job.key);
    job.preemption_delay_seconds = pg.preemption_delay_seconds;
    for (const auto& e : pg.errors) {
      job.invalid.push_back({"InvalidPodGroup", "PodGroup " + job.key + ": " + e.field + ": " + e.message});
    }
    topology = &pg.topology_constraint;
    sub_groups = &pg.sub_groups;
    root_min_sub_group = pg.min_sub_group;
  } else {
    job.uid = g.uid;
    job.queue_name = g.queue();
    class_name = &g.priority_class_name();
    preemptibility = &g.preemptibility();
    job.creation = g.creation_timestamp;
    job.min_member = std::max(g.min_member, 1);
    if (g.missing_pod_group) {
      job.invalid.push_back({kPodGroupNotFoundReason,
                             "PodGroup " + job.key + " does not exist; its pods wait until it is created"});
    }
    if (g.spec) {
      job.staleness_grace_seconds = g.spec->rare->staleness_grace_period_seconds;
      job.preemption_delay_seconds = g.spec->rare->preemption_delay_seconds;
      topology = &g.spec->rare->topology;
      sub_groups = &g.spec->rare->sub_groups;
      root_min_sub_group = g.spec->rare->min_sub_group;
    }
  }
  // The times the group's PodGroup and pods give; the cycle's job state wins over them (cycle.hpp).
  JobTimes base{job.last_start, job.stale_since, job.last_eviction};
  times_from_pods(base, g);
  ssn_.built_.base_times[job_id] = base;
  set_job_times(job, base, ssn_.options());
  if (sub_groups != nullptr && !sub_groups->empty()) {
    SubGroupLeaves tree = leaf_requirements(*sub_groups, root_min_sub_group);
    for (const auto& e : tree.errors) job.invalid.push_back({"InvalidPodGroup", "PodGroup " + job.key + ": " + e});
    int32_t required = 0;
    for (const auto& l : tree.leaves) {
      leaf_sets.emplace_back(l.name, l.min_available);
      required += l.min_available;
    }
    // A pod the grouper put in no subgroup (a RayJob's submitter) is in a set of its own, not required.
    if (g.pod_sub_groups.empty() || std::find(g.pod_sub_groups.begin(), g.pod_sub_groups.end(),
                                              std::string()) != g.pod_sub_groups.end()) {
      leaf_sets.emplace_back("", 0);
    }
    job.min_member = std::max(required, 1);
  }
  // A task names its subgroup by a 16-bit index; a PodGroup with more leaf subgroups than that is
  // refused with a reason, and its pods go to the first subgroup so that the job stays whole.
  if (leaf_sets.size() > kMaxPodSets) {
    job.invalid.push_back({"InvalidPodGroup", "PodGroup " + job.key + " has " + std::to_string(leaf_sets.size()) +
                                                  " subgroups; at most " + std::to_string(kMaxPodSets) +
                                                  " are supported"});
    leaf_sets.resize(1);
  }
  if (leaf_sets.empty()) {
    // The one set of a group without subgroups, made in place with room for all its pods.
    job.pod_sets.resize(1);
    job.pod_sets[0].name = "default";
    job.pod_sets[0].min_available = job.min_member;
    job.pod_sets[0].tasks.reserve(g.pods.size());
  } else {
    job.pod_sets.reserve(leaf_sets.size());
    for (auto& [name, min] : leaf_sets) job.pod_sets.push_back(PodSetInfo{std::move(name), min, {}});
  }
  job.tasks = TaskRange(first_task, static_cast<uint32_t>(g.pods.size()));
  if (topology != nullptr) resolve_topology(job, *topology, sub_groups);

  std::string warning;
  job.priority = priority_of(*class_name, warning);
  if (!warning.empty()) ssn_.warnings.push_back("pod group " + job.key + ": " + warning);
  job.preemptible = *preemptibility == "preemptible"       ? true
                    : *preemptibility == "non-preemptible" ? false
                                                           : job.priority < 100;
  if (auto it = ssn_.queue_index.find(job.queue_name); it == ssn_.queue_index.end()) {
    job.invalid.push_back(
        {"QueueDoesNotExist",
         missing_queue_message(job.queue_name, g.pod_group == nullptr && g.queue_defaulted())});
  } else if (!ssn_.queues[it->second].is_leaf()) {
    job.invalid.push_back({"QueueIsNotLeaf", "Queue '" + job.queue_name +
                                                 "' has child queues; only leaf queues can run workloads"});
  } else {
    job.queue = static_cast<int32_t>(it->second);
  }

  for (size_t member = 0; member < g.pods.size(); ++member) {
    const uint32_t pod_index = g.pods[member];
    const model::Pod& pod = *objects_->pods[pod_index];
    // A pod in no subgroup: the group's one set "default", or the elastic set "" beside subgroups.
    static const std::string kDefaultSet = "default";
    const std::string& set_name = g.pod_sub_group(member).empty() && job.pod_sets[0].name == kDefaultSet
                                      ? kDefaultSet
                                      : g.pod_sub_group(member);
    uint16_t set = 0;
    bool found = false;
    for (size_t s = 0; s < job.pod_sets.size(); ++s) {
      if (job.pod_sets[s].name == set_name) {
        set = static_cast<uint16_t>(s);  // below kMaxPodSets
        found = true;
      }
    }
    if (!found) {
      job.invalid.push_back({"InvalidPodGroup", "pod " + pod.meta.namespace_ + "/" + pod.meta.name +
                                                    " names subgroup \"" + set_name +
                                                    "\", which PodGroup " + job.key + " does not define"});
    }
    const uint32_t task_id = first_task + static_cast<uint32_t>(member);
    if (auto err = add_task(pod_index, job_id, set, task_id)) job.invalid.push_back({"InvalidPod", *err});
    job.pod_sets[set].tasks.push_back(task_id);
  }
  // A topology the group names but the cluster lacks makes it invalid when the topology plugin is
  // configured (KAI's topology plugin reports it): last, as the plugin added them after the
  // derivation's, and part of the derived reasons, so that a kept session's open does not visit
  // every job for them (plugins/topology.cpp).
  if (!job.topology_errors.empty() && topology_plugin_configured()) {
    job.invalid.insert(job.invalid.end(), job.topology_errors.begin(), job.topology_errors.end());
  }
  Session::Built& built = ssn_.built_;
  built.invalid[job_id] = static_cast<uint32_t>(job.invalid.size());
  built.warned[job_id] = ssn_.warnings.size() != warnings_before ? 1 : 0;
  ssn_.jobs[job_id] = std::move(job);
}

bool SessionBuilder::topology_plugin_configured() const {
  const auto& plugins = ssn_.options().config.plugins;
  return std::any_of(plugins.begin(), plugins.end(),
                     [](const PluginConfig& p) { return p.name == plugins::kTopologyName; });
}

void SessionBuilder::resolve_topology(JobInfo& job, const model::TopologyConstraint& root,
                                      const std::vector<model::SubGroup>* sub_groups) {
  static const std::vector<model::SubGroup> kNone;
  // Most groups name no topology: they need neither the list of their sets nor the resolver.
  const std::vector<model::SubGroup>& subs = sub_groups != nullptr ? *sub_groups : kNone;
  if (!names_a_topology(root, subs)) return;
  std::vector<std::string> sets;
  sets.reserve(job.pod_sets.size());
  for (const auto& ps : job.pod_sets) sets.push_back(ps.name);
  ResolvedTopology r = resolve_job_topology(root, subs, sets, ssn_.topologies);
  for (auto& e : r.errors) job.topology_errors.push_back({"PodSchedulingErrors", std::move(e)});
  if (r.topology) job.topology = std::make_shared<const JobTopology>(std::move(*r.topology));
}

std::string SessionBuilder::missing_queue_message(const std::string& queue, bool defaulted) const {
  auto broken = broken_queues_.find(queue);
  const std::string what =
      broken == broken_queues_.end() ? "does not exist" : "is unusable: " + broken->second;
  if (!defaulted) return "Queue '" + queue + "' " + what;
  return "The pod has no " + std::string(model::kQueueLabel) + " label, so it uses the default queue '" + queue +
         "', which " + what + "; set the label (" + model::kQueueLabel + ": <queue>) or create queue '" + queue +
         "'";
}

}  // namespace kai::core
