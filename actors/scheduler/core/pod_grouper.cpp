// The owner walk and the default grouper of KAI's pod grouper (docs/pod-grouping.md "Top owner",
// "Default grouper"); the per-kind groupers are in workload_groupers.cpp.
#include "actors/scheduler/core/pod_grouper.hpp"

#include <algorithm>
#include <string_view>
#include <utility>

#include "actors/scheduler/core/workload_groupers.hpp"
#include "k8s/model/kinds.hpp"
#include "k8s/model/time.hpp"
#include "k8s/model/well_known_names.hpp"

namespace kai::core {
namespace {

std::string group_of(const std::string& api_version) {
  const size_t slash = api_version.find('/');
  return slash == std::string::npos ? std::string() : api_version.substr(0, slash);
}

std::string version_of(const std::string& api_version) {
  const size_t slash = api_version.find('/');
  return slash == std::string::npos ? api_version : api_version.substr(slash + 1);
}

// Both fill an owner in place: the chain's owners are built where they stay (a WorkloadOwner is
// large, and the grouper makes one for every bare pod of a session build).

/// An owner known only by a reference (its kind is not watched): what the default grouper can use.
void fill_from_reference(model::WorkloadOwner& o, const model::OwnerReference& ref, const std::string& ns) {
  o.meta.name = ref.name;
  o.meta.namespace_ = ns;
  o.meta.uid = ref.uid;
  o.group = group_of(ref.api_version);
  o.version = version_of(ref.api_version);
  o.kind = ref.kind;
}

/// A pod as the top owner of itself (a bare pod, a Spark driver).
void fill_from_pod(model::WorkloadOwner& o, const model::Pod& pod) {
  o.meta = pod.meta;
  o.version = "v1";
  o.kind = "Pod";
}

}  // namespace

OwnerChain walk_owners(const model::Pod& pod, const OwnerIndex& index) {
  OwnerChain chain;
  const std::string& ns = pod.meta.namespace_;
  const std::vector<model::OwnerReference>* refs = &pod.meta.owner_references;
  // Each step follows the first ownerReference, as KAI does; a cycle is cut by the step limit.
  for (int step = 0; step < 32; ++step) {
    if (refs->empty()) break;
    const model::OwnerReference& ref = refs->front();
    const std::string group = group_of(ref.api_version);
    if (group.empty() && ref.kind == "Pod") {  // a Spark executor: owned by its driver pod
      auto it = index.pods.find(ns + "/" + ref.name);
      if (it == index.pods.end() || it->second->meta.uid != ref.uid) {
        chain.waiting_for = "waiting for owner Pod " + ns + "/" + ref.name;
        return chain;
      }
      chain.top_pod = it->second;
      refs = &it->second->meta.owner_references;
      continue;
    }
    const std::string group_kind = ref.kind + "." + group;
    auto it = index.owners.find(model::owner_key(group_kind, ns, ref.name));
    if (it == index.owners.end() || (!ref.uid.empty() && it->second->meta.uid != ref.uid)) {
      if (group.empty() || (index.served != nullptr && index.served->count(group_kind))) {
        chain.waiting_for = "waiting for owner " + ref.kind + " " + ns + "/" + ref.name;
        return chain;
      }
      // A kind the scheduler does not watch: the reference is the top owner (docs/pod-grouping.md).
      chain.unwatched = std::make_unique<model::WorkloadOwner>();
      fill_from_reference(*chain.unwatched, ref, ns);
      chain.owners.push_back(chain.unwatched.get());
      chain.top_pod = nullptr;
      chain.top_unwatched = true;
      return chain;
    }
    chain.top_pod = nullptr;
    chain.owners.push_back(it->second);
    if (it->second->meta.owner_references.size() > 1) {
      chain.error = ref.kind + " " + ns + "/" + ref.name + " has more than one owner";
      return chain;
    }
    refs = &it->second->meta.owner_references;
  }
  if (chain.top_pod != nullptr || chain.owners.empty()) {
    chain.unwatched = std::make_unique<model::WorkloadOwner>();
    fill_from_pod(*chain.unwatched, chain.top_pod != nullptr ? *chain.top_pod : pod);
    chain.owners.push_back(chain.unwatched.get());
  }
  return chain;
}

std::string top_owner_metadata(const model::WorkloadOwner& top) {
  // One string, reserved once: the grouper writes this for every pod of a session build.
  const std::pair<std::string_view, const std::string*> fields[] = {
      {"name: ", &top.meta.name}, {"\nuid: ", &top.meta.uid}, {"\ngroup: ", &top.group},
      {"\nversion: ", &top.version}, {"\nkind: ", &top.kind}};
  size_t size = 1;
  for (const auto& [label, value] : fields) size += label.size() + std::max<size_t>(value->size(), 2);
  std::string out;
  out.reserve(size);
  for (const auto& [label, value] : fields) out.append(label).append(value->empty() ? "\"\"" : *value);
  out.push_back('\n');
  return out;
}

std::string choose_priority(const std::vector<const model::WorkloadOwner*>& owners, const model::Pod& pod,
                            const OwnerIndex& index, const std::string& fallback) {
  for (const model::WorkloadOwner* o : owners) {
    const std::string* candidate = find_in(o->meta.labels, "priorityClassName");
    if (candidate == nullptr) candidate = find_in(pod.meta.labels, "priorityClassName");
    if (candidate == nullptr && !pod.priority_class_name.empty()) candidate = &pod.priority_class_name;
    if (candidate != nullptr && index.priority_classes.count(*candidate)) return *candidate;
  }
  return fallback;
}

GroupSpec default_grouper(const model::WorkloadOwner& top, const model::Pod& pod,
                          const std::vector<const model::WorkloadOwner*>& owners, const OwnerIndex& index,
                          const std::string& default_queue, const std::string& priority_fallback) {
  GroupSpec g;
  g.name.reserve(3 + top.meta.name.size() + 1 + top.meta.uid.size());
  g.name.append("pg-").append(top.meta.name).append("-").append(top.meta.uid);
  g.owner.api_version = top.group.empty() ? top.version : top.group + "/" + top.version;
  g.owner.kind = top.kind;
  g.owner.name = top.meta.name;
  g.owner.uid = top.meta.uid;
  if (index.pod_group_metadata) {
    g.labels = top.meta.labels;
    if (!g.labels.count("user")) {
      if (const std::string* u = find_in(pod.meta.labels, "user")) g.labels["user"] = *u;
    }
    if (const std::string* u = find_in(pod.meta.annotations, "user")) g.annotations["user"] = *u;
    g.annotations[model::kTopOwnerMetadataAnnotation] = top_owner_metadata(top);
    for (const auto& [k, v] : top.meta.annotations) g.annotations[k] = v;
  }

  if (const std::string* q = find_in(top.meta.labels, model::kQueueLabel)) {
    g.queue = *q;
  } else if (const std::string* q = find_in(pod.meta.labels, model::kQueueLabel)) {
    g.queue = *q;
  } else {
    const std::string* project = find_in(top.meta.labels, "project");
    if (project == nullptr) project = find_in(pod.meta.labels, "project");
    if (project != nullptr) {
      g.queue = *project;
      if (const std::string* pool = find_in(pod.meta.labels, model::kNodePoolLabel)) g.queue += "-" + *pool;
    }
  }
  g.queue_defaulted = g.queue.empty();
  if (g.queue_defaulted) g.queue = default_queue;

  g.priority_class_name = choose_priority(owners, pod, index, priority_fallback);
  auto first_valid = [&](auto&& valid_on) {
    for (const model::WorkloadOwner* o : owners) {
      if (auto v = valid_on(o->meta)) return v;
    }
    return valid_on(pod.meta);
  };
  g.preemptibility = first_valid([](const model::ObjectMeta& m) -> std::optional<std::string> {
                       const std::string* v = find_in(m.labels, model::kPreemptibilityLabel);
                       if (v != nullptr && (*v == "preemptible" || *v == "non-preemptible")) return *v;
                       return std::nullopt;
                     }).value_or("");
  auto duration = [](const char* key, bool allow_negative) {
    return [key, allow_negative](const model::ObjectMeta& m) -> std::optional<double> {
      const std::string* v = find_in(m.annotations, key);
      if (v == nullptr) return std::nullopt;
      auto ns = model::parse_go_duration_ns(*v);
      if (!ns || (!allow_negative && *ns < 0)) return std::nullopt;
      return static_cast<double>(*ns) / 1e9;
    };
  };
  // Set only when given, so that a group without them holds no GroupSpecRare.
  if (auto delay = first_valid(duration(model::kPreemptionDelayAnnotation, false))) {
    g.rare.mut().preemption_delay_seconds = delay;
  }
  if (auto grace = first_valid(duration(model::kStalenessGracePeriodAnnotation, true))) {
    g.rare.mut().staleness_grace_period_seconds = grace;
  }
  if (auto topology = topology_from(top.meta.annotations, model::kTopologyAnnotation,
                                    model::kTopologyRequiredAnnotation, model::kTopologyPreferredAnnotation);
      !topology.empty()) {
    g.rare.mut().topology = std::move(topology);
  }
  return g;
}

model::TopologyConstraint topology_from(const model::StringMap& annotations, const char* name_key,
                                        const char* required_key, const char* preferred_key) {
  model::TopologyConstraint t;
  if (const std::string* v = find_in(annotations, name_key)) t.topology = *v;
  if (const std::string* v = find_in(annotations, required_key)) t.required_level = *v;
  if (const std::string* v = find_in(annotations, preferred_key)) t.preferred_level = *v;
  return t;
}

bool skips_pod_grouper(const model::ObjectMeta& meta) {
  const std::string* v = find_in(meta.annotations, model::kSkipPodGrouperAnnotation);
  return v != nullptr && *v == "true";
}

GroupSpec decide_group(const model::Pod& pod, const OwnerIndex& index, const std::string& default_queue) {
  OwnerChain chain = walk_owners(pod, index);
  for (const model::WorkloadOwner* o : chain.owners) {
    if (skips_pod_grouper(o->meta)) {
      GroupSpec g;
      g.skipped = true;
      return g;
    }
  }
  if (!chain.waiting_for.empty() || !chain.error.empty()) {
    GroupSpec g;
    g.name = "pg-" + pod.meta.name + "-" + pod.meta.uid;
    g.rare.mut().waiting_for = chain.waiting_for;
    g.rare.mut().error = chain.error;
    g.queue = default_queue;
    g.queue_defaulted = true;
    g.priority_class_name = "train";
    return g;
  }
  return group_by_kind(chain, pod, index, default_queue);
}

}  // namespace kai::core
