#include "actors/scheduler/core/grouping.hpp"

#include <algorithm>
#include <boost/unordered/unordered_flat_map.hpp>
#include <map>
#include <memory>
#include <set>
#include <string_view>
#include <tuple>
#include <unordered_map>

#include "actors/scheduler/core/grouping_memo.hpp"
#include "actors/scheduler/core/grouping_steps.hpp"
#include "actors/scheduler/core/workload_groupers.hpp"
#include "k8s/model/kinds.hpp"

namespace kai::core {
namespace {

/// Whether `group` is "pg-<name>-<uid>", the name KAI's grouper gives an owner's group (compared
/// without building it: the grouper asks for every pod of a session build).
bool is_own_group_name(std::string_view group, std::string_view name, std::string_view uid) {
  constexpr std::string_view kPrefix = "pg-";
  if (group.size() != kPrefix.size() + name.size() + 1 + uid.size()) return false;
  if (group.substr(0, kPrefix.size()) != kPrefix) return false;
  group.remove_prefix(kPrefix.size());
  return group.substr(0, name.size()) == name && group[name.size()] == '-' && group.substr(name.size() + 1) == uid;
}

std::string label(const model::Pod& pod, const char* key) {
  const std::string* v = find_in(pod.meta.labels, key);
  return v == nullptr ? std::string() : *v;
}

/// Knative revisions whose pods an earlier grouper gave one PodGroup each (KAI keeps them so): two
/// pods naming different groups and none shared, or one group owned by a Pod. One owned by neither a
/// Pod nor a Revision is an error text.
void find_per_pod_revisions(const model::ObjectRefs& objects, OwnerIndex& index) {
  struct Named {
    std::set<std::string> groups;
    bool shared = false;
  };
  std::map<std::string, Named> by_revision;
  for (const model::Pod* p : objects.pods) {
    auto rev = p->meta.labels.find("serving.knative.dev/revision");
    auto named = p->meta.annotations.find(model::kPodGroupNameAnnotation);
    if (rev == p->meta.labels.end() || named == p->meta.annotations.end()) continue;
    Named& n = by_revision[p->meta.namespace_ + "/" + rev->second];
    n.shared |= !n.groups.insert(named->second).second;
  }
  for (const auto& [revision, n] : by_revision) {
    if (n.shared) continue;
    if (n.groups.size() > 1) {
      index.knative_per_pod_revisions.emplace(revision, "");
      continue;
    }
    const std::string ns = revision.substr(0, revision.find('/'));
    const model::PodGroup* pg = index.find_pod_group(ns, *n.groups.begin());
    if (pg == nullptr || (!pg->meta.owner_references.empty() && pg->meta.owner_references[0].kind == "Revision")) {
      continue;
    }
    if (!pg->meta.owner_references.empty() && pg->meta.owner_references[0].kind == "Pod") {
      index.knative_per_pod_revisions.emplace(revision, "");
      continue;
    }
    index.knative_per_pod_revisions.emplace(
        revision, "PodGroup " + ns + "/" + pg->meta.name + " of Knative revision " + revision +
                      " is owned by neither its Revision nor a Pod");
  }
}

}  // namespace

namespace grouping_steps {

OwnerIndex index_owners(const model::ObjectRefs& objects) {
  OwnerIndex index;
  for (const model::WorkloadOwner* o : objects.owners) index.owners.emplace(model::key_of(*o), o);
  index.served = &objects.served_owner_kinds;
  for (const model::PriorityClass* pc : objects.priority_classes)
    index.priority_classes.insert(pc->meta.name);
  for (const char* builtin : {"train", "build-preemptible", "build", "inference"}) {
    index.priority_classes.insert(builtin);
  }
  // Pods as owners (Spark executors) and the MPI launcher lookup need the pods by name; most
  // clusters need neither, so the index is built only when something will read it.
  bool needs_pods = false;
  for (const model::WorkloadOwner* o : objects.owners) {
    needs_pods |= o->kind == "MPIJob" ||
                  (!o->meta.owner_references.empty() && o->meta.owner_references.front().kind == "Pod");
  }
  for (size_t i = 0; i < objects.pods.size() && !needs_pods; ++i) {
    const auto& refs = objects.pods[i]->meta.owner_references;
    needs_pods = !refs.empty() && refs.front().kind == "Pod";
  }
  if (needs_pods) {
    for (const model::Pod* p : objects.pods) {
      index.pods.emplace(model::object_key(p->meta), p);
      index.pods_by_namespace.emplace(p->meta.namespace_, p);
    }
  }
  return index;
}

GroupingMemo::Context memo_context(const model::ObjectRefs& objects, const std::string& scheduler_name,
                                   const std::string& default_queue, const GrouperFlags& flags) {
  GroupingMemo::Context context;
  context.priority_classes = objects.priority_classes;
  context.served_owner_kinds.assign(objects.served_owner_kinds.begin(), objects.served_owner_kinds.end());
  context.scheduler_name = scheduler_name;
  context.default_queue = default_queue;
  context.search_legacy_pod_groups = flags.search_legacy_pod_groups;
  context.knative_gang_schedule = flags.knative_gang_schedule;
  context.pod_group_metadata = flags.pod_group_metadata;
  return context;
}

PodDecision decide_pod(
    const model::Pod& pod, OwnerIndex& index, const std::string& default_queue, GroupingMemo* memo,
    const std::function<const model::PodGroup*(const std::string&, const std::string&)>& find_pod_group) {
  PodDecision d;
  if (auto it = pod.meta.annotations.find(model::kPodGroupNameAnnotation);
      it != pod.meta.annotations.end() && !it->second.empty()) {
    d.named = &it->second;
  }
  // KAI's pod grouper leaves alone a bare pod that names its group, and every pod that skips it;
  // a bare pod that names the group the grouper itself named (its annotation, written by the
  // PodGroup writer) is still the grouper's, so it never waits for the object.
  // Held apart from the start: the assignment keeps it without moving its 600 bytes again.
  bool skip = skips_pod_grouper(pod.meta);
  const bool user_named = d.named != nullptr && pod.meta.owner_references.empty() &&
                          !is_own_group_name(*d.named, pod.meta.name, pod.meta.uid);
  if (!skip && !user_named) {
    if (memo != nullptr) d.spec = memo->find(&pod, find_pod_group);
    if (!d.spec) {
      std::vector<PodGroupLookup> lookups;
      index.pod_group_lookups = memo != nullptr ? &lookups : nullptr;
      d.spec = std::make_shared<const GroupSpec>(decide_group(pod, index, default_queue));
      index.pod_group_lookups = nullptr;
      if (memo != nullptr) memo->keep(&pod, d.spec, std::move(lookups));
    }
    skip = d.spec->skipped;
    if (skip) d.spec.reset();
  }
  if (d.spec && !d.spec->rare->waiting_for.empty())
    d.invalid = {"PodGrouperWarning", d.spec->rare->waiting_for};
  if (d.spec && !d.spec->rare->error.empty()) d.invalid = {"PodGrouperWarning", d.spec->rare->error};
  if (skip && d.named == nullptr) {
    d.invalid = {"PodGrouperWarning", "pod " + pod.meta.namespace_ + "/" + pod.meta.name + " sets " +
                                          model::kSkipPodGrouperAnnotation +
                                          " and names no PodGroup (annotation pod-group-name)"};
  }
  // A pod-group-name other than the grouper's own is the user's choice, honoured as written.
  if (d.named != nullptr && d.spec && *d.named != d.spec->name) d.spec.reset();
  // The group's name is viewed where it is held; only a pod that skips the grouper has it spelt.
  if (d.named == nullptr && !d.spec) d.skipped_name = "pg-" + pod.meta.name + "-" + pod.meta.uid;
  return d;
}

void start_group(PodGroupAssignment& a, const model::Pod& pod, const PodDecision& d,
                 const std::string& default_queue) {
  const std::string& group_name = d.group_name();
  a.namespace_ = pod.meta.namespace_;
  a.name = group_name;
  a.missing_pod_group = d.named != nullptr && !d.spec;
  a.uid = d.spec ? d.spec->owner.uid : pod.meta.uid;
  if (d.spec && !is_own_group_name(group_name, d.spec->owner.name, d.spec->owner.uid))
    a.uid += ":" + group_name;
  if (d.spec) {
    a.min_member = d.spec->min_member;  // its queue, class and preemptibility are read from a.spec
  } else {
    std::string queue = label(pod, model::kQueueLabel);
    const bool defaulted = queue.empty();
    if (defaulted) queue = default_queue;
    a.set_own(std::move(queue), defaulted,
              pod.priority_class_name.empty() ? "train" : pod.priority_class_name,
              label(pod, model::kPreemptibilityLabel));
  }
  a.creation_timestamp = pod.meta.creation_timestamp;
}

void join_group(PodGroupAssignment& a, uint32_t position, const model::Pod& pod, PodDecision&& d) {
  a.add_pod(position, d.spec && !d.spec->rare->sub_group.empty() ? d.spec->rare->sub_group
                                                                 : label(pod, model::kSubGroupLabel));
  if (!d.invalid.first.empty() &&
      std::find(a.invalid.begin(), a.invalid.end(), d.invalid) == a.invalid.end()) {
    a.invalid.push_back(std::move(d.invalid));
  }
  if (d.spec && !a.spec) a.spec = std::move(d.spec);
  if (a.pod_group == nullptr) {
    a.creation_timestamp = std::min(a.creation_timestamp, pod.meta.creation_timestamp);
    if (a.spec && a.spec->size_from_pods) a.min_member = static_cast<int32_t>(a.pods.size());
  }
}

}  // namespace grouping_steps

void PodGroupAssignment::add_pod(uint32_t pod, std::string sub_group) {
  pods.push_back(pod);
  if (sub_group.empty() && pod_sub_groups.empty()) return;
  pod_sub_groups.resize(pods.size() - 1);
  pod_sub_groups.push_back(std::move(sub_group));
}

void PodGroupAssignment::set_own(std::string queue, bool queue_defaulted, std::string priority_class_name,
                                 std::string preemptibility) {
  own_.mut() =
      Own{std::move(queue), queue_defaulted, std::move(priority_class_name), std::move(preemptibility)};
  own_set_ = true;
}

int32_t builtin_priority_class_value(const std::string& name) {
  if (name == "train") return 50;
  if (name == "build-preemptible") return 75;
  if (name == "build") return 100;
  if (name == "inference") return 125;
  return -1;
}

std::vector<PodGroupAssignment> group_pods(const model::ObjectRefs& objects,
                                           const std::string& scheduler_name,
                                           const std::string& default_queue, const GrouperFlags& flags,
                                           GroupingMemo* memo, bool* reads_beyond_pod) {
  std::vector<PodGroupAssignment> out;
  out.reserve(objects.pod_groups.size() + objects.pods.size());  // never moved while growing
  // (namespace, name) -> index into out. The keys view the PodGroup objects' names and the
  // assignments' own (which never move: `out` is reserved), so no key is built per group.
  // Open addressing: a node per group, allocated and freed each grouping, cost more than the lookups.
  boost::unordered_flat_map<grouping_steps::NameKey, size_t, grouping_steps::NameKeyHash> by_name;
  by_name.reserve(objects.pod_groups.size() + objects.pods.size());
  for (const model::PodGroup* pg_ptr : objects.pod_groups) {
    const model::PodGroup& pg = *pg_ptr;
    // A duplicate object: the first one wins.
    if (!by_name.emplace(grouping_steps::NameKey{pg.meta.namespace_, pg.meta.name}, out.size()).second)
      continue;
    PodGroupAssignment& a = out.emplace_back();
    a.namespace_ = pg.meta.namespace_;
    a.name = pg.meta.name;
    a.pod_group = &pg;
  }
  OwnerIndex index = grouping_steps::index_owners(objects);
  index.search_legacy_pod_groups = flags.search_legacy_pod_groups;
  index.knative_gang_schedule = flags.knative_gang_schedule;
  index.pod_group_metadata = flags.pod_group_metadata;
  const bool has_revisions = std::any_of(objects.owners.begin(), objects.owners.end(), [](const auto* o) {
    return o->kind == "Revision" && o->group == "serving.knative.dev";
  });
  if (!objects.pod_groups.empty()) {
    // by_name holds only PodGroup objects until the pods are grouped, and later entries are
    // synthesised groups without one, so it answers for the objects throughout.
    index.find_pod_group = [&](const std::string& ns, const std::string& name) -> const model::PodGroup* {
      auto it = by_name.find(grouping_steps::NameKey{ns, name});
      return it == by_name.end() ? nullptr : out[it->second].pod_group;
    };
    if (has_revisions) find_per_pod_revisions(objects, index);
  }
  const bool other_pods = !index.pods.empty() || has_revisions;
  if (reads_beyond_pod != nullptr) {
    *reads_beyond_pod = other_pods || std::any_of(objects.owners.begin(), objects.owners.end(), [](const auto* o) {
      return o->kind == "LeaderWorkerSet" && o->startup_policy == "LeaderReady";
    });
  }
  const bool memo_on = memo != nullptr && memo->begin(grouping_steps::memo_context(objects, scheduler_name,
                                                                                   default_queue, flags),
                                                      objects.owners, other_pods);
  auto find_pod_group = [&](const std::string& ns, const std::string& name) -> const model::PodGroup* {
    return index.find_pod_group ? index.find_pod_group(ns, name) : nullptr;
  };
  const std::function<const model::PodGroup*(const std::string&, const std::string&)> find_for_memo =
      find_pod_group;
  for (uint32_t i = 0; i < objects.pods.size(); ++i) {
    const model::Pod& pod = *objects.pods[i];
    if (pod.scheduler_name != scheduler_name) continue;
    grouping_steps::PodDecision d =
        grouping_steps::decide_pod(pod, index, default_queue, memo_on ? memo : nullptr, find_for_memo);
    const std::string& group_name = d.group_name();
    auto it = by_name.find(grouping_steps::NameKey{pod.meta.namespace_, group_name});
    if (it == by_name.end()) {
      PodGroupAssignment& a = out.emplace_back();  // reserved above: nothing moves
      grouping_steps::start_group(a, pod, d, default_queue);
      it = by_name.emplace(grouping_steps::NameKey{a.namespace_, a.name}, out.size() - 1).first;
    }
    grouping_steps::join_group(out[it->second], i, pod, std::move(d));
  }
  if (memo_on) {
    memo->end();
    GroupingMemo::Layout& layout = memo->layout();
    layout.group_of_pod.assign(objects.pods.size(), -1);
    for (size_t g = 0; g < out.size(); ++g) {
      for (uint32_t p : out[g].pods) layout.group_of_pod[p] = static_cast<int32_t>(g);
    }
    layout.name_hash.resize(out.size());
    for (size_t g = 0; g < out.size(); ++g)
      layout.name_hash[g] = GroupingMemo::name_hash(out[g].namespace_, out[g].name);
    layout.index_names();
    layout.valid = true;
  }
  return out;
}

}  // namespace kai::core
