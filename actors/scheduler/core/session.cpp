#include "actors/scheduler/core/session.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include "actors/scheduler/core/grouping.hpp"
#include "actors/scheduler/core/node_accounting.hpp"
#include "actors/scheduler/core/plugin.hpp"
#include "k8s/model/time.hpp"

namespace kai::core {
namespace {


int64_t bytes_from_milli(int64_t milli) {
  return milli <= 0 ? 0 : (milli + 999) / 1000;
}

const std::string* find_label(const model::StringMap& labels, const char* key) {
  auto it = labels.find(key);
  return it == labels.end() ? nullptr : &it->second;
}

bool parse_int64(const std::string& s, int64_t& out) {
  if (s.empty() || s.size() > 18) return false;
  int64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  out = v;
  return true;
}

bool is_mig_resource(const std::string& name) {
  return name.rfind("nvidia.com/mig-", 0) == 0;
}

}  // namespace

/// Builds a Session from model objects (kept separate from Session's methods for readability).
class SessionBuilder {
 public:
  SessionBuilder(Session& ssn, const model::ObjectRefs& objects) : ssn_(ssn), objects_(objects) {}

  void build() {
    build_nodes();
    build_queues();
    build_priority_classes();
    build_bind_requests();
    build_jobs();
    account_foreign_pods();
    compute_cluster_total();
    for (const auto& t : ssn_.tasks) {
      ssn_.account_task_in_queue(t, +1);
      ssn_.jobs[t.job].active_allocated += is_active_allocated(t.status);
    }
  }

 private:
  Resources to_resources(const model::ResourceList& list, bool& has_mig) {
    Resources r;
    for (const auto& [name, milli] : list) {
      if (name == "cpu") {
        r.milli_cpu += milli;
      } else if (name == "memory") {
        r.memory += bytes_from_milli(milli);
      } else if (name == kGpuResource) {
        r.milli_gpu += milli;
      } else if (name == "pods") {
        r.pods += milli / 1000;
      } else {
        if (is_mig_resource(name)) has_mig = true;
        r.add_scalar(ssn_.scalar_id(name), milli);
      }
    }
    return r;
  }

  static Resources max_each(const Resources& a, const Resources& b) {
    Resources r;
    r.milli_cpu = std::max(a.milli_cpu, b.milli_cpu);
    r.memory = std::max(a.memory, b.memory);
    r.milli_gpu = std::max(a.milli_gpu, b.milli_gpu);
    r.pods = std::max(a.pods, b.pods);
    std::set<uint32_t> ids;
    for (const auto& s : a.scalars) ids.insert(s.first);
    for (const auto& s : b.scalars) ids.insert(s.first);
    for (uint32_t id : ids) r.add_scalar(id, std::max(a.scalar(id), b.scalar(id)));
    return r;
  }

  /// max(Σ containers, each init container) + overhead; pods = 1 (§4.1).
  Resources pod_request(const model::Pod& pod, bool& has_mig) {
    Resources sum;
    for (const auto& c : pod.containers) sum += to_resources(c.requests, has_mig);
    for (const auto& c : pod.init_containers) sum = max_each(sum, to_resources(c.requests, has_mig));
    sum += to_resources(pod.overhead, has_mig);
    sum.pods = 1;
    return sum;
  }

  void build_nodes() {
    for (const auto* n_ptr : objects_.nodes) {
      const auto& n = *n_ptr;
      if (ssn_.node_index.count(n.meta.name)) {
        ssn_.warnings.push_back("node " + n.meta.name + ": duplicate, the first one is used");
        continue;
      }
      NodeInfo info;
      info.object = &n;
      info.name = n.meta.name;
      bool has_mig = false;
      info.allocatable = to_resources(n.allocatable, has_mig);
      info.allocatable.milli_gpu -= info.allocatable.milli_gpu % 1000;
      info.idle = info.allocatable;
      info.gpu_count = static_cast<int32_t>(info.allocatable.milli_gpu / 1000);
      if (const auto* v = find_label(n.meta.labels, "nvidia.com/gpu.count")) {
        int64_t count = 0;
        if (parse_int64(*v, count)) info.gpu_count = static_cast<int32_t>(count);
      }
      if (const auto* v = find_label(n.meta.labels, "nvidia.com/gpu.memory")) {
        int64_t mem = 0;
        if (parse_int64(*v, mem)) {
          if (mem >= 1024 * 1024) mem /= 1024 * 1024;  // given in bytes
          mem -= mem % 100;
          info.gpu_memory_mib = std::max<int64_t>(mem, 100);
          info.gpu_memory_synced = true;
        } else {
          ssn_.warnings.push_back("node " + n.meta.name + ": label nvidia.com/gpu.memory=\"" + *v +
                                  "\" is not an integer; GPU memory treated as not synced");
        }
      }
      if (const auto* v = find_label(n.meta.labels, "nvidia.com/mig.strategy")) {
        if (*v == "single") info.mig = MigStrategy::kSingle;
        if (*v == "mixed") info.mig = MigStrategy::kMixed;
      }
      if (const auto* v = find_label(n.meta.labels, "node-role.kubernetes.io/mig-enabled")) {
        info.mig_enabled = *v == "true";
      }
      for (const auto& c : n.conditions) {
        if (c.type == "Ready") info.ready = c.status == "True";
      }
      info.unschedulable = n.unschedulable;
      for (const auto& e : n.errors) {
        ssn_.warnings.push_back("node " + n.meta.name + ": " + e.field + ": " + e.message);
      }
      ssn_.node_index[info.name] = static_cast<uint32_t>(ssn_.nodes.size());
      ssn_.nodes.push_back(std::move(info));
    }
    for (const auto& n : ssn_.nodes) {
      if (n.gpu_memory_synced && n.gpu_memory_mib > 100) {
        ssn_.min_node_gpu_memory_mib = ssn_.min_node_gpu_memory_mib == 100
                                           ? n.gpu_memory_mib
                                           : std::min(ssn_.min_node_gpu_memory_mib, n.gpu_memory_mib);
      }
    }
  }

  static QueueQuantities quantities(const model::QueueResource& gpu, const model::QueueResource& cpu,
                                    const model::QueueResource& mem, double model::QueueResource::*field) {
    QueueQuantities q;
    q.gpu = gpu.*field;
    q.cpu = cpu.*field;
    // Memory is given in megabytes (10^6 bytes); -1 (unlimited) stays -1.
    q.memory = mem.*field < 0 ? -1 : mem.*field * 1e6;
    return q;
  }

  void build_queues() {
    std::map<std::string, const model::Queue*> by_name;
    for (const auto* q_ptr : objects_.queues) {
      const auto& q = *q_ptr;
      if (by_name.count(q.meta.name)) {
        ssn_.warnings.push_back("queue " + q.meta.name + ": duplicate, the first one is used");
        continue;
      }
      by_name[q.meta.name] = &q;
    }
    // Drop queues whose ancestry is broken (missing parent or a cycle), with their subtrees; what broke
    // it is kept for the pods that name such a queue.
    std::set<std::string> valid;
    for (const auto& [name, q] : by_name) {
      std::vector<std::string> path{name};
      const model::Queue* cur = q;
      std::string broken;
      while (broken.empty() && !cur->parent_queue.empty()) {
        const std::string& parent = cur->parent_queue;
        if (auto at = std::find(path.begin(), path.end(), parent); at != path.end()) {
          broken = "its parent queues form a cycle ";
          for (; at != path.end(); ++at) broken += *at + " -> ";
          broken += parent;
        } else if (auto it = by_name.find(parent); it == by_name.end()) {
          broken = "its parent queue '" + parent + "' does not exist";
        } else {
          path.push_back(parent);
          cur = it->second;
        }
      }
      if (broken.empty()) {
        valid.insert(name);
      } else {
        ssn_.warnings.push_back("queue " + name + ": " + broken + "; the queue is ignored");
        broken_queues_[name] = std::move(broken);
      }
    }
    for (const auto* q_ptr : objects_.queues) {
      const auto& q = *q_ptr;
      if (!valid.count(q.meta.name) || ssn_.queue_index.count(q.meta.name)) continue;
      QueueInfo info;
      info.name = q.meta.name;
      info.priority = q.priority;
      info.creation = q.meta.creation_timestamp;
      info.deserved = quantities(q.gpu, q.cpu, q.memory, &model::QueueResource::quota);
      info.max_allowed = quantities(q.gpu, q.cpu, q.memory, &model::QueueResource::limit);
      info.over_quota_weight = quantities(q.gpu, q.cpu, q.memory, &model::QueueResource::over_quota_weight);
      info.over_quota_weight.memory = q.memory.over_quota_weight;
      info.preempt_min_runtime = q.preempt_min_runtime_seconds;
      info.reclaim_min_runtime = q.reclaim_min_runtime_seconds;
      for (const auto& e : q.errors)
        ssn_.warnings.push_back("queue " + q.meta.name + ": " + e.field + ": " + e.message);
      ssn_.queue_index[info.name] = static_cast<uint32_t>(ssn_.queues.size());
      ssn_.queues.push_back(std::move(info));
      queue_objects_.push_back(&q);
    }
    for (size_t i = 0; i < ssn_.queues.size(); ++i) {
      const std::string& parent = queue_objects_[i]->parent_queue;
      if (parent.empty()) continue;
      const uint32_t p = ssn_.queue_index.at(parent);
      ssn_.queues[i].parent = static_cast<int32_t>(p);
      ssn_.queues[p].children.push_back(static_cast<uint32_t>(i));
    }
  }

  void build_priority_classes() {
    for (const auto* pc_ptr : objects_.priority_classes) {
      const auto& pc = *pc_ptr;
      priority_classes_.emplace(pc.meta.name, pc.value);
      if (pc.global_default) global_default_priority_ = pc.value;
    }
  }

  void build_bind_requests() {
    for (const auto* br_ptr : objects_.bind_requests) {
      const auto& br = *br_ptr;
      const bool failed =
          br.phase == "Failed" && (!br.backoff_limit || br.failed_attempts >= *br.backoff_limit);
      if (failed || !ssn_.node_index.count(br.selected_node)) continue;  // deleted by KAI next cycle
      bind_requests_[{br.meta.namespace_, br.pod_name}] = &br;
    }
  }

  int32_t priority_of(const std::string& class_name, std::string& warning) {
    if (class_name.empty()) return global_default_priority_.value_or(50);
    if (auto it = priority_classes_.find(class_name); it != priority_classes_.end()) return it->second;
    if (int32_t v = builtin_priority_class_value(class_name); v >= 0) return v;
    warning = "priority class \"" + class_name + "\" not found; using the default priority";
    return global_default_priority_.value_or(50);
  }

  PodStatus derive_status(const model::Pod& pod, const model::BindRequest*& bind_request) {
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

  int32_t constraint_signature(const model::Pod& pod, const TaskInfo& t) {
    std::string key;
    key.reserve(64);
    key += std::to_string(static_cast<int>(t.gpu.kind));
    key += t.legacy_mig ? "L" : "-";
    for (const auto& [k, v] : pod.node_selector) key += "|s" + k + "=" + v;
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
    return it->second;
  }

  /// Adds a task for `pod` to job `job_id`; returns an input error for the pod, if any.
  std::optional<std::string> add_task(uint32_t pod_index, uint32_t job_id, uint16_t pod_set) {
    const model::Pod& pod = *objects_.pods[pod_index];
    TaskInfo t;
    t.pod = &pod;
    t.key = pod.meta.namespace_ + "/" + pod.meta.name;
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
    if (auto it = pod.meta.labels.find("kai.scheduler/task-priority"); it != pod.meta.labels.end()) {
      int64_t p = 0;
      const bool neg = !it->second.empty() && it->second[0] == '-';
      if (parse_int64(neg ? it->second.substr(1) : it->second, p))
        t.task_priority = static_cast<int32_t>(neg ? -p : p);
    }
    if (const auto* role = find_label(pod.meta.labels, "training.kubeflow.org/job-role")) {
      t.leader = *role == "master" || *role == "launcher";
    }
    if (const auto* type = find_label(pod.meta.labels, "ray.io/node-type"))
      t.leader = t.leader || *type == "head";
    t.constraints = constraint_signature(pod, t);

    // Where an active pod sits.
    std::string node_name = pod.node_name;
    if (br) node_name = br->selected_node;
    if (is_active_used(t.status) && !node_name.empty()) {
      auto it = ssn_.node_index.find(node_name);
      if (it != ssn_.node_index.end()) {
        t.node = static_cast<int32_t>(it->second);
        NodeInfo& node = ssn_.nodes[it->second];
        if (t.gpu.is_shared()) {
          t.gpu_groups = br ? br->selected_gpu_groups : running_gpu_groups(pod);
          while (static_cast<int32_t>(t.gpu_groups.size()) < t.gpu.num_devices) {
            t.gpu_groups.push_back(ssn_.new_gpu_group_id());
          }
          t.placed_portion = t.gpu.kind == GpuRequestKind::kFraction
                                 ? t.gpu.fraction_milli
                                 : memory_to_fraction_milli(t.gpu.memory_mib, node.gpu_memory_mib);
        }
        node_add_task(node, t);
      }
    }
    ssn_.tasks.push_back(std::move(t));
    return error;
  }

  static std::vector<std::string> running_gpu_groups(const model::Pod& pod) {
    std::vector<std::string> groups;
    if (const auto* g = find_label(pod.meta.labels, kGpuGroupLabel)) groups.push_back(*g);
    const std::string prefix = std::string(kGpuGroupLabel) + "/";
    for (const auto& [k, v] : pod.meta.labels) {
      if (k.rfind(prefix, 0) == 0) groups.push_back(v.empty() ? k.substr(prefix.size()) : v);
    }
    return groups;
  }

  std::optional<int64_t> timestamp_annotation(const model::PodGroup& pg, const char* key,
                                              const std::string& job) {
    auto it = pg.meta.annotations.find(key);
    if (it == pg.meta.annotations.end()) return std::nullopt;
    auto t = model::parse_rfc3339(it->second);
    if (t) return *t;
    ssn_.warnings.push_back("pod group " + job + ": annotation " + key + ": " + t.message() + "; ignored");
    return std::nullopt;
  }

  /// The cycle's job state wins over the annotations read above (cycle.hpp). A group with neither
  /// takes its last start from when its running pods were scheduled, as a replica that did not run
  /// them (a standby that took over) can only know it from the pods.
  void resolve_job_times(JobInfo& job, const PodGroupAssignment& g) {
    if (const auto* times = ssn_.options().job_times) {
      if (auto it = times->find(job.uid); it != times->end() && !job.uid.empty()) {
        job.last_start = it->second.last_start;
        job.stale_since = it->second.stale_since;
        return;
      }
    }
    if (job.last_start) return;
    for (uint32_t pod_index : g.pods) {
      const model::Pod& pod = *objects_.pods[pod_index];
      if (pod.node_name.empty() || pod.phase == "Succeeded" || pod.phase == "Failed") continue;
      for (const auto& c : pod.conditions) {
        if (c.type != "PodScheduled" || c.status != "True" || !c.last_transition_time) continue;
        job.last_start = std::max(job.last_start.value_or(*c.last_transition_time), *c.last_transition_time);
      }
    }
  }

  void build_jobs() {
    auto groups = group_pods(objects_, ssn_.options().scheduler_name, ssn_.options().default_queue);
    for (auto& g : groups) {
      JobInfo job;
      job.namespace_ = g.namespace_;
      job.name = g.name;
      job.key = g.namespace_ + "/" + g.name;
      job.object = g.pod_group;
      std::string class_name = g.priority_class_name;
      std::string preemptibility = g.preemptibility;
      std::vector<std::pair<std::string, int32_t>> leaf_sets;
      if (g.pod_group) {
        const model::PodGroup& pg = *g.pod_group;
        job.uid = pg.meta.uid;
        job.queue_name = pg.queue;
        job.creation = pg.meta.creation_timestamp;
        job.min_member = std::max(pg.min_member, 1);
        class_name = pg.priority_class_name;
        preemptibility = pg.preemptibility;
        job.last_start = timestamp_annotation(pg, kLastStartAnnotation, job.key);
        job.stale_since = timestamp_annotation(pg, kStaleSinceAnnotation, job.key);
        for (const auto& e : pg.errors) {
          job.invalid.push_back(
              {"InvalidPodGroup", "PodGroup " + job.key + ": " + e.field + ": " + e.message});
        }
        if (!pg.topology_constraint.required_level.empty()) {
          job.invalid.push_back(
              {"Unsupported", "PodGroup " + job.key +
                                  " uses spec.topologyConstraint.requiredTopologyLevel, which "
                                  "kai-scheduler does not support yet"});
        }
        std::set<std::string> parents;
        for (const auto& sg : pg.sub_groups) {
          if (sg.parent) parents.insert(*sg.parent);
          if (!sg.topology_constraint.required_level.empty()) {
            job.invalid.push_back({"Unsupported", "PodGroup " + job.key + " subGroup " + sg.name +
                                                      " uses topologyConstraint.requiredTopologyLevel, which "
                                                      "kai-scheduler does not support yet"});
          }
        }
        for (const auto& sg : pg.sub_groups) {
          if (!parents.count(sg.name)) leaf_sets.emplace_back(sg.name, std::max(sg.min_member, 1));
        }
      } else {
        job.uid = g.uid;
        job.queue_name = g.queue;
        job.creation = g.creation_timestamp;
        job.min_member = std::max(g.min_member, 1);
        if (g.missing_pod_group) {
          job.invalid.push_back(
              {"PodGroupNotFound",
               "PodGroup " + job.key + " does not exist; its pods wait until it is created"});
        }
      }
      resolve_job_times(job, g);
      if (leaf_sets.empty()) leaf_sets.emplace_back("default", job.min_member);
      for (const auto& [name, min] : leaf_sets) job.pod_sets.push_back(PodSetInfo{name, min, {}});

      std::string warning;
      job.priority = priority_of(class_name, warning);
      if (!warning.empty()) ssn_.warnings.push_back("pod group " + job.key + ": " + warning);
      job.preemptible = preemptibility == "preemptible"       ? true
                        : preemptibility == "non-preemptible" ? false
                                                              : job.priority < 100;
      if (auto it = ssn_.queue_index.find(job.queue_name); it == ssn_.queue_index.end()) {
        job.invalid.push_back(
            {"QueueDoesNotExist", missing_queue_message(job.queue_name, g.queue_defaulted)});
      } else if (!ssn_.queues[it->second].is_leaf()) {
        job.invalid.push_back(
            {"QueueIsNotLeaf",
             "Queue '" + job.queue_name + "' has child queues; only leaf queues can run workloads"});
      } else {
        job.queue = static_cast<int32_t>(it->second);
      }

      const uint32_t job_id = static_cast<uint32_t>(ssn_.jobs.size());
      for (uint32_t pod_index : g.pods) {
        const model::Pod& pod = *objects_.pods[pod_index];
        std::string set_name = "default";
        if (const auto* l = find_label(pod.meta.labels, kSubGroupLabel); l && !l->empty()) set_name = *l;
        uint16_t set = 0;
        bool found = false;
        for (uint16_t s = 0; s < job.pod_sets.size(); ++s) {
          if (job.pod_sets[s].name == set_name) {
            set = s;
            found = true;
          }
        }
        if (!found) {
          job.invalid.push_back(
              {"InvalidPodGroup", "pod " + pod.meta.namespace_ + "/" + pod.meta.name + " names subgroup \"" +
                                      set_name + "\", which PodGroup " + job.key + " does not define"});
        }
        const uint32_t task_id = static_cast<uint32_t>(ssn_.tasks.size());
        if (auto err = add_task(pod_index, job_id, set)) job.invalid.push_back({"InvalidPod", *err});
        job.tasks.push_back(task_id);
        job.pod_sets[set].tasks.push_back(task_id);
      }
      ssn_.jobs.push_back(std::move(job));
    }
  }

  /// Pods of other schedulers (and reservation pods) still use their node's capacity.
  void account_foreign_pods() {
    const std::string& mine = ssn_.options().scheduler_name;
    for (const auto* pod_ptr : objects_.pods) {
      const auto& pod = *pod_ptr;
      if (pod.scheduler_name == mine || pod.node_name.empty()) continue;
      if (pod.phase == "Succeeded" || pod.phase == "Failed") continue;
      auto it = ssn_.node_index.find(pod.node_name);
      if (it == ssn_.node_index.end()) continue;
      TaskInfo t;
      bool has_mig = false;
      t.req = pod_request(pod, has_mig);
      t.status = pod.meta.deletion_timestamp ? PodStatus::kReleasing : PodStatus::kRunning;
      const bool reservation = pod.meta.namespace_ == kReservationNamespace;
      const std::string* group = reservation ? find_label(pod.meta.labels, kGpuGroupLabel) : nullptr;
      // A reservation pod holds one device, that of its GPU group (docs/gpu-sharing.md "Accounting"):
      // the group's fraction pods hold it too, and when none is left (a bind abandoned after the
      // reservation pod was made) the reservation pod alone does, until the clean-up deletes it or a
      // new fraction pod joins its group. One without a group label counts as the GPU it requests.
      if (group != nullptr && !group->empty()) {
        t.req.milli_gpu = 0;
        node_add_task(ssn_.nodes[it->second], t);
        node_add_reservation(ssn_.nodes[it->second], *group, t.status == PodStatus::kReleasing);
        continue;
      }
      node_add_task(ssn_.nodes[it->second], t);
      if (!reservation && t.status != PodStatus::kReleasing) foreign_.push_back(t.req);
    }
  }

  void compute_cluster_total() {
    QueueQuantities total;
    Resources foreign;
    for (const auto& r : foreign_) foreign += r;
    for (const auto& n : ssn_.nodes) {
      const model::Node& obj = *n.object;
      bool pressure = false;
      for (const auto& c : obj.conditions) {
        if ((c.type == "MemoryPressure" || c.type == "DiskPressure" || c.type == "PIDPressure" ||
             c.type == "NetworkUnavailable") &&
            c.status == "True") {
          pressure = true;
        }
      }
      if (!n.ready || n.unschedulable || pressure) continue;
      total.gpu += static_cast<double>(n.allocatable.milli_gpu) / 1000.0;
      total.cpu += static_cast<double>(n.allocatable.milli_cpu);
      total.memory += static_cast<double>(n.allocatable.memory);
    }
    total.gpu -= static_cast<double>(foreign.milli_gpu) / 1000.0;
    total.cpu -= static_cast<double>(foreign.milli_cpu);
    total.memory -= static_cast<double>(foreign.memory);
    ssn_.cluster_total =
        QueueQuantities{std::max(0.0, total.gpu), std::max(0.0, total.cpu), std::max(0.0, total.memory)};
  }

  Session& ssn_;
  const model::ObjectRefs& objects_;
  std::vector<const model::Queue*> queue_objects_;
  /// Queues left out because their parent chain is broken, with what broke it.
  std::map<std::string, std::string> broken_queues_;

  /// Why a job's queue is not in the session: missing, or ignored with the reason; for a pod without the
  /// queue label, which label to set (docs: README.md "Queues").
  std::string missing_queue_message(const std::string& queue, bool defaulted) const {
    auto broken = broken_queues_.find(queue);
    const std::string what =
        broken == broken_queues_.end() ? "does not exist" : "is unusable: " + broken->second;
    if (!defaulted) return "Queue '" + queue + "' " + what;
    return "The pod has no " + std::string(kQueueLabel) + " label, so it uses the default queue '" + queue +
           "', which " + what + "; set the label (" + kQueueLabel + ": <queue>) or create queue '" + queue +
           "'";
  }
  std::map<std::string, int32_t> priority_classes_;
  std::optional<int32_t> global_default_priority_;
  std::map<std::pair<std::string, std::string>, const model::BindRequest*> bind_requests_;
  std::map<std::string, int32_t> signatures_;
  std::vector<Resources> foreign_;
};

Session::Session(const model::ClusterObjects& objects, SessionOptions options)
    : Session(model::ObjectRefs::of(objects), std::move(options)) {}

Session::Session(const model::ObjectRefs& objects, SessionOptions options)
    : options_(std::move(options)), rng_(options_.seed) {
  SessionBuilder(*this, objects).build();
  gpu_free_index.build(nodes, [](const NodeInfo& n) { return n.has_gpus(); });
  shared_room_index.build(nodes, [](const NodeInfo& n) {
    for (const auto& g : n.shared_gpus) {
      if (g.joinable(1))
        return true;
    }
    return false;
  });
  open_plugins();
}

Session::~Session() = default;

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
  bool placement_seen = false;
  for (const auto& plugin : plugins_) {
    const PluginCapabilities c = plugin->capabilities();
    if (!placement_seen && c.gpu_node_placement != GpuNodePlacement::kNone) {
      placement_seen = true;
      gpu_fast_path = c.gpu_node_placement == GpuNodePlacement::kMostAllocated;
    }
    prefers_idle_nodes = prefers_idle_nodes || c.prefers_idle_nodes;
    honours_nominated_node = honours_nominated_node || c.honours_nominated_node;
    prefers_shared_groups = prefers_shared_groups || c.orders_shared_gpu_groups_first;
  }
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
  unsigned char b[16];
  for (int i = 0; i < 8; ++i) {
    b[i] = static_cast<unsigned char>(hi >> (56 - 8 * i));
    b[8 + i] = static_cast<unsigned char>(lo >> (56 - 8 * i));
  }
  b[6] = static_cast<unsigned char>((b[6] & 0x0f) | 0x40);
  b[8] = static_cast<unsigned char>((b[8] & 0x3f) | 0x80);
  char out[37];
  std::snprintf(out, sizeof(out), "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
                b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
                b[15]);
  return out;
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
  for (uint32_t t : job.tasks) {
    if (tasks[t].status == PodStatus::kPending) return true;
  }
  return false;
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
    q.cpu += static_cast<double>(t.req.milli_cpu);
    q.memory += static_cast<double>(t.req.memory);
    q.gpu += static_cast<double>(t.req.milli_gpu) / 1000.0;
    // gpu-memory tasks count no GPU at the job level (KAI's GetGpusQuota), fractions count their portion.
    if (t.gpu.kind == GpuRequestKind::kFraction) {
      q.gpu += static_cast<double>(t.gpu.fraction_milli) * t.gpu.num_devices / 1000.0;
    }
  }
  return q;
}

QueueQuantities Session::allocated_quantities(const TaskInfo& task) const {
  QueueQuantities q;
  q.cpu = static_cast<double>(task.req.milli_cpu);
  q.memory = static_cast<double>(task.req.memory);
  q.gpu = static_cast<double>(task.req.milli_gpu) / 1000.0;
  if (task.gpu.is_shared()) q.gpu += static_cast<double>(task.placed_portion) * task.gpu.num_devices / 1000.0;
  return q;
}

void Session::account_task_in_queue(const TaskInfo& task, int sign) {
  const JobInfo& job = jobs[task.job];
  if (job.queue == kNoQueue || task.ghost) return;
  QueueQuantities q;
  q.cpu = static_cast<double>(task.req.milli_cpu);
  q.memory = static_cast<double>(task.req.memory);
  double gpus = static_cast<double>(task.req.milli_gpu) / 1000.0;
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
    queue.request.gpu += s * q.gpu;
    queue.request.cpu += s * q.cpu;
    queue.request.memory += s * q.memory;
    if (allocated) {
      queue.allocated.gpu += s * q.gpu;
      queue.allocated.cpu += s * q.cpu;
      queue.allocated.memory += s * q.memory;
      if (!job.preemptible) {
        queue.allocated_non_preemptible.gpu += s * q.gpu;
        queue.allocated_non_preemptible.cpu += s * q.cpu;
        queue.allocated_non_preemptible.memory += s * q.memory;
      }
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
