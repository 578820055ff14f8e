// The per-kind JSON decoders of json_codec.hpp, and decode_object_into, which picks one by kind and
// apiVersion group. The field readers are in json_decoder.hpp.
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "k8s/model/json_codec.hpp"
#include "k8s/model/json_decoder.hpp"
#include "k8s/model/kinds.hpp"
#include "k8s/model/pod_constraint_paths.hpp"

namespace kai::model {

using namespace json_detail;

namespace {

Status not_an_object(const json& j) {
  return Status::error("expected an object, got " + std::string(j.type_name()));
}

/// Runs a decoder body, turning any exception that slipped through into a Status.
template <class T, class F>
Result<T> guarded(const json& j, F&& body) {
  if (!j.is_object()) return not_an_object(j);
  try {
    T out;
    Decoder d(out.errors);
    d.meta(j, out.meta);
    body(d, out);
    return out;
  } catch (const std::exception& e) {
    return Status::error(std::string("decode failed: ") + e.what());
  }
}

// ------------------------------------------------------------------------------- pod pieces

void decode_containers(Decoder& d, const json& spec, bool init, Pod& pod) {
  const std::string base = init ? "spec.initContainers" : "spec.containers";
  std::vector<Container>& out = init ? pod.init_containers : pod.containers;
  d.each_object(spec, init ? "initContainers" : "containers", base,
                [&](const json& c, const std::string& p, size_t) {
                  Container container;
                  d.str(c, "name", join(p, "name"), container.name);
                  if (const json* res = d.object(c, "resources", join(p, "resources"))) {
                    const std::string rp = join(p, "resources");
                    d.resources(*res, "requests", join(rp, "requests"), container.requests);
                    d.resources(*res, "limits", join(rp, "limits"), container.limits);
                  }
                  // The API server defaults a missing request to its limit.
                  for (const auto& [name, limit] : container.limits) container.requests.emplace(name, limit);
                  d.each_into(c, "ports", join(p, "ports"), container.host_ports,
                              [&](const json& port, const std::string& pp, HostPort& hp) {
                                d.integer(port, "hostPort", join(pp, "hostPort"), hp.port);
                                d.str(port, "protocol", join(pp, "protocol"), hp.protocol);
                                if (hp.protocol.empty()) hp.protocol = "TCP";
                                d.str(port, "hostIP", join(pp, "hostIP"), hp.host_ip);
                              });
                  // Only ports that claim a port on the node matter to scheduling (NodePorts).
                  std::erase_if(container.host_ports, [](const HostPort& hp) { return hp.port <= 0; });
                  if (init) {
                    std::string policy;
                    d.str(c, "restartPolicy", join(p, "restartPolicy"), policy);
                    container.restart_policy_always = policy == "Always";  // a native sidecar
                  }
                  out.push_back(std::move(container));
                });
}

std::vector<NodeSelectorRequirement> decode_requirements(Decoder& d, const json& term, std::string_view key,
                                                         const std::string& path) {
  std::vector<NodeSelectorRequirement> out;
  d.each_into(term, key, path, out, [&](const json& r, const std::string& p, NodeSelectorRequirement& req) {
    d.str(r, "key", join(p, "key"), req.key);
    d.str(r, "operator", join(p, "operator"), req.op);
    d.string_list(r, "values", join(p, "values"), req.values);
  });
  return out;
}

/// A metav1.LabelSelector at obj[key], absent when the member is missing or null.
std::optional<LabelSelector> optional_label_selector(Decoder& d, const json& obj, std::string_view key,
                                                     const std::string& path) {
  const json* sel = d.object(obj, key, path);
  if (sel == nullptr) return std::nullopt;
  LabelSelector out;
  d.string_map(*sel, "matchLabels", join(path, "matchLabels"), out.match_labels);
  d.each_into(*sel, "matchExpressions", join(path, "matchExpressions"), out.match_expressions,
              [&](const json& r, const std::string& p, LabelSelectorRequirement& req) {
                d.str(r, "key", join(p, "key"), req.key);
                d.str(r, "operator", join(p, "operator"), req.op);
                d.string_list(r, "values", join(p, "values"), req.values);
              });
  return out;
}

void decode_pod_affinity_term(Decoder& d, const json& t, const std::string& p, PodAffinityTerm& term) {
  term.label_selector = optional_label_selector(d, t, "labelSelector", join(p, "labelSelector"));
  d.string_list(t, "namespaces", join(p, "namespaces"), term.namespaces);
  term.namespace_selector = optional_label_selector(d, t, "namespaceSelector", join(p, "namespaceSelector"));
  d.str(t, "topologyKey", join(p, "topologyKey"), term.topology_key);
  d.string_list(t, "matchLabelKeys", join(p, "matchLabelKeys"), term.match_label_keys);
  d.string_list(t, "mismatchLabelKeys", join(p, "mismatchLabelKeys"), term.mismatch_label_keys);
}

void decode_affinity(Decoder& d, const json& spec, Pod& pod) {
  const json* affinity = d.object(spec, "affinity", "spec.affinity");
  if (affinity == nullptr) return;
  if (const json* na = d.object(*affinity, "nodeAffinity", "spec.affinity.nodeAffinity")) {
    const std::string rp = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution";
    if (const json* req = d.object(*na, "requiredDuringSchedulingIgnoredDuringExecution", rp)) {
      std::vector<NodeSelectorTerm> terms;
      d.each_into(*req, "nodeSelectorTerms", join(rp, "nodeSelectorTerms"), terms,
                  [&](const json& t, const std::string& p, NodeSelectorTerm& term) {
                    term.match_expressions =
                        decode_requirements(d, t, "matchExpressions", join(p, "matchExpressions"));
                    term.match_fields = decode_requirements(d, t, "matchFields", join(p, "matchFields"));
                  });
      pod.required_node_affinity = std::move(terms);
    }
  }
  const std::pair<std::string_view, PodAffinityRules Pod::*> pod_affinities[] = {
      {"podAffinity", &Pod::pod_affinity}, {"podAntiAffinity", &Pod::pod_anti_affinity}};
  for (const auto& [kind, rules] : pod_affinities) {
    const std::string path = "spec.affinity." + std::string(kind);
    const json* pa = d.object(*affinity, kind, path);
    if (pa == nullptr) continue;
    const std::string rp = join(path, "requiredDuringSchedulingIgnoredDuringExecution");
    d.each_into(*pa, "requiredDuringSchedulingIgnoredDuringExecution", rp, (pod.*rules).required,
                [&](const json& t, const std::string& p, PodAffinityTerm& term) { decode_pod_affinity_term(d, t, p, term); });
    const std::string pp = join(path, "preferredDuringSchedulingIgnoredDuringExecution");
    d.each_into(*pa, "preferredDuringSchedulingIgnoredDuringExecution", pp, (pod.*rules).preferred,
                [&](const json& w, const std::string& p, WeightedPodAffinityTerm& weighted) {
                  d.integer(w, "weight", join(p, "weight"), weighted.weight);
                  if (const json* t = d.object(w, "podAffinityTerm", join(p, "podAffinityTerm")))
                    decode_pod_affinity_term(d, *t, join(p, "podAffinityTerm"), weighted.term);
                });
  }
}

void decode_topology_spread(Decoder& d, const json& spec, Pod& pod) {
  d.each_into(spec, "topologySpreadConstraints", "spec.topologySpreadConstraints", pod.topology_spread_constraints,
              [&](const json& c, const std::string& p, TopologySpreadConstraint& tsc) {
                d.integer(c, "maxSkew", join(p, "maxSkew"), tsc.max_skew);
                d.str(c, "topologyKey", join(p, "topologyKey"), tsc.topology_key);
                d.str(c, "whenUnsatisfiable", join(p, "whenUnsatisfiable"), tsc.when_unsatisfiable);
                if (tsc.when_unsatisfiable.empty()) tsc.when_unsatisfiable = "DoNotSchedule";
                tsc.label_selector = optional_label_selector(d, c, "labelSelector", join(p, "labelSelector"));
                d.optional_integer(c, "minDomains", join(p, "minDomains"), tsc.min_domains);
                d.str(c, "nodeAffinityPolicy", join(p, "nodeAffinityPolicy"), tsc.node_affinity_policy);
                if (tsc.node_affinity_policy.empty()) tsc.node_affinity_policy = "Honor";
                d.str(c, "nodeTaintsPolicy", join(p, "nodeTaintsPolicy"), tsc.node_taints_policy);
                if (tsc.node_taints_policy.empty()) tsc.node_taints_policy = "Ignore";
                d.string_list(c, "matchLabelKeys", join(p, "matchLabelKeys"), tsc.match_label_keys);
              });
}

TopologyConstraint decode_topology_constraint(Decoder& d, const json& obj, const std::string& path) {
  TopologyConstraint t;
  const json* tc = d.object(obj, "topologyConstraint", path);
  if (tc == nullptr) return t;
  d.str(*tc, "topology", join(path, "topology"), t.topology);
  d.str(*tc, "requiredTopologyLevel", join(path, "requiredTopologyLevel"), t.required_level);
  d.str(*tc, "preferredTopologyLevel", join(path, "preferredTopologyLevel"), t.preferred_level);
  return t;
}

std::string group_of(std::string_view api_version) {
  const size_t slash = api_version.find('/');
  return slash == std::string_view::npos ? std::string() : std::string(api_version.substr(0, slash));
}

}  // namespace

// ------------------------------------------------------------------------------------ decoders

Result<Node> decode_node(const json& j) {
  return guarded<Node>(j, [&](Decoder& d, Node& n) {
    if (const json* spec = d.object(j, "spec", "spec")) {
      d.boolean(*spec, "unschedulable", "spec.unschedulable", n.unschedulable);
      d.each_into(*spec, "taints", "spec.taints", n.taints,
                  [&](const json& t, const std::string& p, Taint& taint) {
                    d.str(t, "key", join(p, "key"), taint.key);
                    d.str(t, "value", join(p, "value"), taint.value);
                    d.str(t, "effect", join(p, "effect"), taint.effect);
                  });
    }
    if (const json* status = d.object(j, "status", "status")) {
      d.resources(*status, "capacity", "status.capacity", n.capacity);
      d.resources(*status, "allocatable", "status.allocatable", n.allocatable);
      d.each_into(*status, "conditions", "status.conditions", n.conditions,
                  [&](const json& c, const std::string& p, NodeCondition& cond) {
                    d.str(c, "type", join(p, "type"), cond.type);
                    d.str(c, "status", join(p, "status"), cond.status);
                  });
    }
  });
}

Result<Pod> decode_pod(const json& j) {
  return guarded<Pod>(j, [&](Decoder& d, Pod& pod) {
    if (const json* spec = d.object(j, "spec", "spec")) {
      d.str(*spec, "schedulerName", "spec.schedulerName", pod.scheduler_name);
      d.str(*spec, "nodeName", "spec.nodeName", pod.node_name);
      d.str(*spec, "priorityClassName", "spec.priorityClassName", pod.priority_class_name);
      d.optional_integer(*spec, "priority", "spec.priority", pod.priority);
      d.string_map(*spec, "nodeSelector", "spec.nodeSelector", pod.node_selector);
      decode_affinity(d, *spec, pod);
      decode_topology_spread(d, *spec, pod);
      d.each_into(*spec, "tolerations", "spec.tolerations", pod.tolerations,
                  [&](const json& t, const std::string& p, Toleration& tol) {
                    d.str(t, "key", join(p, "key"), tol.key);
                    d.str(t, "operator", join(p, "operator"), tol.op);
                    if (tol.op.empty()) tol.op = "Equal";
                    d.str(t, "value", join(p, "value"), tol.value);
                    d.str(t, "effect", join(p, "effect"), tol.effect);
                  });
      decode_containers(d, *spec, false, pod);
      decode_containers(d, *spec, true, pod);
      d.resources(*spec, "overhead", "spec.overhead", pod.overhead);
      if (const json* gates = d.array(*spec, "schedulingGates", "spec.schedulingGates")) {
        pod.scheduling_gates = static_cast<int>(gates->size());
      }
      const json* claims = d.array(*spec, "resourceClaims", std::string(kResourceClaimsPath));
      if (claims != nullptr && !claims->empty())
        pod.unsupported_constraints.emplace_back(kResourceClaimsPath);
    }
    if (const json* status = d.object(j, "status", "status")) {
      d.str(*status, "phase", "status.phase", pod.phase);
      d.str(*status, "nominatedNodeName", "status.nominatedNodeName", pod.nominated_node_name);
      d.each_into(*status, "conditions", "status.conditions", pod.conditions,
                  [&](const json& c, const std::string& p, PodCondition& cond) {
                    d.str(c, "type", join(p, "type"), cond.type);
                    d.str(c, "status", join(p, "status"), cond.status);
                    d.str(c, "reason", join(p, "reason"), cond.reason);
                    d.str(c, "message", join(p, "message"), cond.message);
                    d.timestamp(c, "lastTransitionTime", join(p, "lastTransitionTime"),
                                cond.last_transition_time);
                  });
    }
  });
}

namespace {

/// allocated, allocatedNonPreemptible and requested of `obj` (a Queue's status, a PodGroup's
/// status.resourcesStatus).
void decode_resources_status(Decoder& d, const json& obj, const std::string& path, ResourcesStatus& out) {
  d.resources(obj, "allocated", join(path, "allocated"), out.allocated);
  d.resources(obj, "allocatedNonPreemptible", join(path, "allocatedNonPreemptible"), out.allocated_non_preemptible);
  d.resources(obj, "requested", join(path, "requested"), out.requested);
}

}  // namespace

Result<Queue> decode_queue(const json& j) {
  return guarded<Queue>(j, [&](Decoder& d, Queue& q) {
    const json* spec = d.object(j, "spec", "spec");
    if (spec == nullptr) return;
    d.str(*spec, "displayName", "spec.displayName", q.display_name);
    d.str(*spec, "parentQueue", "spec.parentQueue", q.parent_queue);
    d.integer(*spec, "priority", "spec.priority", q.priority);
    if (const json* res = d.object(*spec, "resources", "spec.resources")) {
      q.has_resources = true;
      const std::pair<const char*, QueueResource*> kinds[] = {
          {"gpu", &q.gpu}, {"cpu", &q.cpu}, {"memory", &q.memory}};
      for (const auto& [name, target] : kinds) {
        const std::string p = std::string("spec.resources.") + name;
        const json* r = d.object(*res, name, p);
        if (r == nullptr) continue;
        d.number(*r, "quota", join(p, "quota"), target->quota);
        d.number(*r, "overQuotaWeight", join(p, "overQuotaWeight"), target->over_quota_weight);
        d.number(*r, "limit", join(p, "limit"), target->limit);
      }
    }
    d.duration_seconds(*spec, "preemptMinRuntime", "spec.preemptMinRuntime", q.preempt_min_runtime_seconds);
    d.duration_seconds(*spec, "reclaimMinRuntime", "spec.reclaimMinRuntime", q.reclaim_min_runtime_seconds);
    if (const json* status = d.object(j, "status", "status")) {
      decode_resources_status(d, *status, "status", q.resources_status);
      d.string_list(*status, "childQueues", "status.childQueues", q.child_queues);
    }
  });
}

Result<PodGroup> decode_pod_group(const json& j) {
  return guarded<PodGroup>(j, [&](Decoder& d, PodGroup& pg) {
    const json* spec = d.object(j, "spec", "spec");
    if (spec == nullptr) return;
    d.integer(*spec, "minMember", "spec.minMember", pg.min_member);
    d.optional_integer(*spec, "minSubGroup", "spec.minSubGroup", pg.min_sub_group);
    d.duration_seconds(*spec, "preemptionDelay", "spec.preemptionDelay", pg.preemption_delay_seconds);
    d.duration_seconds(*spec, "stalenessGracePeriod", "spec.stalenessGracePeriod",
                       pg.staleness_grace_period_seconds);
    d.str(*spec, "queue", "spec.queue", pg.queue);
    d.str(*spec, "priorityClassName", "spec.priorityClassName", pg.priority_class_name);
    d.str(*spec, "preemptibility", "spec.preemptibility", pg.preemptibility);
    d.optional_boolean(*spec, "markUnschedulable", "spec.markUnschedulable", pg.mark_unschedulable);
    d.optional_integer(*spec, "schedulingBackoff", "spec.schedulingBackoff", pg.scheduling_backoff);
    pg.topology_constraint = decode_topology_constraint(d, *spec, "spec.topologyConstraint");
    d.each_into(*spec, "subGroups", "spec.subGroups", pg.sub_groups,
                [&](const json& s, const std::string& p, SubGroup& sg) {
                  d.str(s, "name", join(p, "name"), sg.name);
                  d.integer(s, "minMember", join(p, "minMember"), sg.min_member);
                  d.optional_integer(s, "minSubGroup", join(p, "minSubGroup"), sg.min_sub_group);
                  d.optional_str(s, "parent", join(p, "parent"), sg.parent);
                  sg.topology_constraint = decode_topology_constraint(d, s, join(p, "topologyConstraint"));
                });
    const json* status = d.object(j, "status", "status");
    if (status == nullptr) return;
    if (const json* rs = d.object(*status, "resourcesStatus", "status.resourcesStatus")) {
      decode_resources_status(d, *rs, "status.resourcesStatus", pg.resources_status);
    }
    d.each_into(*status, "schedulingConditions", "status.schedulingConditions", pg.scheduling_conditions,
                [&](const json& c, const std::string& p, SchedulingCondition& sc) {
                  d.str(c, "type", join(p, "type"), sc.type);
                  d.str(c, "nodePool", join(p, "nodePool"), sc.node_pool);
                  d.str(c, "reason", join(p, "reason"), sc.reason);
                  d.str(c, "message", join(p, "message"), sc.message);
                  d.str(c, "status", join(p, "status"), sc.status);
                  d.str(c, "transitionID", join(p, "transitionID"), sc.transition_id);
                  d.timestamp(c, "lastTransitionTime", join(p, "lastTransitionTime"), sc.last_transition_time);
                  d.each_into(c, "reasons", join(p, "reasons"), sc.reasons,
                              [&](const json& r, const std::string& rp, SchedulingReason& sr) {
                                d.str(r, "reason", join(rp, "reason"), sr.reason);
                                d.str(r, "message", join(rp, "message"), sr.message);
                              });
                });
  });
}

Result<PriorityClass> decode_priority_class(const json& j) {
  return guarded<PriorityClass>(j, [&](Decoder& d, PriorityClass& pc) {
    d.integer(j, "value", "value", pc.value);
    d.boolean(j, "globalDefault", "globalDefault", pc.global_default);
    d.str(j, "preemptionPolicy", "preemptionPolicy", pc.preemption_policy);
  });
}

Result<Topology> decode_topology(const json& j) {
  return guarded<Topology>(j, [&](Decoder& d, Topology& t) {
    const json* spec = d.object(j, "spec", "spec");
    if (spec == nullptr) return;
    d.each_into(*spec, "levels", "spec.levels", t.levels, [&](const json& l, const std::string& p, TopologyLevel& level) {
      d.str(l, "nodeLabel", join(p, "nodeLabel"), level.node_label);
      d.str(l, "alias", join(p, "alias"), level.alias);
    });
  });
}

Result<Namespace> decode_namespace(const json& j) {
  return guarded<Namespace>(j, [](Decoder&, Namespace&) {});
}

Result<BindRequest> decode_bind_request(const json& j) {
  return guarded<BindRequest>(j, [&](Decoder& d, BindRequest& br) {
    if (const json* spec = d.object(j, "spec", "spec")) {
      d.str(*spec, "podName", "spec.podName", br.pod_name);
      d.str(*spec, "selectedNode", "spec.selectedNode", br.selected_node);
      d.str(*spec, "receivedResourceType", "spec.receivedResourceType", br.received_resource_type);
      if (const json* gpu = d.object(*spec, "receivedGPU", "spec.receivedGPU")) {
        d.integer(*gpu, "count", "spec.receivedGPU.count", br.received_gpu_count);
        d.str(*gpu, "portion", "spec.receivedGPU.portion", br.received_gpu_portion);
      }
      d.string_list(*spec, "selectedGPUGroups", "spec.selectedGPUGroups", br.selected_gpu_groups);
      d.optional_integer(*spec, "backoffLimit", "spec.backoffLimit", br.backoff_limit);
    }
    if (const json* status = d.object(j, "status", "status")) {
      d.str(*status, "phase", "status.phase", br.phase);
      d.str(*status, "reason", "status.reason", br.reason);
      d.integer(*status, "failedAttempts", "status.failedAttempts", br.failed_attempts);
    }
  });
}

// ------------------------------------------------------------------------------- workload owners

namespace {

/// The replica map of each Kubeflow kind (docs/pod-grouping.md "Per kind").
std::string_view kubeflow_replica_map(std::string_view kind) {
  if (kind == "PyTorchJob") return "pytorchReplicaSpecs";
  if (kind == "TFJob") return "tfReplicaSpecs";
  if (kind == "XGBoostJob") return "xgbReplicaSpecs";
  if (kind == "JAXJob") return "jaxReplicaSpecs";
  if (kind == "PaddleJob") return "paddleReplicaSpecs";
  if (kind == "MPIJob") return "mpiReplicaSpecs";
  return {};
}

/// `template.metadata.annotations` of `obj`.
void template_annotations(Decoder& d, const json& obj, const std::string& path, StringMap& out) {
  const json* t = d.object(obj, "template", join(path, "template"));
  if (t == nullptr) return;
  if (const json* md = d.object(*t, "metadata", join(path, "template.metadata"))) {
    d.string_map(*md, "annotations", join(path, "template.metadata.annotations"), out);
  }
}

void decode_jobset(Decoder& d, const json& spec, WorkloadOwner& o) {
  d.each_into(spec, "replicatedJobs", "spec.replicatedJobs", o.replicas,
              [&](const json& rj, const std::string& p, WorkloadReplicas& r) {
                d.str(rj, "name", join(p, "name"), r.name);
                d.optional_integer(rj, "replicas", join(p, "replicas"), r.replicas);
                template_annotations(d, rj, p, r.template_annotations);
                if (const json* t = d.object(rj, "template", join(p, "template"))) {
                  if (const json* js = d.object(*t, "spec", join(p, "template.spec"))) {
                    d.optional_integer(*js, "parallelism", join(p, "template.spec.parallelism"), r.parallelism);
                  }
                }
              });
  if (const json* sp = d.object(spec, "startupPolicy", "spec.startupPolicy")) {
    d.str(*sp, "startupPolicyOrder", "spec.startupPolicy.startupPolicyOrder", o.startup_policy);
  }
}

void decode_kubeflow(Decoder& d, const json& spec, std::string_view map_key, WorkloadOwner& o) {
  const std::string map_path = join("spec", map_key);
  if (const json* m = d.object(spec, map_key, map_path)) {
    for (const auto& [type, rs] : m->items()) {  // nlohmann's objects iterate in key order
      const std::string p = join(map_path, type);
      WorkloadReplicas r;
      r.name = type;
      if (!rs.is_object()) {
        d.wrong_type(p, "an object", rs);
        continue;
      }
      d.optional_integer(rs, "replicas", join(p, "replicas"), r.replicas);
      template_annotations(d, rs, p, r.template_annotations);
      o.replicas.push_back(std::move(r));
    }
  }
  if (const json* rp = d.object(spec, "runPolicy", "spec.runPolicy")) {
    if (const json* sp = d.object(*rp, "schedulingPolicy", "spec.runPolicy.schedulingPolicy")) {
      d.optional_integer(*sp, "minAvailable", "spec.runPolicy.schedulingPolicy.minAvailable", o.min_available);
    }
  }
  if (const json* ep = d.object(spec, "elasticPolicy", "spec.elasticPolicy")) {
    d.optional_integer(*ep, "minReplicas", "spec.elasticPolicy.minReplicas", o.elastic_min_replicas);
  }
  d.str(spec, "launcherCreationPolicy", "spec.launcherCreationPolicy", o.launcher_creation_policy);
}

void decode_ray_cluster_spec(Decoder& d, const json& spec, const std::string& path, WorkloadOwner& o) {
  if (const json* head = d.object(spec, "headGroupSpec", join(path, "headGroupSpec"))) {
    WorkloadReplicas h;
    h.name = "headgroup";
    template_annotations(d, *head, join(path, "headGroupSpec"), h.template_annotations);
    o.head = std::move(h);
  }
  d.each_into(spec, "workerGroupSpecs", join(path, "workerGroupSpecs"), o.replicas,
              [&](const json& g, const std::string& p, WorkloadReplicas& r) {
                d.str(g, "groupName", join(p, "groupName"), r.name);
                d.optional_integer(g, "replicas", join(p, "replicas"), r.replicas);
                d.optional_integer(g, "minReplicas", join(p, "minReplicas"), r.min_replicas);
                d.optional_integer(g, "numOfHosts", join(p, "numOfHosts"), r.num_of_hosts);
                d.boolean(g, "suspend", join(p, "suspend"), r.suspended);
                template_annotations(d, g, p, r.template_annotations);
              });
}

void decode_ray(Decoder& d, const json& j, const json& spec, WorkloadOwner& o) {
  if (o.kind == "RayCluster") decode_ray_cluster_spec(d, spec, "spec", o);
  const json* status = member(j, "status");
  if (status == nullptr || !status->is_object()) return;
  if (o.kind == "RayJob") d.str(*status, "rayClusterName", "status.rayClusterName", o.ray_cluster_name);
  if (o.kind == "RayService") {
    for (const char* which : {"pendingServiceStatus", "activeServiceStatus"}) {
      if (const json* s = d.object(*status, which, join("status", which))) {
        std::string name;
        d.str(*s, "rayClusterName", join(join("status", which), "rayClusterName"), name);
        if (!name.empty()) o.ray_cluster_name = name;  // the active one, read last, wins
      }
    }
  }
}

void decode_leader_worker_set(Decoder& d, const json& spec, WorkloadOwner& o) {
  d.str(spec, "startupPolicy", "spec.startupPolicy", o.startup_policy);
  const json* t = d.object(spec, "leaderWorkerTemplate", "spec.leaderWorkerTemplate");
  if (t == nullptr) return;
  const std::string p = "spec.leaderWorkerTemplate";
  d.optional_integer(*t, "size", join(p, "size"), o.size);
  if (const json* sg = d.object(*t, "subGroupPolicy", join(p, "subGroupPolicy"))) {
    d.optional_integer(*sg, "subGroupSize", join(p, "subGroupPolicy.subGroupSize"), o.sub_group_size);
    d.str(*sg, "subGroupPolicyType", join(p, "subGroupPolicy.subGroupPolicyType"), o.sub_group_policy_type);
  }
  if (const json* w = d.object(*t, "workerTemplate", join(p, "workerTemplate"))) {
    WorkloadReplicas r;
    r.name = "worker";
    if (const json* md = d.object(*w, "metadata", join(p, "workerTemplate.metadata"))) {
      d.string_map(*md, "annotations", join(p, "workerTemplate.metadata.annotations"), r.template_annotations);
    }
    o.replicas.push_back(std::move(r));
  }
}

}  // namespace

Result<WorkloadOwner> decode_workload_owner(const json& j) {
  return guarded<WorkloadOwner>(j, [&](Decoder& d, WorkloadOwner& o) {
    d.str(j, "kind", "kind", o.kind);
    std::string api_version;
    d.str(j, "apiVersion", "apiVersion", api_version);
    // "Kind.group" is how the log names an owner kind whose objects came without apiVersion (list
    // items, synthetic deletions).
    if (const size_t dot = o.kind.find('.'); dot != std::string::npos) {
      o.group = o.kind.substr(dot + 1);
      o.kind.resize(dot);
    }
    if (const size_t slash = api_version.find('/'); slash != std::string::npos) {
      o.group = api_version.substr(0, slash);
      o.version = api_version.substr(slash + 1);
    }
    const json* spec = member(j, "spec");
    if (spec == nullptr || !spec->is_object()) return;
    if (o.group == "jobset.x-k8s.io" && o.kind == "JobSet") {
      decode_jobset(d, *spec, o);
    } else if (o.group == "kubeflow.org" && !kubeflow_replica_map(o.kind).empty()) {
      decode_kubeflow(d, *spec, kubeflow_replica_map(o.kind), o);
    } else if (o.group == "ray.io") {
      decode_ray(d, j, *spec, o);
    } else if (o.group == "leaderworkerset.x-k8s.io" && o.kind == "LeaderWorkerSet") {
      decode_leader_worker_set(d, *spec, o);
    }
  });
}

// ------------------------------------------------------------------------------------ dispatch

Status decode_object_into(const json& j, ClusterObjects& out) {
  if (!j.is_object()) return not_an_object(j);
  const json* kind_v = member(j, "kind");
  if (kind_v == nullptr || !kind_v->is_string() || kind_v->get_ref<const std::string&>().empty()) {
    return Status::error("missing kind");
  }
  const std::string& kind = kind_v->get_ref<const std::string&>();
  const json* md = member(j, "metadata");
  const json* name_v = md == nullptr ? nullptr : member(*md, "name");
  if (name_v == nullptr || !name_v->is_string() || name_v->get_ref<const std::string&>().empty()) {
    return Status::error("missing metadata.name (" + kind + ")");
  }
  std::string api_version;
  if (const json* av = member(j, "apiVersion"); av != nullptr && av->is_string())
    api_version = av->get<std::string>();

  // The kinds table gives each kind's API group. A missing apiVersion is accepted for hand-written
  // inputs; a different group (Volcano's Queue and PodGroup, say) is another kind with the same name.
  Status decoded = Status::ok();
  bool ours = false;
  // An object of a kind outside the table, in a named API group and a namespace, may own pods: it is
  // kept as a workload owner (docs/pod-grouping.md "Owners").
  const json* ns_v = member(*md, "namespace");
  const bool namespaced = ns_v != nullptr && ns_v->is_string() && !ns_v->get_ref<const std::string&>().empty();
  const std::string group = group_of(api_version);
  const bool table_kind = is_known_kind(kind) && !is_owner_kind(kind);
  const std::string effective_kind =
      !table_kind && !is_owner_kind(kind) && !group.empty() && namespaced ? kind + "." + group : kind;
  const bool named = with_kind(effective_kind, [&](auto k) {
    using K = decltype(k);
    ours = api_version.empty() || K::kApiGroup == "*" || group_of(api_version) == K::kApiGroup;
    if constexpr (std::is_same_v<K, kinds::WorkloadOwner>) ours = ours && namespaced;
    if (!ours) return;
    auto result = K::decode(j);
    if (!result) {
      decoded = result.status();
      return;
    }
    if constexpr (std::is_same_v<K, kinds::WorkloadOwner>) out.served_owner_kinds.insert(result->group_kind());
    K::in(out).push_back(std::move(result).value());
  });
  if (!ours) {
    std::string ns;
    if (const json* n = member(*md, "namespace"); n != nullptr && n->is_string()) ns = n->get<std::string>();
    std::string what = kind + " " + (ns.empty() ? "" : ns + "/") + name_v->get<std::string>();
    if (named) what += " (" + api_version + ")";
    out.skipped.push_back(std::move(what));
  }
  return decoded;
}

}  // namespace kai::model
