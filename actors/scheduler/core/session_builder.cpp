#include "actors/scheduler/core/session_builder.hpp"

#include <algorithm>
#include <set>
#include <string_view>

#include "actors/scheduler/core/node_accounting.hpp"
#include "actors/scheduler/core/workload_groupers.hpp"

namespace kai::core {
namespace {

int64_t bytes_from_milli(int64_t milli) {
  return milli <= 0 ? 0 : (milli + 999) / 1000;
}

/// AMD's device plugin resource: a GPU like nvidia.com/gpu, as KAI counts it.
constexpr const char* kAmdGpuResource = "amd.com/gpu";

bool is_mig_resource(const std::string& name) {
  return name.rfind("nvidia.com/mig-", 0) == 0;
}

/// N of "nvidia.com/mig-<N>g.<M>gb", or 0 when the name has another shape.
int mig_slices(std::string_view name) {
  constexpr std::string_view kPrefix = "nvidia.com/mig-";
  if (name.substr(0, kPrefix.size()) != kPrefix) return 0;
  name.remove_prefix(kPrefix.size());
  auto digits = [&name]() {
    size_t n = 0;
    while (n < name.size() && n < 6 && name[n] >= '0' && name[n] <= '9') ++n;
    int value = 0;
    for (size_t i = 0; i < n; ++i) value = value * 10 + (name[i] - '0');
    name.remove_prefix(n);
    return n == 0 ? -1 : value;
  };
  const int slices = digits();
  if (slices < 0 || name.substr(0, 2) != "g.") return 0;
  name.remove_prefix(2);
  if (digits() < 0 || name != "gb") return 0;
  return slices;
}

}  // namespace

void SessionBuilder::build() {
  build_nodes();
  ssn_.topologies = build_topology_trees(objects_->topologies, ssn_.nodes);
  build_queues();
  build_priority_classes();
  build_bind_requests();
  build_jobs();
  account_foreign_pods();
  compute_cluster_total();
  for (const auto& t : ssn_.tasks) {
    ssn_.account_task_in_queue(t, +1);
    ssn_.jobs[t.job].active_allocated += is_active_allocated(t.status);
    ssn_.jobs[t.job].pending += t.status == PodStatus::kPending;
  }
}

bool SessionBuilder::parse_int64(const std::string& s, int64_t& out) {
  if (s.empty() || s.size() > 18) return false;
  int64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  out = v;
  return true;
}

Resources SessionBuilder::to_resources(const model::ResourceList& list, bool& has_mig) {
  Resources r;
  for (const auto& [name, milli] : list) {
    if (name == "cpu") {
      r.milli_cpu += milli;
    } else if (name == "memory") {
      r.memory += bytes_from_milli(milli);
    } else if (name == model::kGpuResource || name == kAmdGpuResource) {
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

double SessionBuilder::mig_gpus_of(const Resources& req) const {
  double gpus = 0;
  for (const auto& [id, milli] : req.scalars) {
    const std::string& name = ssn_.scalar_name(id);
    if (!is_mig_resource(name)) continue;
    // "nvidia.com/mig-<N>g.<M>gb": N compute slices of one device (KAI's ExtractGpuAndMemoryFromMigResourceName).
    const int slices = mig_slices(name);
    if (slices <= 0) continue;  // not a profile KAI can read: it counts nothing either
    gpus += static_cast<double>(slices) * static_cast<double>(milli) / 1000.0;
  }
  return gpus;
}

Resources SessionBuilder::max_each(const Resources& a, const Resources& b) {
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

Resources SessionBuilder::pod_request(const model::Pod& pod, bool& has_mig) {
  // As kube-scheduler counts a pod: its containers plus the native sidecars (init containers with
  // restartPolicy Always), which keep running beside them; or, if larger, the peak of the init
  // phase, where each ordinary init container runs beside the sidecars started before it.
  Resources sum;
  for (const auto& c : pod.containers) sum += to_resources(c.requests, has_mig);
  Resources sidecars;
  Resources init_peak;
  for (const auto& c : pod.init_containers) {
    const Resources r = to_resources(c.requests, has_mig);
    if (c.restart_policy_always) {
      sidecars += r;
      init_peak = max_each(init_peak, sidecars);
    } else {
      init_peak = max_each(init_peak, r + sidecars);
    }
  }
  sum = max_each(sum + sidecars, init_peak);
  sum += to_resources(pod.overhead, has_mig);
  sum.pods = 1;
  return sum;
}

QueueQuantities SessionBuilder::queue_usage_of(const std::string& name, const SessionOptions& options) {
  if (options.queue_usage == nullptr) return {};
  auto it = options.queue_usage->find(name);
  if (it == options.queue_usage->end()) return {};
  return QueueQuantities{it->second.gpu, it->second.cpu, it->second.memory};
}

void SessionBuilder::build_nodes() {
  for (const auto* n_ptr : objects_->nodes) {
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
    if (const auto* v = find_in(n.meta.labels, "nvidia.com/gpu.count")) {
      int64_t count = 0;
      if (parse_int64(*v, count)) info.gpu_count = static_cast<int32_t>(count);
    }
    if (const auto* v = find_in(n.meta.labels, "nvidia.com/gpu.memory")) {
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
    if (const auto* v = find_in(n.meta.labels, "nvidia.com/mig.strategy")) {
      if (*v == "single") info.mig = MigStrategy::kSingle;
      if (*v == "mixed") info.mig = MigStrategy::kMixed;
    }
    if (const auto* v = find_in(n.meta.labels, "node-role.kubernetes.io/mig-enabled")) {
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

QueueQuantities SessionBuilder::quantities(const model::QueueResource& gpu, const model::QueueResource& cpu,
                                           const model::QueueResource& mem,
                                           double model::QueueResource::*field) {
  QueueQuantities q;
  q.gpu = gpu.*field;
  q.cpu = cpu.*field;
  // Memory is given in megabytes (10^6 bytes); -1 (unlimited) stays -1.
  q.memory = mem.*field < 0 ? -1 : mem.*field * 1e6;
  return q;
}

void SessionBuilder::build_queues() {
  std::map<std::string, const model::Queue*> by_name;
  for (const auto* q_ptr : objects_->queues) {
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
  for (const auto* q_ptr : objects_->queues) {
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
    info.usage = queue_usage_of(info.name, ssn_.options());
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

bool SessionBuilder::holds_node_as_foreign(const model::Pod& pod, const std::string& scheduler_name) {
  return pod.scheduler_name != scheduler_name && !pod.node_name.empty() && pod.phase != "Succeeded" &&
         pod.phase != "Failed";
}

void SessionBuilder::account_foreign_pods() {
  for (const auto* pod : objects_->pods) {
    if (auto hold = foreign_hold(*pod)) apply_foreign_hold(*hold, +1);
  }
}

std::optional<SessionBuilder::ForeignHold> SessionBuilder::foreign_hold(const model::Pod& pod) {
  if (!holds_node_as_foreign(pod, ssn_.options().scheduler_name)) return std::nullopt;
  auto it = ssn_.node_index.find(pod.node_name);
  if (it == ssn_.node_index.end()) return std::nullopt;
  ForeignHold hold;
  hold.node = it->second;
  bool has_mig = false;
  hold.task.req = pod_request(pod, has_mig);
  hold.task.status = pod.meta.deletion_timestamp ? PodStatus::kReleasing : PodStatus::kRunning;
  const bool reservation = pod.meta.namespace_ == model::kReservationNamespace;
  const std::string* group = reservation ? find_in(pod.meta.labels, model::kGpuGroupLabel) : nullptr;
  // A reservation pod holds one device, that of its GPU group (docs/gpu-sharing.md "Accounting"):
  // the group's fraction pods hold it too, and when none is left (a bind abandoned after the
  // reservation pod was made) the reservation pod alone does, until the clean-up deletes it or a
  // new fraction pod joins its group. One without a group label counts as the GPU it requests.
  if (group != nullptr && !group->empty()) {
    hold.task.req.milli_gpu = 0;
    hold.group = group;
  } else {
    hold.counts_against_cluster = !reservation && hold.task.status != PodStatus::kReleasing;
  }
  return hold;
}

void SessionBuilder::apply_foreign_hold(const ForeignHold& hold, int sign) {
  NodeInfo& node = ssn_.nodes[hold.node];
  const bool releasing = hold.task.status == PodStatus::kReleasing;
  if (sign > 0) {
    node_add_task(node, hold.task);
    if (hold.group != nullptr) node_add_reservation(node, *hold.group, releasing);
    if (hold.counts_against_cluster) foreign_ += hold.task.req;
  } else {
    if (hold.group != nullptr) node_remove_reservation(node, *hold.group, releasing);
    node_remove_task(node, hold.task);
    if (hold.counts_against_cluster) foreign_ -= hold.task.req;
  }
}

bool SessionBuilder::replace_foreign_pod(const model::Pod* before, const model::Pod* after,
                                         std::vector<uint32_t>& nodes) {
  std::optional<ForeignHold> was = before != nullptr ? foreign_hold(*before) : std::nullopt;
  std::optional<ForeignHold> is = after != nullptr ? foreign_hold(*after) : std::nullopt;
  auto same = [](const ForeignHold& a, const ForeignHold& b) {
    return a.node == b.node && a.task.req == b.task.req && a.task.status == b.task.status &&
           (a.group == nullptr) == (b.group == nullptr) && (a.group == nullptr || *a.group == *b.group) &&
           a.counts_against_cluster == b.counts_against_cluster;
  };
  if (!was && !is) return false;
  if (was && is && same(*was, *is)) return false;
  if (was) {
    apply_foreign_hold(*was, -1);
    nodes.push_back(was->node);
  }
  if (is) {
    apply_foreign_hold(*is, +1);
    nodes.push_back(is->node);
  }
  return true;
}

void SessionBuilder::foreign_pods_replaced(std::vector<uint32_t>& nodes) {
  update_node_indexes(nodes);
  compute_cluster_total();
}

void SessionBuilder::compute_cluster_total() {
  QueueQuantities total;
  const Resources& foreign = foreign_;
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

}  // namespace kai::core
