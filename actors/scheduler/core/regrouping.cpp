#include "actors/scheduler/core/regrouping.hpp"

#include <algorithm>
#include <boost/unordered/unordered_flat_map.hpp>
#include <map>
#include <utility>

#include "actors/scheduler/core/grouping_steps.hpp"

namespace kai::core {
namespace {

/// Pairs the objects of two lists kept in the same order (the cut's): `at[i]` is the position in
/// `after` of `before[i]`, or -1 when it is not found there; `added` lists the positions in `after`
/// of the objects not paired. An object found neither a few places ahead nor behind counts as gone
/// and added (replaced): the groups it touches are made anew, which is always right.
template <class T>
void pair_up(const std::vector<const T*>& before, const std::vector<const T*>& after,
             std::vector<int32_t>& at, std::vector<uint32_t>& added) {
  constexpr size_t kLookAhead = 64;
  at.assign(before.size(), -1);
  size_t i = 0;
  size_t k = 0;
  while (i < before.size() && k < after.size()) {
    if (before[i] == after[k]) {
      at[i++] = static_cast<int32_t>(k++);
      continue;
    }
    size_t d = 1;
    while (d <= kLookAhead && k + d < after.size() && after[k + d] != before[i]) ++d;
    if (d <= kLookAhead && k + d < after.size()) {  // after[k, k + d) came
      for (size_t x = 0; x < d; ++x) added.push_back(static_cast<uint32_t>(k + x));
      k += d;
      continue;
    }
    d = 1;
    while (d <= kLookAhead && i + d < before.size() && before[i + d] != after[k]) ++d;
    if (d <= kLookAhead && i + d < before.size()) {  // before[i, i + d) went
      i += d;
      continue;
    }
    ++i;  // replaced
    added.push_back(static_cast<uint32_t>(k++));
  }
  for (; k < after.size(); ++k) added.push_back(static_cast<uint32_t>(k));
}

/// A group made anew: its PodGroup object (the first of its name in the objects), its pods' positions.
struct Remade {
  std::string namespace_;
  std::string name;
  const model::PodGroup* object = nullptr;
  std::vector<uint32_t> pods;
  PodGroupAssignment group;
};

}  // namespace

PodPairing pair_pods(const std::vector<const model::Pod*>& before,
                     const std::vector<const model::Pod*>& after) {
  PodPairing out;
  pair_up(before, after, out.at, out.added);
  return out;
}

std::optional<Regrouping> regroup_pods(std::vector<PodGroupAssignment>& last,
                                       const model::ObjectRefs& last_objects,
                                       const model::ObjectRefs& objects, const std::string& scheduler_name,
                                       const std::string& default_queue, const GrouperFlags& flags,
                                       GroupingMemo& memo, const PodPairing* pods) {
  namespace steps = grouping_steps;
  GroupingMemo::Layout& layout = memo.layout();
  if (!memo.can_continue(steps::memo_context(objects, scheduler_name, default_queue, flags),
                         objects.owners)) {
    return std::nullopt;
  }
  if (!layout.valid || layout.group_of_pod.size() != last_objects.pods.size() ||
      layout.name_hash.size() != last.size()) {
    return std::nullopt;
  }
  // A LeaderWorkerSet whose startupPolicy is LeaderReady sizes its group by whether its leader is bound.
  for (const model::WorkloadOwner* o : objects.owners) {
    if (o->kind == "LeaderWorkerSet" && o->startup_policy == "LeaderReady") return std::nullopt;
  }
  const PodPairing paired = pods != nullptr ? PodPairing{} : pair_pods(last_objects.pods, objects.pods);
  const std::vector<int32_t>& pod_at = pods != nullptr ? pods->at : paired.at;
  const std::vector<uint32_t>& pods_added = pods != nullptr ? pods->added : paired.added;
  std::vector<int32_t> pod_group_at;
  std::vector<uint32_t> pod_groups_added;
  pair_up(last_objects.pod_groups, objects.pod_groups, pod_group_at, pod_groups_added);
  // A pod owned by a Pod (a Spark executor) makes the grouper index the pods (grouping.cpp).
  for (uint32_t k : pods_added) {
    const auto& owners = objects.pods[k]->meta.owner_references;
    if (!owners.empty() && owners.front().kind == "Pod") return std::nullopt;
  }
  // The last grouping's groups of PodGroup objects come first, one per object, in their order;
  // duplicate names there are left to a full grouping.
  const size_t object_groups = last_objects.pod_groups.size();
  if (last.size() < object_groups ||
      (last.size() > object_groups && last[object_groups].pod_group != nullptr)) {
    return std::nullopt;
  }
  for (size_t k = 0; k < object_groups; ++k) {
    if (last[k].pod_group != last_objects.pod_groups[k]) return std::nullopt;
  }
  // The last group of a name, or -1. Names that share a hash (never seen yet) are looked for one by one.
  auto last_group_named = [&](std::string_view ns, std::string_view name) -> int32_t {
    auto it = layout.group_by_hash.find(GroupingMemo::name_hash(ns, name));
    if (it == layout.group_by_hash.end()) return -1;
    if (it->second == GroupingMemo::Layout::kSeveral) {
      for (size_t g = 0; g < last.size(); ++g) {
        if (last[g].namespace_ == ns && last[g].name == name) return static_cast<int32_t>(g);
      }
      return -1;
    }
    const PodGroupAssignment& g = last[static_cast<size_t>(it->second)];
    return g.namespace_ == ns && g.name == name ? it->second : -1;
  };

  // The groups the PodGroups that went or came touch. A PodGroup some pod's grouper looked up may
  // change that pod's group: left to a full grouping, as are two PodGroups of one name.
  std::vector<char> remake(last.size(), 0);
  std::map<std::pair<std::string, std::string>, Remade> remade;
  auto remade_named = [&](const std::string& ns, const std::string& name) -> Remade& {
    Remade& r = remade[{ns, name}];
    if (r.name.empty()) {
      r.namespace_ = ns;
      r.name = name;
    }
    return r;
  };
  for (size_t k = 0; k < object_groups; ++k) {
    if (pod_group_at[k] >= 0) continue;
    const auto& meta = last_objects.pod_groups[k]->meta;
    if (memo.may_have_looked_up(meta.namespace_, meta.name)) return std::nullopt;
  }
  for (uint32_t k : pod_groups_added) {
    const auto& meta = objects.pod_groups[k]->meta;
    if (memo.may_have_looked_up(meta.namespace_, meta.name)) return std::nullopt;
    const int32_t g = last_group_named(meta.namespace_, meta.name);
    // The name of a PodGroup still there: a duplicate.
    if (g >= 0 && static_cast<size_t>(g) < object_groups && pod_group_at[static_cast<size_t>(g)] >= 0)
      return std::nullopt;
    if (remade.count({meta.namespace_, meta.name}) != 0) return std::nullopt;
    remade_named(meta.namespace_, meta.name).object = objects.pod_groups[k];
  }
  // Nothing fails from here on: the memo groups.
  memo.begin_continued();
  for (size_t k = 0; k < object_groups; ++k) {
    if (pod_group_at[k] < 0) remake[k] = 1;
  }
  for (const auto& [key, r] : remade) {
    const int32_t g = last_group_named(key.first, key.second);
    if (g >= 0) remake[static_cast<size_t>(g)] = 1;
  }
  for (size_t i = 0; i < last_objects.pods.size(); ++i) {
    if (pod_at[i] >= 0) continue;
    memo.forget(last_objects.pods[i]);
    if (layout.group_of_pod[i] >= 0) remake[static_cast<size_t>(layout.group_of_pod[i])] = 1;
  }

  // The pods added, decided; the owners' index and the PodGroups by name only when needed.
  std::optional<OwnerIndex> index;
  std::optional<boost::unordered_flat_map<steps::NameKey, const model::PodGroup*, steps::NameKeyHash>>
      pod_groups_by_name;
  const std::function<const model::PodGroup*(const std::string&, const std::string&)> find_pod_group =
      [&](const std::string& ns, const std::string& name) -> const model::PodGroup* {
    if (!pod_groups_by_name) {
      pod_groups_by_name.emplace();
      for (const model::PodGroup* pg : objects.pod_groups)
        pod_groups_by_name->emplace(steps::NameKey{pg->meta.namespace_, pg->meta.name}, pg);
    }
    auto it = pod_groups_by_name->find(steps::NameKey{ns, name});
    return it == pod_groups_by_name->end() ? nullptr : it->second;
  };
  auto owner_index = [&]() -> OwnerIndex& {
    if (!index) {
      index = steps::index_owners(objects);
      index->search_legacy_pod_groups = flags.search_legacy_pod_groups;
      index->knative_gang_schedule = flags.knative_gang_schedule;
      index->pod_group_metadata = flags.pod_group_metadata;
      if (!objects.pod_groups.empty()) index->find_pod_group = find_pod_group;
    }
    return *index;
  };
  std::vector<std::pair<uint32_t, steps::PodDecision>> decided;
  decided.reserve(pods_added.size());
  for (uint32_t k : pods_added) {
    const model::Pod& pod = *objects.pods[k];
    if (pod.scheduler_name != scheduler_name) continue;
    decided.emplace_back(k, steps::decide_pod(pod, owner_index(), default_queue, &memo, find_pod_group));
  }
  for (auto& [k, d] : decided) {
    const std::string& ns = objects.pods[k]->meta.namespace_;
    const int32_t g = last_group_named(ns, d.group_name());
    if (g >= 0) remake[static_cast<size_t>(g)] = 1;
    remade_named(ns, d.group_name()).pods.push_back(k);
  }
  // The groups to make anew: their pods that stay join those added, and their PodGroup object, if
  // any still, is theirs (a PodGroup that came is already).
  for (size_t g = 0; g < last.size(); ++g) {
    if (remake[g] == 0) continue;
    Remade& r = remade_named(last[g].namespace_, last[g].name);
    for (uint32_t p : last[g].pods) {
      if (pod_at[p] >= 0) r.pods.push_back(static_cast<uint32_t>(pod_at[p]));
    }
    if (g < object_groups && pod_group_at[g] >= 0)
      r.object = objects.pod_groups[static_cast<size_t>(pod_group_at[g])];
  }
  // Each made as group_pods makes it, from its pods in their order.
  std::map<uint32_t, const steps::PodDecision*> decision_of;
  for (auto& [k, d] : decided) decision_of.emplace(k, &d);
  for (auto& [key, r] : remade) {
    std::sort(r.pods.begin(), r.pods.end());
    PodGroupAssignment& a = r.group;
    if (r.object != nullptr) {
      a.namespace_ = r.namespace_;
      a.name = r.name;
      a.pod_group = r.object;
    }
    for (size_t m = 0; m < r.pods.size(); ++m) {
      const model::Pod& pod = *objects.pods[r.pods[m]];
      steps::PodDecision d;
      if (auto it = decision_of.find(r.pods[m]); it != decision_of.end()) {
        d = *it->second;
      } else {
        d = steps::decide_pod(pod, owner_index(), default_queue, &memo, find_pod_group);
      }
      if (m == 0 && r.object == nullptr) steps::start_group(a, pod, d, default_queue);
      steps::join_group(a, r.pods[m], pod, std::move(d));
    }
  }

  // The new order: the groups of PodGroup objects in the objects' order, then the others by their
  // first pod, the groups taken keeping theirs.
  Regrouping out;
  out.groups.reserve(last.size() + pods_added.size());
  out.kept_from.reserve(last.size() + pods_added.size());
  std::vector<int32_t> pod_group_from(objects.pod_groups.size(), -1);
  for (size_t k = 0; k < object_groups; ++k) {
    if (pod_group_at[k] >= 0) pod_group_from[static_cast<size_t>(pod_group_at[k])] = static_cast<int32_t>(k);
  }
  std::vector<int32_t> group_at(last.size(), -1);  // a group taken: its new index
  auto take = [&](size_t g) {
    group_at[g] = static_cast<int32_t>(out.groups.size());
    out.groups.push_back(std::move(last[g]));
    out.kept_from.push_back(static_cast<int32_t>(g));
  };
  auto put = [&](Remade& r) {
    out.groups.push_back(std::move(r.group));
    out.kept_from.push_back(-1);
  };
  for (size_t k = 0; k < objects.pod_groups.size(); ++k) {
    const int32_t from = pod_group_from[k];
    if (from >= 0 && remake[static_cast<size_t>(from)] == 0) {
      take(static_cast<size_t>(from));
      continue;
    }
    const auto& meta = objects.pod_groups[k]->meta;
    auto it = remade.find({meta.namespace_, meta.name});
    if (it != remade.end() && it->second.object == objects.pod_groups[k]) put(it->second);
  }
  std::vector<Remade*> others;
  for (auto& [key, r] : remade) {
    if (r.object == nullptr && !r.pods.empty()) others.push_back(&r);
  }
  std::sort(others.begin(), others.end(),
            [](const Remade* a, const Remade* b) { return a->pods.front() < b->pods.front(); });
  size_t next_other = 0;
  for (size_t g = object_groups; g < last.size(); ++g) {
    if (remake[g] != 0) continue;
    const auto first = static_cast<uint32_t>(pod_at[last[g].pods.front()]);
    while (next_other < others.size() && others[next_other]->pods.front() < first) put(*others[next_other++]);
    take(g);
  }
  while (next_other < others.size()) put(*others[next_other++]);

  // The groups taken hold their pods' new positions.
  for (size_t i = 0; i < out.groups.size(); ++i) {
    if (out.kept_from[i] < 0) continue;
    for (uint32_t& p : out.groups[i].pods) p = static_cast<uint32_t>(pod_at[p]);
  }
  // The layout follows.
  std::vector<int32_t> group_of_pod(objects.pods.size(), -1);
  for (size_t i = 0; i < last_objects.pods.size(); ++i) {
    const int32_t g = layout.group_of_pod[i];
    if (pod_at[i] >= 0 && g >= 0 && group_at[static_cast<size_t>(g)] >= 0) {
      group_of_pod[static_cast<size_t>(pod_at[i])] = group_at[static_cast<size_t>(g)];
    }
  }
  std::vector<uint64_t> name_hash(out.groups.size());
  for (size_t i = 0; i < out.groups.size(); ++i) {
    if (out.kept_from[i] >= 0) {
      name_hash[i] = layout.name_hash[static_cast<size_t>(out.kept_from[i])];
      continue;
    }
    name_hash[i] = GroupingMemo::name_hash(out.groups[i].namespace_, out.groups[i].name);
    for (uint32_t p : out.groups[i].pods) group_of_pod[p] = static_cast<int32_t>(i);
  }
  // The index by name: the groups taken renumbered, the others put anew.
  boost::unordered::erase_if(layout.group_by_hash, [&](const auto& entry) {
    return entry.second >= 0 && group_at[static_cast<size_t>(entry.second)] < 0;
  });
  for (auto& entry : layout.group_by_hash) {
    if (entry.second >= 0) entry.second = group_at[static_cast<size_t>(entry.second)];
  }
  for (size_t i = 0; i < out.groups.size(); ++i) {
    if (out.kept_from[i] >= 0) continue;
    auto [it, added] = layout.group_by_hash.emplace(name_hash[i], static_cast<int32_t>(i));
    if (!added) it->second = GroupingMemo::Layout::kSeveral;
  }
  layout.group_of_pod = std::move(group_of_pod);
  layout.name_hash = std::move(name_hash);
  memo.end_continued();
  return out;
}

}  // namespace kai::core
