// The per-kind groupers of KAI's pod grouper (docs/pod-grouping.md "Per kind"): each starts from the
// default grouper and sizes the gang from the top owner's spec.
#include <charconv>
#include <optional>
#include <set>

#include "actors/scheduler/core/workload_groupers.hpp"
#include "k8s/model/kinds.hpp"
#include "k8s/model/well_known_names.hpp"

namespace kai::core {

std::optional<int32_t> parse_int(const std::string* text) {
  if (text == nullptr) return std::nullopt;
  int32_t v = 0;
  const char* end = text->data() + text->size();
  auto [ptr, ec] = std::from_chars(text->data(), end, v);
  if (text->empty() || ec != std::errc() || ptr != end) return std::nullopt;
  return v;
}

model::SubGroup leaf(std::string name, int32_t min_member, std::optional<std::string> parent) {
  model::SubGroup s;
  s.name = std::move(name);
  s.min_member = min_member;
  s.parent = std::move(parent);
  return s;
}

namespace {

std::string describe(const model::WorkloadOwner& o) {
  return o.kind + " " + o.meta.namespace_ + "/" + o.meta.name;
}

const std::string* label(const model::Pod& pod, const char* key) {
  return find_in(pod.meta.labels, key);
}

/// The pod joins the leaf subgroup its label `key` names, if there is one (else none, as in KAI).
void join_sub_group_of_label(GroupSpec& g, const model::Pod& pod, const char* key) {
  const std::string* name = label(pod, key);
  if (name == nullptr) return;
  for (const auto& s : g.rare->sub_groups) {
    if (s.name == *name && !s.min_sub_group) g.rare.mut().sub_group = s.name;
  }
}

/// Only the top owner is looked at for the priority (KAI's Deployment, Notebook, Knative groupers).
GroupSpec top_only(const model::WorkloadOwner& top, const model::Pod& pod, const OwnerIndex& index,
                   const std::string& default_queue, const std::string& fallback) {
  return default_grouper(top, pod, {&top}, index, default_queue, fallback);
}

/// A topology for a subgroup: only with a name and at least one level.
model::TopologyConstraint sub_group_topology(const model::StringMap& annotations) {
  model::TopologyConstraint t = topology_from(annotations, model::kTopologyAnnotation,
                                              model::kTopologyRequiredAnnotation, model::kTopologyPreferredAnnotation);
  if (t.topology.empty() || (t.required_level.empty() && t.preferred_level.empty())) return {};
  return t;
}

/// The PodGroup `name` in `ns` where the source has PodGroup objects, else null.
const model::PodGroup* existing(const OwnerIndex& index, const std::string& ns, const std::string& name) {
  const model::PodGroup* found = index.find_pod_group ? index.find_pod_group(ns, name) : nullptr;
  if (index.pod_group_lookups != nullptr) index.pod_group_lookups->push_back({ns, name, found});
  return found;
}

GroupSpec batch_job(const model::WorkloadOwner& job, const model::Pod& pod, const OwnerIndex& index,
                    const std::string& default_queue) {
  GroupSpec g = default_grouper(job, pod, {&job}, index, default_queue, "train");
  // An earlier KAI gave each pod of a Job its own PodGroup: a pod that has one keeps it (minMember 1).
  if (index.search_legacy_pod_groups) {
    std::string legacy = "pg-" + pod.meta.name + "-" + job.meta.uid;
    if (legacy != g.name && existing(index, pod.meta.namespace_, legacy) != nullptr) {
      g.name = std::move(legacy);
      return g;
    }
  }
  if (const std::string* v = find_in(job.meta.annotations, model::kBatchMinMemberAnnotation)) {
    if (auto n = parse_int(v)) {
      g.min_member = *n;
    } else {
      g.rare.mut().error = describe(job) + ": annotation " + model::kBatchMinMemberAnnotation + " \"" + *v +
                           "\" is not an integer";
    }
  }
  return g;
}

/// Whether an earlier KAI grouped this JobSet flat: a PodGroup of its name (or, InOrder, of its name
/// and a replicatedJob's) without subgroups.
bool legacy_jobset(const model::WorkloadOwner& js, const std::string& name, const OwnerIndex& index) {
  auto flat = [&](const std::string& n) {
    const model::PodGroup* pg = existing(index, js.meta.namespace_, n);
    return pg != nullptr && pg->sub_groups.empty();
  };
  if (flat(name)) return true;
  for (const auto& rj : js.replicas) {
    if (flat(name + "-" + rj.name)) return true;
  }
  return false;
}

/// The earlier KAI's JobSet groups, kept for a JobSet that has them: one flat group (one per
/// replicatedJob when InOrder) of minMember batch-min-member, else 1.
GroupSpec legacy_jobset_group(GroupSpec g, const model::WorkloadOwner& js, const model::Pod& pod) {
  const std::string* rj_name = label(pod, "jobset.sigs.k8s.io/replicatedjob-name");
  if (rj_name == nullptr || rj_name->empty()) {
    g.rare.mut().error = "pod " + pod.meta.namespace_ + "/" + pod.meta.name +
                         " of JobSet has no jobset.sigs.k8s.io/replicatedjob-name label";
    return g;
  }
  if (js.startup_policy == "InOrder") g.name += "-" + *rj_name;
  if (const std::string* v = find_in(js.meta.annotations, model::kBatchMinMemberAnnotation)) {
    if (auto n = parse_int(v)) {
      g.min_member = *n;
    } else {
      g.rare.mut().error = describe(js) + ": annotation " + model::kBatchMinMemberAnnotation + " \"" + *v +
                           "\" is not an integer";
    }
  }
  return g;
}

GroupSpec jobset(const model::WorkloadOwner& js, const model::Pod& pod, const OwnerIndex& index,
                 const std::string& default_queue) {
  GroupSpec g = default_grouper(js, pod, {&js}, index, default_queue, "train");
  if (legacy_jobset(js, g.name, index)) return legacy_jobset_group(std::move(g), js, pod);
  const auto count = static_cast<int32_t>(js.replicas.size());
  if (count == 0) {
    g.rare.mut().error = describe(js) + " has no replicatedJobs";
    return g;
  }
  g.rare.mut().min_sub_group = js.startup_policy == "InOrder" ? 1 : count;
  if (const std::string* v = find_in(js.meta.annotations, model::kBatchMinMemberAnnotation)) {
    auto n = parse_int(v);
    if (!n || *n < 1) {
      g.rare.mut().error = describe(js) + ": annotation " + model::kBatchMinMemberAnnotation + " \"" + *v +
                           "\" is not an integer of at least 1";
      return g;
    }
    g.rare.mut().min_sub_group = std::min(*n, count);
  }
  for (const auto& rj : js.replicas) {
    if (rj.name.empty()) {
      g.rare.mut().error = describe(js) + " has a replicatedJob without a name";
      return g;
    }
    model::SubGroup parent;
    parent.name = rj.name;
    parent.min_sub_group = rj.replicas.value_or(1);
    g.rare.mut().sub_groups.push_back(parent);
    int32_t leaf_min = rj.parallelism.value_or(1);
    if (const std::string* v = find_in(rj.template_annotations, model::kBatchMinMemberAnnotation)) {
      auto n = parse_int(v);
      if (!n || *n < 1) {
        g.rare.mut().error = describe(js) + ": replicatedJob " + rj.name + " annotation " +
                             model::kBatchMinMemberAnnotation + " \"" + *v +
                             "\" is not an integer of at least 1";
        return g;
      }
      leaf_min = *n;
    }
    for (int32_t k = 0; k < rj.replicas.value_or(1); ++k) {
      model::SubGroup l = leaf(rj.name + "-replica-" + std::to_string(k), leaf_min, rj.name);
      l.topology_constraint = sub_group_topology(rj.template_annotations);
      g.rare.mut().sub_groups.push_back(std::move(l));
    }
  }
  const std::string* rj_name = label(pod, "jobset.sigs.k8s.io/replicatedjob-name");
  const std::string* job_index = label(pod, "jobset.sigs.k8s.io/job-index");
  if (rj_name == nullptr || job_index == nullptr) {
    g.rare.mut().error = "pod " + pod.meta.namespace_ + "/" + pod.meta.name +
                         " of JobSet has no jobset.sigs.k8s.io/replicatedjob-name or job-index label";
    return g;
  }
  g.rare.mut().sub_group = *rj_name + "-replica-" + *job_index;
  return g;
}

/// The replica specs every Kubeflow kind requires.
std::vector<std::string> mandatory_replicas(const std::string& kind) {
  if (kind == "XGBoostJob") return {"Master", "Worker"};
  if (kind == "JAXJob") return {"Worker"};
  if (kind == "MPIJob") return {"Launcher", "Worker"};
  return {};
}

const model::WorkloadReplicas* replica(const model::WorkloadOwner& o, const std::string& name) {
  for (const auto& r : o.replicas) {
    if (r.name == name) return &r;
  }
  return nullptr;
}

bool has_live_launcher(const model::WorkloadOwner& job, const OwnerIndex& index) {
  auto [from, to] = index.pods_by_namespace.equal_range(job.meta.namespace_);
  for (auto it = from; it != to; ++it) {
    const model::Pod& p = *it->second;
    const std::string* name = label(p, "training.kubeflow.org/job-name");
    const std::string* role = label(p, "training.kubeflow.org/job-role");
    if (name && role && *name == job.meta.name && *role == "launcher" && !p.meta.deletion_timestamp) return true;
  }
  return false;
}

GroupSpec kubeflow(const model::WorkloadOwner& job, const model::Pod& pod, const OwnerIndex& index,
                   const std::string& default_queue) {
  GroupSpec g = default_grouper(job, pod, {&job}, index, default_queue, "train");
  if (job.min_available) {
    g.min_member = *job.min_available;
  } else {
    for (const std::string& m : mandatory_replicas(job.kind)) {
      if (replica(job, m) == nullptr) {
        g.rare.mut().error = describe(job) + " has no " + m + " replica spec";
        return g;
      }
    }
    int32_t sum = 0;
    for (const auto& r : job.replicas) {
      if (r.replicas.value_or(0) == 0) {
        g.rare.mut().error = describe(job) + ": replica spec " + r.name + " has no replicas";
        return g;
      }
      sum += *r.replicas;
    }
    if (sum <= 0) {
      g.rare.mut().error = describe(job) + " has no replicas";
      return g;
    }
    g.min_member = sum;
    if (job.kind == "PyTorchJob" && job.elastic_min_replicas) g.min_member = *job.elastic_min_replicas;
  }
  if (job.kind == "MPIJob" && job.launcher_creation_policy == "WaitForWorkersReady" &&
      !has_live_launcher(job, index)) {
    const model::WorkloadReplicas* launcher = replica(job, "Launcher");
    if (launcher == nullptr || launcher->replicas.value_or(0) == 0) {
      g.rare.mut().error = describe(job) + " waits for workers but has no Launcher replicas";
      return g;
    }
    g.min_member -= *launcher->replicas;
  }
  if (job.kind != "PyTorchJob") return g;
  // PyTorchJob: a master subgroup and the workers' (one leaf, or segments).
  const model::WorkloadReplicas* master = replica(job, "Master");
  const int32_t masters = master != nullptr ? master->replicas.value_or(0) : 0;
  if (master != nullptr && masters > 0) g.rare.mut().sub_groups.push_back(leaf("master", masters));
  if (const model::WorkloadReplicas* worker = replica(job, "Worker")) {
    add_pytorch_worker_sub_groups(g, job, pod, worker->replicas.value_or(1), std::max(0, g.min_member - masters));
  }
  if (g.rare->sub_group.empty() && g.rare->error.empty())
    join_sub_group_of_label(g, pod, "training.kubeflow.org/replica-type");
  return g;
}

GroupSpec ray(const model::WorkloadOwner& top, const model::Pod& pod, const OwnerIndex& index,
              const std::string& default_queue) {
  GroupSpec g = default_grouper(top, pod, {&top}, index, default_queue, "train");
  if (const std::string* p = find_in(top.meta.labels, "ray.io/priority-class-name")) g.priority_class_name = *p;
  const model::WorkloadOwner* cluster = &top;
  if (top.kind != "RayCluster") {
    if (top.ray_cluster_name.empty()) {
      g.rare.mut().waiting_for = "waiting for " + describe(top) + " to name its RayCluster in its status";
      return g;
    }
    auto it = index.owners.find(model::owner_key("RayCluster.ray.io", top.meta.namespace_, top.ray_cluster_name));
    if (it == index.owners.end()) {
      g.rare.mut().waiting_for =
          "waiting for owner RayCluster " + top.meta.namespace_ + "/" + top.ray_cluster_name;
      return g;
    }
    cluster = it->second;
  }
  g.min_member = 1;
  model::SubGroup head = leaf("headgroup", 1);
  if (cluster->head) head.topology_constraint = sub_group_topology(cluster->head->template_annotations);
  g.rare.mut().sub_groups.push_back(std::move(head));
  for (size_t i = 0; i < cluster->replicas.size(); ++i) {
    const model::WorkloadReplicas& wg = cluster->replicas[i];
    const int32_t replicas = wg.replicas.value_or(0);
    const int32_t min_replicas = wg.min_replicas.value_or(0);
    if (wg.suspended || (replicas == 0 && min_replicas == 0)) continue;
    if (min_replicas > replicas) {
      g.rare.mut().error =
          describe(*cluster) + ": worker group " + wg.name + " has minReplicas above replicas";
      return g;
    }
    const int32_t count = (min_replicas > 0 ? min_replicas : replicas) * wg.num_of_hosts.value_or(1);
    g.min_member += count;
    model::SubGroup s = leaf(wg.name.empty() ? "worker-group-" + std::to_string(i) : wg.name, count);
    s.topology_constraint = sub_group_topology(wg.template_annotations);
    g.rare.mut().sub_groups.push_back(std::move(s));
  }
  // A RayCluster an earlier KAI grouped without subgroups keeps that shape.
  if (const model::PodGroup* pg = existing(index, top.meta.namespace_, g.name); pg != nullptr && pg->sub_groups.empty()) {
    g.rare.mut().sub_groups.clear();
    return g;
  }
  join_sub_group_of_label(g, pod, "ray.io/group");
  return g;
}

GroupSpec leader_worker_set(const model::WorkloadOwner& lws, const model::Pod& pod, const OwnerIndex& index,
                            const std::string& default_queue) {
  GroupSpec g = default_grouper(lws, pod, {&lws}, index, default_queue, "train");
  if (auto n = parse_int(label(pod, "leaderworkerset.sigs.k8s.io/group-index"))) {
    g.name += "-group-" + std::to_string(*n);
  }
  const int32_t size = lws.size.value_or(0);
  if (size <= 0) {
    g.rare.mut().error = describe(lws) + " has no spec.leaderWorkerTemplate.size";
    return g;
  }
  std::optional<int32_t> worker_index;
  if (const std::string* w = label(pod, "leaderworkerset.sigs.k8s.io/worker-index")) {
    worker_index = parse_int(w);
    if (!worker_index || *worker_index < 0) {
      g.rare.mut().error =
          "pod " + pod.meta.namespace_ + "/" + pod.meta.name + ": worker-index \"" + *w + "\" is not valid";
      return g;
    }
  }
  int32_t required = size;
  if (lws.startup_policy == "LeaderReady") {
    const auto from_pod = parse_int(find_in(pod.meta.annotations, "leaderworkerset.sigs.k8s.io/size"));
    required = worker_index == 0 && pod.node_name.empty() ? 1 : from_pod.value_or(size);
  } else if (!lws.startup_policy.empty() && lws.startup_policy != "LeaderCreated") {
    g.rare.mut().error = describe(lws) + ": startupPolicy " + lws.startup_policy + " is not known";
    return g;
  }
  g.min_member = required;
  add_leader_worker_sub_groups(g, lws, pod, worker_index);
  return g;
}

GroupSpec knative(const OwnerChain& chain, const model::Pod& pod, const OwnerIndex& index,
                  const std::string& default_queue) {
  const std::string* revision = label(pod, "serving.knative.dev/revision");
  if (revision == nullptr) {
    GroupSpec g = top_only(*chain.owners.back(), pod, index, default_queue, "inference");
    g.rare.mut().error =
        "pod " + pod.meta.namespace_ + "/" + pod.meta.name + " has no serving.knative.dev/revision label";
    return g;
  }
  auto it = index.owners.find(model::owner_key("Revision.serving.knative.dev", pod.meta.namespace_, *revision));
  if (it == index.owners.end()) {
    GroupSpec g = top_only(*chain.owners.back(), pod, index, default_queue, "inference");
    g.rare.mut().waiting_for = "waiting for owner Revision " + pod.meta.namespace_ + "/" + *revision;
    return g;
  }
  const model::WorkloadOwner& rev = *it->second;
  GroupSpec g = top_only(rev, pod, index, default_queue, "inference");
  g.min_member = parse_int(find_in(rev.meta.annotations, "autoscaling.knative.dev/min-scale")).value_or(1);
  // Without gang scheduling, or for a revision an earlier grouper grouped per pod: one group per pod.
  auto per_pod = index.knative_per_pod_revisions.find(pod.meta.namespace_ + "/" + *revision);
  if (per_pod != index.knative_per_pod_revisions.end() && !per_pod->second.empty()) {
    g.rare.mut().error = per_pod->second;
  } else if (!index.knative_gang_schedule || per_pod != index.knative_per_pod_revisions.end()) {
    g.name = "pg-" + pod.meta.name + "-" + pod.meta.uid;
    g.owner = model::OwnerReference{"v1", "Pod", pod.meta.name, pod.meta.uid, false};
    g.min_member = 1;
    g.priority_class_name = "inference";
  }
  g.preemptibility.clear();
  // Only what the grouper decided itself (KAI's Knative grouper sets no delays or topology).
  if (g.rare->preemption_delay_seconds || g.rare->staleness_grace_period_seconds ||
      !g.rare->topology.empty()) {
    GroupSpecRare& rare = g.rare.mut();
    rare.preemption_delay_seconds.reset();
    rare.staleness_grace_period_seconds.reset();
    rare.topology = {};
  }
  return g;
}

/// KAI skips some top owners (TrainJob, Argo Workflow): the owner below (or the pod) becomes the top,
/// with the skipped owner's labels and annotations where it has none of its own.
GroupSpec skip_top_owner(const OwnerChain& chain, const model::Pod& pod, const OwnerIndex& index,
                         const std::string& default_queue) {
  OwnerChain next;
  const model::WorkloadOwner& skipped = *chain.owners.back();
  next.owners.assign(chain.owners.begin(), chain.owners.end() - 1);
  model::WorkloadOwner top;
  if (next.owners.empty()) {
    top.meta = pod.meta;
    top.version = "v1";
    top.kind = "Pod";
  } else {
    top = *next.owners.back();
    next.owners.pop_back();
  }
  for (const auto& [k, v] : skipped.meta.labels) top.meta.labels.emplace(k, v);
  for (const auto& [k, v] : skipped.meta.annotations) top.meta.annotations.emplace(k, v);
  next.unwatched = std::make_unique<model::WorkloadOwner>(std::move(top));
  next.owners.push_back(next.unwatched.get());
  return group_by_kind(next, pod, index, default_queue);
}

/// An owner of a kind the source does not serve, known by its reference alone: a ReplicaSet is taken
/// as a Deployment's (one group per pod), a workload kind is a gang of the pods present.
GroupSpec unwatched_owner(const OwnerChain& chain, const model::Pod& pod, const OwnerIndex& index,
                          const std::string& default_queue) {
  const model::WorkloadOwner& top = *chain.owners.back();
  static const std::set<std::string, std::less<>> workload_kinds = {
      "PyTorchJob", "TFJob",  "MPIJob",     "XGBoostJob", "PaddleJob",       "JAXJob",  "TrainJob",
      "RayCluster", "RayJob", "RayService", "JobSet",     "LeaderWorkerSet", "Notebook"};
  if ((top.group == "apps" || top.group.empty()) && (top.kind == "ReplicaSet" || top.kind == "Deployment")) {
    GroupSpec g = default_grouper(top, pod, chain.owners, index, default_queue, "inference");
    g.name = "pg-" + pod.meta.name + "-" + pod.meta.uid;
    g.owner = model::OwnerReference{"v1", "Pod", pod.meta.name, pod.meta.uid, false};
    return g;
  }
  const std::string fallback = top.kind == "Notebook" ? "build" : top.kind == "Service" ? "inference" : "train";
  GroupSpec g = default_grouper(top, pod, chain.owners, index, default_queue, fallback);
  g.size_from_pods = workload_kinds.count(top.kind) > 0;
  return g;
}

}  // namespace

GroupSpec group_by_kind(const OwnerChain& chain, const model::Pod& pod, const OwnerIndex& index,
                        const std::string& default_queue) {
  const model::WorkloadOwner& top = *chain.owners.back();
  const std::string& group = top.group;
  const std::string& kind = top.kind;
  if (chain.top_unwatched) return unwatched_owner(chain, pod, index, default_queue);
  if (group.empty() && kind == "Pod") {
    GroupSpec g = default_grouper(top, pod, chain.owners, index, default_queue, "train");
    const std::string* app = find_in(top.meta.labels, "spark-app-name");
    const std::string* selector = find_in(top.meta.labels, "spark-app-selector");
    if (app != nullptr && selector != nullptr) g.name = *selector;
    return g;
  }
  if (group == "apps" && kind == "Deployment") {
    GroupSpec g = top_only(top, pod, index, default_queue, "inference");
    g.name = "pg-" + pod.meta.name + "-" + pod.meta.uid;
    g.owner = model::OwnerReference{"v1", "Pod", pod.meta.name, pod.meta.uid, false};
    return g;
  }
  if (group == "batch" && kind == "Job") return batch_job(top, pod, index, default_queue);
  if (group == "batch" && kind == "CronJob") {
    for (const model::WorkloadOwner* o : chain.owners) {
      if (o->group == "batch" && o->kind == "Job") return default_grouper(*o, pod, {o}, index, default_queue, "train");
    }
    GroupSpec g = default_grouper(top, pod, {&top}, index, default_queue, "train");
    g.rare.mut().error =
        "pod " + pod.meta.namespace_ + "/" + pod.meta.name + " of CronJob has no owner reference of type Job";
    return g;
  }
  if (group == "jobset.x-k8s.io" && kind == "JobSet") return jobset(top, pod, index, default_queue);
  if (group == "kubeflow.org" && kind == "Notebook") return top_only(top, pod, index, default_queue, "build");
  if (group == "kubeflow.org" && (kind == "PyTorchJob" || kind == "TFJob" || kind == "XGBoostJob" ||
                                  kind == "JAXJob" || kind == "PaddleJob" || kind == "MPIJob")) {
    return kubeflow(top, pod, index, default_queue);
  }
  if (group == "ray.io") return ray(top, pod, index, default_queue);
  if (group == "leaderworkerset.x-k8s.io" && kind == "LeaderWorkerSet") {
    return leader_worker_set(top, pod, index, default_queue);
  }
  if (group == "serving.knative.dev" && kind == "Service") return knative(chain, pod, index, default_queue);
  if ((group == "trainer.kubeflow.org" && kind == "TrainJob") || (group == "argoproj.io" && kind == "Workflow")) {
    return skip_top_owner(chain, pod, index, default_queue);
  }
  return default_grouper(top, pod, chain.owners, index, default_queue, "train");
}

}  // namespace kai::core
