#include "actors/scheduler/core/pod_group_objects.hpp"

#include <set>

#include "actors/scheduler/core/workload_groupers.hpp"
#include "k8s/model/json_codec.hpp"
#include "k8s/model/kinds.hpp"
#include "k8s/model/namespaced_key.hpp"
#include "k8s/model/well_known_names.hpp"

namespace kai::core {
namespace {

/// KAI's pod grouper writes no PodGroup for a group of one pod when the flag says so: the bare
/// pod's and the Deployment's groups (one pod, no subgroups).
bool single_pod(const PodGroupAssignment& g) {
  return g.pods.size() == 1 && g.spec->min_member <= 1 && !g.spec->rare->min_sub_group &&
         g.spec->rare->sub_groups.empty();
}

/// The spec as the grouper decided it, usable for a write: a decided name, no owner missing, no
/// refusal.
bool writable(const PodGroupAssignment& g) {
  return g.spec && !g.missing_pod_group && g.spec->rare->waiting_for.empty() && g.spec->rare->error.empty() &&
         !g.spec->skipped && g.spec->name == g.name && !g.spec->owner.uid.empty();
}

/// Whether `want` is a subset of `have`, but for the keys `skip` names.
template <class Skip>
bool subset_but(const model::StringMap& want, const model::StringMap& have, const Skip& skip) {
  for (const auto& [k, v] : want) {
    if (skip(k)) continue;
    auto it = have.find(k);
    if (it == have.end() || it->second != v) return false;
  }
  return true;
}

}  // namespace

// says_the_same(existing, as_update_of(existing, desired_pod_group(g))) without building the desired
// object: a cluster in sync costs each cycle a comparison per group, not a copy of its labels,
// annotations and subgroups. PodGroupObjects.TheInSyncCheckAgreesWithTheUpdateRules holds the two
// together.
bool already_written(const model::PodGroup& existing, const PodGroupAssignment& g) {
  const GroupSpec& s = *g.spec;
  const int32_t min_member = s.rare->min_sub_group ? 1 : s.size_from_pods ? g.min_member : s.min_member;
  if (existing.min_member != min_member || existing.min_sub_group != s.rare->min_sub_group ||
      existing.preemption_delay_seconds != s.rare->preemption_delay_seconds ||
      existing.staleness_grace_period_seconds != s.rare->staleness_grace_period_seconds ||
      existing.priority_class_name != s.priority_class_name || existing.preemptibility != s.preemptibility ||
      (!s.rare->topology.topology.empty() && existing.topology_constraint != s.rare->topology) ||
      existing.sub_groups != s.rare->sub_groups) {
    return false;
  }
  const auto& refs = existing.meta.owner_references;
  if (refs.size() != 1 || refs[0].api_version != s.owner.api_version || refs[0].kind != s.owner.kind ||
      refs[0].name != s.owner.name || refs[0].uid != s.owner.uid || refs[0].controller) {
    return false;
  }
  const bool has_queue_label = existing.meta.labels.count(model::kQueueLabel) > 0;
  return subset_but(s.labels, existing.meta.labels,
                    [&](const std::string& k) {
                      return k == model::kSubGroupLabel || k == model::kNodePoolLabel ||
                             (k == model::kQueueLabel && has_queue_label);
                    }) &&
         subset_but(s.annotations, existing.meta.annotations,
                    [](const std::string& k) { return k == model::kPodGroupNameAnnotation; });
}

model::PodGroup desired_pod_group(const PodGroupAssignment& group) {
  const GroupSpec& s = *group.spec;
  model::PodGroup pg;
  pg.meta.name = s.name;
  pg.meta.namespace_ = group.namespace_;
  pg.meta.labels = s.labels;
  pg.meta.annotations = s.annotations;
  // A bare pod is its own top owner: the grouping marks the writer puts on it are not copied back,
  // or every annotated pod would change its PodGroup once more.
  pg.meta.annotations.erase(model::kPodGroupNameAnnotation);
  pg.meta.labels.erase(model::kSubGroupLabel);
  model::OwnerReference owner = s.owner;
  owner.controller = false;  // KAI's pod grouper sets none
  pg.meta.owner_references = {std::move(owner)};
  // With a root minSubGroup KAI omits minMember, which then reads as the default, 1.
  pg.min_member = s.rare->min_sub_group ? 1 : s.size_from_pods ? group.min_member : s.min_member;
  pg.min_sub_group = s.rare->min_sub_group;
  pg.preemption_delay_seconds = s.rare->preemption_delay_seconds;
  pg.staleness_grace_period_seconds = s.rare->staleness_grace_period_seconds;
  pg.queue = s.queue;
  pg.priority_class_name = s.priority_class_name;
  pg.preemptibility = s.preemptibility;
  pg.topology_constraint = s.rare->topology;
  pg.sub_groups = s.rare->sub_groups;
  return pg;
}

model::PodGroup as_update_of(const model::PodGroup& existing, model::PodGroup desired) {
  desired.queue = existing.queue;
  desired.mark_unschedulable = existing.mark_unschedulable;
  desired.scheduling_backoff = existing.scheduling_backoff;
  // The node pool is never added after creation; it and the queue label keep their values.
  for (const char* key : {model::kNodePoolLabel, model::kQueueLabel}) {
    if (const std::string* v = find_in(existing.meta.labels, key)) {
      desired.meta.labels[key] = *v;
    } else if (std::string(key) == model::kNodePoolLabel) {
      desired.meta.labels.erase(key);
    }
  }
  if (desired.topology_constraint.topology.empty())
    desired.topology_constraint = existing.topology_constraint;
  return desired;
}

bool says_the_same(const model::PodGroup& existing, const model::PodGroup& desired) {
  auto subset = [](const model::StringMap& want, const model::StringMap& have) {
    for (const auto& [k, v] : want) {
      auto it = have.find(k);
      if (it == have.end() || it->second != v) return false;
    }
    return true;
  };
  const model::PodGroup& a = existing;
  const model::PodGroup& b = desired;
  return a.min_member == b.min_member && a.min_sub_group == b.min_sub_group &&
         a.preemption_delay_seconds == b.preemption_delay_seconds &&
         a.staleness_grace_period_seconds == b.staleness_grace_period_seconds && a.queue == b.queue &&
         a.priority_class_name == b.priority_class_name && a.preemptibility == b.preemptibility &&
         a.mark_unschedulable == b.mark_unschedulable && a.scheduling_backoff == b.scheduling_backoff &&
         a.topology_constraint == b.topology_constraint && a.sub_groups == b.sub_groups &&
         a.meta.owner_references == b.meta.owner_references && subset(b.meta.labels, a.meta.labels) &&
         subset(b.meta.annotations, a.meta.annotations);
}

std::vector<events::PodGroupWrite> pod_group_writes(const std::vector<PodGroupAssignment>& groups,
                                                    const std::vector<const model::Pod*>& pods,
                                                    const events::ScheduleRecords* records,
                                                    PodGroupObjects which, int64_t now_ms, uint64_t cycle_id,
                                                    GroupsWritten* written) {
  std::vector<events::PodGroupWrite> out;
  const std::map<std::string, events::GroupWriteMark> none;
  const auto& marks = records != nullptr ? records->group_writes : none;
  if (written != nullptr && (written->which != which || written->in_sync.size() != groups.size())) {
    written->which = which;
    written->in_sync.assign(groups.size(), 0);
  }
  // The marked groups that still need something, only while some are marked: an idle cluster
  // keeps no set. Every other mark is settled below.
  std::set<std::string> unsettled;
  for (size_t i = 0; i < groups.size(); ++i) {
    if (written != nullptr && written->in_sync[i] != 0) continue;
    const PodGroupAssignment& g = groups[i];
    auto needs_nothing = [&] {
      if (written != nullptr) written->in_sync[i] = 1;
    };
    // writable() first: single_pod reads the spec it checks.
    if (which == PodGroupObjects::kNone || !writable(g) ||
        (which == PodGroupObjects::kMultiPod && single_pod(g))) {
      needs_nothing();
      continue;
    }
    events::PodGroupWrite w;
    if (g.pod_group == nullptr || !already_written(*g.pod_group, g)) {
      model::PodGroup desired = desired_pod_group(g);
      if (g.pod_group != nullptr) desired = as_update_of(*g.pod_group, std::move(desired));
      w.object_json = model::encode(desired).dump();
      w.exists = g.pod_group != nullptr;
    }
    for (size_t p = 0; p < g.pods.size(); ++p) {
      const model::Pod& pod = *pods[g.pods[p]];
      if (pod.meta.deletion_timestamp) continue;
      const std::string* named = find_in(pod.meta.annotations, model::kPodGroupNameAnnotation);
      const std::string* label = find_in(pod.meta.labels, model::kSubGroupLabel);
      // KAI sets the label only for a pod in a subgroup and never removes a stale one.
      const std::string& sub_group = g.pod_sub_group(p);
      const bool label_ok = sub_group.empty() || (label != nullptr && *label == sub_group);
      if (named != nullptr && *named == g.name && label_ok) continue;
      w.pods.push_back({model::object_key(pod.meta), pod.meta.uid, sub_group});
    }
    // In sync: nothing is spelt for the group (most groups, most cycles).
    if (w.object_json.empty() && w.pods.empty()) {
      needs_nothing();
      continue;
    }
    w.cycle_id = cycle_id;
    w.group = model::namespaced_key(g.namespace_, g.name);
    auto mark = marks.find(w.group);
    if (mark != marks.end()) unsettled.insert(w.group);
    if (mark != marks.end() && mark->second.hash == events::group_write_hash(w) &&
        now_ms < mark->second.at_ms + events::kGroupWriteRetryMs) {
      continue;  // asked for already; its watch events are on their way
    }
    out.push_back(std::move(w));
  }
  // A marked group in sync, or gone, needs nothing more.
  for (const auto& [group, mark] : marks) {
    if (!unsettled.count(group)) out.push_back(events::PodGroupWrite{cycle_id, group, "", false, {}, true});
  }
  return out;
}

}  // namespace kai::core
