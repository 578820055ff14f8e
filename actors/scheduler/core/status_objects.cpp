#include "actors/scheduler/core/status_objects.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <unordered_map>

#include "actors/scheduler/core/status_memo.hpp"
#include "k8s/model/json_codec.hpp"
#include "k8s/model/quantity.hpp"
#include "k8s/model/well_known_names.hpp"

namespace kai::core {
namespace {

using nlohmann::json;

constexpr const char* kUnschedulableOnNodePool = "UnschedulableOnNodePool";
constexpr const char* kDefaultNodePool = "default";
/// KAI's share-memory resource name in a group's requested list (gpu-memory, MiB).
constexpr const char* kGpuMemoryResource = "run.ai/gpu.memory";

void add(model::ResourceList& to, const model::ResourceList& from) {
  for (const auto& [name, milli] : from) to[name] += milli;
}

void add_requests(model::ResourceList& to, const model::Pod& pod) {
  for (const auto& c : pod.containers) add(to, c.requests);  // KAI counts the main containers only
}

bool pod_scheduled(const model::Pod& pod) {
  return std::any_of(pod.conditions.begin(), pod.conditions.end(),
                     [](const model::PodCondition& c) { return c.type == "PodScheduled" && c.status == "True"; });
}

/// Sets `obj[key]` to the merge patch that turns list `have` into `want`: `want`'s resources, null for
/// each of `have`'s that `want` lacks (a merge patch removes only what it names), the whole list null
/// when `want` is empty; nothing when both are empty (KAI omits an empty list).
void put_list(json& obj, const char* key, const model::ResourceList& want, const model::ResourceList& have) {
  if (want.empty()) {
    if (!have.empty()) obj[key] = nullptr;
    return;
  }
  json out = json::object();
  for (const auto& [name, milli] : want) out[name] = model::format_quantity_milli(milli);
  for (const auto& [name, milli] : have) {
    if (!want.count(name)) out[name] = nullptr;
  }
  obj[key] = std::move(out);
}

/// The patch of the three lists of `have` into `want`.
void put_lists(json& obj, const model::ResourcesStatus& want, const model::ResourcesStatus& have) {
  put_list(obj, "requested", want.requested, have.requested);
  put_list(obj, "allocated", want.allocated, have.allocated);
  put_list(obj, "allocatedNonPreemptible", want.allocated_non_preemptible, have.allocated_non_preemptible);
}

/// The PodGroup's node pool, as KAI names it in a condition.
std::string node_pool_of(const model::PodGroup& pg) {
  auto it = pg.meta.labels.find(model::kNodePoolLabel);
  return it == pg.meta.labels.end() || it->second.empty() ? kDefaultNodePool : it->second;
}

int64_t transition_number(const model::SchedulingCondition& c) {
  int64_t n = -1;
  const std::string& t = c.transition_id;
  if (t.empty() || !std::all_of(t.begin(), t.end(), [](char ch) { return ch >= '0' && ch <= '9'; }) || t.size() > 9) {
    return -1;
  }
  n = std::stoll(t);
  return n;
}

/// KAI's setCondition: `conditions` with `next` replacing its node pool's entry, appended with the
/// next transition ID and `now`; false (nothing changed) when the newest condition already says it
/// and is the pool's, last in the list.
bool set_condition(std::vector<model::SchedulingCondition>& conditions, model::SchedulingCondition next,
                   int64_t now) {
  const model::SchedulingCondition* newest = nullptr;
  for (const auto& c : conditions) {
    if (newest == nullptr || transition_number(c) > transition_number(*newest)) newest = &c;
  }
  if (newest != nullptr && !conditions.empty() && newest == &conditions.back() &&
      newest->type == next.type && newest->node_pool == next.node_pool && newest->reason == next.reason &&
      newest->message == next.message && newest->status == next.status) {
    return false;
  }
  const int64_t last = newest != nullptr ? std::max<int64_t>(transition_number(*newest), 0) : 0;
  next.transition_id = std::to_string(static_cast<uint32_t>(last + 1));
  next.last_transition_time = now;
  std::erase_if(conditions, [&](const model::SchedulingCondition& c) { return c.node_pool == next.node_pool; });
  conditions.push_back(std::move(next));
  return true;
}

/// The PodGroup's schedulingConditions after this cycle, as KAI's scheduler sets them: a pending
/// group the cycle could not schedule (and not merely waiting for pods) gets its node pool's
/// condition unless it has pods running or placed; a group with nothing pending and nothing in
/// flight loses them all. Returns whether they changed; `pending` says whether a task waits (pending
/// or gated).
bool next_conditions(const Session& ssn, const JobInfo& job, const events::UnschedulableEvent* why,
                     std::vector<model::SchedulingCondition>& conditions, bool& pending) {
  pending = false;
  bool in_flight = false;
  for (uint32_t t : job.tasks) {
    const PodStatus s = ssn.tasks[t].status;
    pending |= s == PodStatus::kPending || s == PodStatus::kGated;
    in_flight |= s == PodStatus::kAllocated || s == PodStatus::kPipelined || s == PodStatus::kBinding;
  }
  if (!pending) {
    if (in_flight || conditions.empty()) return false;
    conditions.clear();
    return true;
  }
  if (why == nullptr || why->reasons.empty() || why->reasons.front().reason == "NotReady" ||
      ssn.active_allocated_count(job) > 0) {
    return false;
  }
  model::SchedulingCondition c;
  c.type = kUnschedulableOnNodePool;
  c.node_pool = node_pool_of(*job.object);
  c.reason = "Unschedulable";
  c.message = why->reasons.front().message;
  c.status = "True";
  for (const auto& r : why->reasons) c.reasons.push_back({r.reason, r.message});
  return set_condition(conditions, std::move(c), ssn.record_time());
}

/// KAI's queue-controller figures: the spec's quotas in the metrics' units (-1 stays unlimited) and
/// the allocated list in devices, cores and bytes.
QueueControllerFigures figures(const model::Queue& q, const model::ResourceList& allocated) {
  auto unlimited_or = [](double quota, double scale) { return quota == -1 ? -1.0 : quota * scale; };
  auto milli = [&](const char* name) {
    auto it = allocated.find(name);
    return it == allocated.end() ? 0.0 : static_cast<double>(it->second) / 1000.0;
  };
  QueueControllerFigures f;
  f.name = q.meta.name;
  f.display_name = q.display_name;
  f.deserved_gpus = q.gpu.quota;
  f.quota_cpu_cores = unlimited_or(q.cpu.quota, 1e-3);
  f.quota_memory_bytes = unlimited_or(q.memory.quota, 1e6);
  f.allocated_gpus = milli(model::kGpuResource);
  f.allocated_cpu_cores = milli("cpu");
  f.allocated_memory_bytes = milli("memory");
  return f;
}

struct Marks {
  const std::map<std::string, events::GroupWriteMark>& marks;
  std::set<std::string> seen;
  std::vector<events::StatusWrite>& out;
  int64_t now_ms;

  /// Adds `w` unless nothing differs (then settles a mark) or the same write was asked recently.
  void offer(events::StatusWrite w, bool differs) {
    const std::string key = w.mark_key();
    if (!marks.empty()) seen.insert(key);
    auto mark = marks.find(key);
    if (!differs) {
      if (mark != marks.end()) out.push_back(events::StatusWrite{w.cycle_id, w.kind, w.object, w.uid, "", true});
      return;
    }
    if (mark != marks.end() && mark->second.hash == events::status_write_hash(w) &&
        now_ms < mark->second.at_ms + events::kGroupWriteRetryMs) {
      return;  // asked for already; its watch event is on its way
    }
    out.push_back(std::move(w));
  }
};

}  // namespace

model::ResourcesStatus pod_group_resources(const Session& ssn, const JobInfo& job,
                                           const model::ResourcesStatus& existing) {
  model::ResourcesStatus r;
  for (uint32_t t : job.tasks) {
    const TaskInfo& task = ssn.tasks[t];
    const model::Pod& pod = *task.pod;
    const bool active = pod.phase == "Pending" || pod.phase == "Running";
    if (!active) continue;
    add_requests(r.requested, pod);
    const GpuRequest& g = task.gpu;
    if (g.kind == GpuRequestKind::kFraction) {
      r.requested[model::kGpuResource] += g.fraction_milli * g.num_devices;
    } else if (g.kind == GpuRequestKind::kMemory) {
      r.requested[kGpuMemoryResource] += g.memory_mib * 1000 * g.num_devices;
    }
    if (!(pod.phase == "Running" || pod_scheduled(pod))) continue;
    add_requests(r.allocated, pod);
    // A shared GPU's portion: one device's (KAI does not multiply it by gpu-fraction-num-devices).
    if (g.kind == GpuRequestKind::kFraction) {
      r.allocated[model::kGpuResource] += g.fraction_milli;
    } else if (g.kind == GpuRequestKind::kMemory && task.node != kNoNode) {
      const int64_t device_mib = ssn.nodes[static_cast<size_t>(task.node)].gpu_memory_mib;
      if (device_mib > 0) r.allocated[model::kGpuResource] += g.memory_mib * 1000 / device_mib;
    }
  }
  r.allocated_non_preemptible = job.preemptible ? existing.allocated_non_preemptible : r.allocated;
  return r;
}

StatusOutput status_writes(const Session& ssn, const model::ObjectRefs& objects,
                           const std::vector<events::UnschedulableEvent>& unschedulable,
                           const events::ScheduleRecords* records, uint64_t cycle_id) {
  StatusOutput result;
  std::vector<events::StatusWrite>& out = result.writes;
  const std::map<std::string, events::GroupWriteMark> none;
  Marks marks{records != nullptr ? records->status_writes : none, {}, out, ssn.now_ms()};
  std::unordered_map<std::string, const events::UnschedulableEvent*> why;
  for (const auto& u : unschedulable) why.emplace(u.pod_group, &u);

  // PodGroups: resourcesStatus and schedulingConditions. A kept session's pass visits only the
  // groups that may have something to write (status_memo.hpp); the others are in sync, and their
  // queues' sums read their watched lists.
  StatusMemo& memo = ssn.status_memo();
  if (!memo.primed) {
    memo.settled.assign(ssn.jobs.size(), 0);
    memo.watched.clear();
    for (const model::PodGroup* pg : objects.pod_groups)
      memo.watched[pg->queue].add(pg->resources_status, +1);
    memo.primed = true;
  }
  std::vector<char>& settled = memo.settled;
  std::string mark_key;  // reused
  auto awaited = [&](const JobInfo& job) {
    if (marks.marks.empty()) return false;
    mark_key.assign("PodGroup ").append(job.key);  // StatusWrite::mark_key()
    return marks.marks.count(mark_key) != 0;
  };
  // What the computed lists change in their queues' sums, beside the watched lists.
  std::map<std::string, ResourceSums, std::less<>> changes;
  for (uint32_t j = 0; j < ssn.jobs.size(); ++j) {
    // A settled job has no write awaited: it settles only once its writes are, and writes come from
    // this pass alone, which skips it.
    if (settled[j] != 0) continue;
    const JobInfo& job = ssn.jobs[j];
    if (job.object == nullptr || job.object->meta.uid.empty()) {
      settled[j] = 1;  // no PodGroup of the API server's to write
      continue;
    }
    const model::PodGroup& pg = *job.object;
    model::ResourcesStatus resources = pod_group_resources(ssn, job, pg.resources_status);
    std::vector<model::SchedulingCondition> conditions = pg.scheduling_conditions;
    auto w = why.find(job.key);
    bool waiting = false;
    const bool conditions_changed =
        next_conditions(ssn, job, w == why.end() ? nullptr : w->second, conditions, waiting);
    const bool resources_changed = resources != pg.resources_status;
    const bool is_awaited = awaited(job);
    if (resources_changed) {
      ResourceSums& sums = changes[pg.queue];
      sums.add(pg.resources_status, -1);
      sums.add(resources, +1);
    }
    const bool now_settled = !resources_changed && !conditions_changed && !is_awaited && !waiting &&
                             pg.scheduling_conditions.empty();
    settled[j] = now_settled ? 1 : 0;
    // In sync and no write of it awaited: nothing to write or settle.
    if (!resources_changed && !conditions_changed && !is_awaited) continue;
    json status = json::object();
    if (resources_changed) {
      json rs = json::object();
      put_lists(rs, resources, pg.resources_status);
      status["resourcesStatus"] = std::move(rs);
    }
    if (conditions_changed) {
      json list = json::array();
      for (const auto& c : conditions) list.push_back(model::encode(c));
      status["schedulingConditions"] = conditions.empty() ? json(nullptr) : std::move(list);
    }
    events::StatusWrite sw{cycle_id, "PodGroup", job.key, pg.meta.uid, "", false};
    if (!status.empty()) sw.patch_json = json{{"status", std::move(status)}}.dump();
    marks.offer(std::move(sw), resources_changed || conditions_changed);
  }

  // Queues: their PodGroups' lists (as computed, else as watched) plus their children's, up the tree;
  // the last pass's sums again while neither the tree nor any sum's input changed.
  bool same_tree = memo.tree.size() == objects.queues.size();
  for (size_t i = 0; i < objects.queues.size() && same_tree; ++i) {
    same_tree = memo.tree[i].first == objects.queues[i]->meta.name &&
                memo.tree[i].second == objects.queues[i]->parent_queue;
  }
  if (!same_tree) {
    memo.tree.clear();
    memo.queue_at.clear();
    memo.children.clear();
    for (uint32_t i = 0; i < objects.queues.size(); ++i) {
      const model::Queue* q = objects.queues[i];
      memo.tree.emplace_back(q->meta.name, q->parent_queue);
      memo.queue_at.emplace(q->meta.name, i);
      if (!q->parent_queue.empty() && q->parent_queue != q->meta.name)
        memo.children[q->parent_queue].push_back(q->meta.name);
    }
    for (auto& [parent, names] : memo.children) std::sort(names.begin(), names.end());
    memo.totals_current = false;
  }
  const std::map<std::string, std::vector<std::string>>& children = memo.children;
  static const std::vector<std::string> kNoChildren;
  auto children_of = [&](const std::string& name) -> const std::vector<std::string>& {
    auto it = children.find(name);
    return it == children.end() ? kNoChildren : it->second;
  };
  if (!memo.totals_current || !changes.empty()) {
    std::map<std::string, model::ResourcesStatus>& total = memo.totals;
    total.clear();
    std::set<std::string> visiting;
    // Depth first; a parent cycle (refused by the session anyway) is cut where it closes.
    std::function<const model::ResourcesStatus&(const std::string&)> sum =
        [&](const std::string& name) -> const model::ResourcesStatus& {
      if (auto it = total.find(name); it != total.end()) return it->second;
      ResourceSums mine;
      if (auto w = memo.watched.find(name); w != memo.watched.end()) mine.add(w->second);
      if (auto c = changes.find(name); c != changes.end()) mine.add(c->second);
      model::ResourcesStatus r = mine.value();
      visiting.insert(name);
      for (const std::string& child : children_of(name)) {
        if (visiting.count(child)) continue;
        const model::ResourcesStatus& c = sum(child);
        add(r.allocated, c.allocated);
        add(r.allocated_non_preemptible, c.allocated_non_preemptible);
        add(r.requested, c.requested);
      }
      visiting.erase(name);
      return total[name] = std::move(r);
    };
    for (const auto& [name, at] : memo.queue_at) sum(name);
    // Computed lists that differ from the watched ones may differ again next pass.
    memo.totals_current = changes.empty();
  }
  for (const auto& [name, at] : memo.queue_at) {
    const model::Queue* q = objects.queues[at];
    const model::ResourcesStatus& want = memo.totals.at(name);
    result.queues.push_back(figures(*q, want.allocated));
    if (q->meta.uid.empty()) continue;  // not from an API server (a hand-written snapshot): nothing to patch
    const std::vector<std::string>& kids = children_of(name);
    const bool resources_changed = want != q->resources_status;
    const bool children_changed = kids != q->child_queues;
    json status = json::object();
    if (resources_changed) put_lists(status, want, q->resources_status);
    if (children_changed) status["childQueues"] = kids.empty() ? json(nullptr) : json(kids);
    events::StatusWrite sw{cycle_id, "Queue", name, q->meta.uid, "", false};
    if (!status.empty()) sw.patch_json = json{{"status", std::move(status)}}.dump();
    marks.offer(std::move(sw), resources_changed || children_changed);
  }
  for (const auto& [key, mark] : marks.marks) {
    if (marks.seen.count(key)) continue;
    const size_t space = key.find(' ');
    out.push_back(events::StatusWrite{cycle_id, key.substr(0, space), key.substr(space + 1), "", "", true});
  }
  return result;
}

}  // namespace kai::core
