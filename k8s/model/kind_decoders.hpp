#pragma once
// The per-kind JSON decoders, written once over any JSON view (json_decoder.hpp) and instantiated
// for nlohmann's DOM (json_decode.cpp: json_codec.hpp's decode_pod, decode_object_into, ...) and for
// simdjson's (watch_decode.cpp: the watch and list path, which so copies nothing into a second
// DOM). Include only from those two codec units.

#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "k8s/model/json_decoder.hpp"
#include "k8s/model/kinds.hpp"
#include "k8s/model/pod_constraint_paths.hpp"

namespace kai::model::json_detail {

template <class V>
Status not_an_object(V j) {
  return Status::error(std::string("expected an object, got ") + j.type_name());
}

/// Runs a decoder body, turning any exception that slipped through into a Status.
template <class T, class V, class F>
Result<T> guarded(V j, F&& body) {
  if (!j.is_object()) return not_an_object(j);
  try {
    T out;
    Decoder<V> d(out.errors);
    d.meta(j, out.meta);
    body(d, out);
    return out;
  } catch (const std::exception& e) {
    return Status::error(std::string("decode failed: ") + e.what());
  }
}

// ------------------------------------------------------------------------------- pod pieces

template <class V>
void decode_containers(Decoder<V>& d, V spec, bool init, Pod& pod) {
  const Path base(init ? "spec.initContainers" : "spec.containers");
  std::vector<Container>& out = init ? pod.init_containers : pod.containers;
  d.each_object(spec, init ? "initContainers" : "containers", base, [&](V c, const Path& p, size_t) {
    Container container;
    d.str(c, "name", p / "name", container.name);
    const Path rp(p, "resources");
    if (std::optional<V> res = d.object(c, "resources", rp)) {
      d.resources(*res, "requests", rp / "requests", container.requests);
      d.resources(*res, "limits", rp / "limits", container.limits);
    }
    // The API server defaults a missing request to its limit.
    for (const auto& [name, limit] : container.limits) container.requests.emplace(name, limit);
    d.each_into(c, "ports", p / "ports", container.host_ports, [&](V port, const Path& pp, HostPort& hp) {
      d.integer(port, "hostPort", pp / "hostPort", hp.port);
      d.str(port, "protocol", pp / "protocol", hp.protocol);
      if (hp.protocol.empty()) hp.protocol = "TCP";
      d.str(port, "hostIP", pp / "hostIP", hp.host_ip);
    });
    // Only ports that claim a port on the node matter to scheduling (NodePorts).
    std::erase_if(container.host_ports, [](const HostPort& hp) { return hp.port <= 0; });
    if (init) {
      std::string policy;
      d.str(c, "restartPolicy", p / "restartPolicy", policy);
      container.restart_policy_always = policy == "Always";  // a native sidecar
    }
    out.push_back(std::move(container));
  });
}

template <class V>
std::vector<NodeSelectorRequirement> decode_requirements(Decoder<V>& d, V term, std::string_view key,
                                                         const Path& path) {
  std::vector<NodeSelectorRequirement> out;
  d.each_into(term, key, path, out, [&](V r, const Path& p, NodeSelectorRequirement& req) {
    d.str(r, "key", p / "key", req.key);
    d.str(r, "operator", p / "operator", req.op);
    d.string_list(r, "values", p / "values", req.values);
  });
  return out;
}

/// A metav1.LabelSelector at obj[key], absent when the member is missing or null.
template <class V>
std::optional<LabelSelector> optional_label_selector(Decoder<V>& d, V obj, std::string_view key,
                                                     const Path& path) {
  std::optional<V> sel = d.object(obj, key, path);
  if (!sel) return std::nullopt;
  LabelSelector out;
  d.string_map(*sel, "matchLabels", path / "matchLabels", out.match_labels);
  d.each_into(*sel, "matchExpressions", path / "matchExpressions", out.match_expressions,
              [&](V r, const Path& p, LabelSelectorRequirement& req) {
                d.str(r, "key", p / "key", req.key);
                d.str(r, "operator", p / "operator", req.op);
                d.string_list(r, "values", p / "values", req.values);
              });
  return out;
}

template <class V>
void decode_pod_affinity_term(Decoder<V>& d, V t, const Path& p, PodAffinityTerm& term) {
  term.label_selector = optional_label_selector(d, t, "labelSelector", p / "labelSelector");
  d.string_list(t, "namespaces", p / "namespaces", term.namespaces);
  term.namespace_selector = optional_label_selector(d, t, "namespaceSelector", p / "namespaceSelector");
  d.str(t, "topologyKey", p / "topologyKey", term.topology_key);
  d.string_list(t, "matchLabelKeys", p / "matchLabelKeys", term.match_label_keys);
  d.string_list(t, "mismatchLabelKeys", p / "mismatchLabelKeys", term.mismatch_label_keys);
}

template <class V>
void decode_affinity(Decoder<V>& d, V spec, Pod& pod) {
  const Path path("spec.affinity");
  std::optional<V> affinity = d.object(spec, "affinity", path);
  if (!affinity) return;
  const Path na_path(path, "nodeAffinity");
  if (std::optional<V> na = d.object(*affinity, "nodeAffinity", na_path)) {
    const Path rp(na_path, "requiredDuringSchedulingIgnoredDuringExecution");
    if (std::optional<V> req = d.object(*na, "requiredDuringSchedulingIgnoredDuringExecution", rp)) {
      std::vector<NodeSelectorTerm> terms;
      d.each_into(*req, "nodeSelectorTerms", rp / "nodeSelectorTerms", terms,
                  [&](V t, const Path& p, NodeSelectorTerm& term) {
                    term.match_expressions = decode_requirements(d, t, "matchExpressions", p / "matchExpressions");
                    term.match_fields = decode_requirements(d, t, "matchFields", p / "matchFields");
                  });
      pod.required_node_affinity = std::move(terms);
    }
  }
  const std::pair<std::string_view, PodAffinityRules Pod::*> pod_affinities[] = {
      {"podAffinity", &Pod::pod_affinity}, {"podAntiAffinity", &Pod::pod_anti_affinity}};
  for (const auto& [kind, rules] : pod_affinities) {
    const Path kind_path(path, kind);
    std::optional<V> pa = d.object(*affinity, kind, kind_path);
    if (!pa) continue;
    d.each_into(*pa, "requiredDuringSchedulingIgnoredDuringExecution",
                kind_path / "requiredDuringSchedulingIgnoredDuringExecution", (pod.*rules).required,
                [&](V t, const Path& p, PodAffinityTerm& term) { decode_pod_affinity_term(d, t, p, term); });
    d.each_into(*pa, "preferredDuringSchedulingIgnoredDuringExecution",
                kind_path / "preferredDuringSchedulingIgnoredDuringExecution", (pod.*rules).preferred,
                [&](V w, const Path& p, WeightedPodAffinityTerm& weighted) {
                  d.integer(w, "weight", p / "weight", weighted.weight);
                  const Path tp(p, "podAffinityTerm");
                  if (std::optional<V> t = d.object(w, "podAffinityTerm", tp))
                    decode_pod_affinity_term(d, *t, tp, weighted.term);
                });
  }
}

template <class V>
void decode_topology_spread(Decoder<V>& d, V spec, Pod& pod) {
  d.each_into(spec, "topologySpreadConstraints", Path("spec.topologySpreadConstraints"),
              pod.topology_spread_constraints, [&](V c, const Path& p, TopologySpreadConstraint& tsc) {
                d.integer(c, "maxSkew", p / "maxSkew", tsc.max_skew);
                d.str(c, "topologyKey", p / "topologyKey", tsc.topology_key);
                d.str(c, "whenUnsatisfiable", p / "whenUnsatisfiable", tsc.when_unsatisfiable);
                if (tsc.when_unsatisfiable.empty()) tsc.when_unsatisfiable = "DoNotSchedule";
                tsc.label_selector = optional_label_selector(d, c, "labelSelector", p / "labelSelector");
                d.optional_integer(c, "minDomains", p / "minDomains", tsc.min_domains);
                d.str(c, "nodeAffinityPolicy", p / "nodeAffinityPolicy", tsc.node_affinity_policy);
                if (tsc.node_affinity_policy.empty()) tsc.node_affinity_policy = "Honor";
                d.str(c, "nodeTaintsPolicy", p / "nodeTaintsPolicy", tsc.node_taints_policy);
                if (tsc.node_taints_policy.empty()) tsc.node_taints_policy = "Ignore";
                d.string_list(c, "matchLabelKeys", p / "matchLabelKeys", tsc.match_label_keys);
              });
}

template <class V>
TopologyConstraint decode_topology_constraint(Decoder<V>& d, V obj, const Path& path) {
  TopologyConstraint t;
  std::optional<V> tc = d.object(obj, "topologyConstraint", path);
  if (!tc) return t;
  d.str(*tc, "topology", path / "topology", t.topology);
  d.str(*tc, "requiredTopologyLevel", path / "requiredTopologyLevel", t.required_level);
  d.str(*tc, "preferredTopologyLevel", path / "preferredTopologyLevel", t.preferred_level);
  return t;
}

inline std::string group_of(std::string_view api_version) {
  const size_t slash = api_version.find('/');
  return slash == std::string_view::npos ? std::string() : std::string(api_version.substr(0, slash));
}

// ------------------------------------------------------------------------------------ decoders

template <class V>
Result<Node> decode_node(V j) {
  return guarded<Node>(j, [&](Decoder<V>& d, Node& n) {
    const Path spec_path("spec");
    if (std::optional<V> spec = d.object(j, "spec", spec_path)) {
      d.boolean(*spec, "unschedulable", spec_path / "unschedulable", n.unschedulable);
      d.each_into(*spec, "taints", spec_path / "taints", n.taints, [&](V t, const Path& p, Taint& taint) {
        d.str(t, "key", p / "key", taint.key);
        d.str(t, "value", p / "value", taint.value);
        d.str(t, "effect", p / "effect", taint.effect);
      });
    }
    const Path status_path("status");
    if (std::optional<V> status = d.object(j, "status", status_path)) {
      d.resources(*status, "capacity", status_path / "capacity", n.capacity);
      d.resources(*status, "allocatable", status_path / "allocatable", n.allocatable);
      d.each_into(*status, "conditions", status_path / "conditions", n.conditions,
                  [&](V c, const Path& p, NodeCondition& cond) {
                    d.str(c, "type", p / "type", cond.type);
                    d.str(c, "status", p / "status", cond.status);
                  });
    }
  });
}

template <class V>
Result<Pod> decode_pod(V j) {
  return guarded<Pod>(j, [&](Decoder<V>& d, Pod& pod) {
    const Path sp("spec");
    if (std::optional<V> spec = d.object(j, "spec", sp)) {
      d.str(*spec, "schedulerName", sp / "schedulerName", pod.scheduler_name);
      d.str(*spec, "nodeName", sp / "nodeName", pod.node_name);
      d.str(*spec, "priorityClassName", sp / "priorityClassName", pod.priority_class_name);
      d.optional_integer(*spec, "priority", sp / "priority", pod.priority);
      d.string_map(*spec, "nodeSelector", sp / "nodeSelector", pod.node_selector);
      decode_affinity(d, *spec, pod);
      decode_topology_spread(d, *spec, pod);
      d.each_into(*spec, "tolerations", sp / "tolerations", pod.tolerations, [&](V t, const Path& p, Toleration& tol) {
        d.str(t, "key", p / "key", tol.key);
        d.str(t, "operator", p / "operator", tol.op);
        if (tol.op.empty()) tol.op = "Equal";
        d.str(t, "value", p / "value", tol.value);
        d.str(t, "effect", p / "effect", tol.effect);
      });
      decode_containers(d, *spec, false, pod);
      decode_containers(d, *spec, true, pod);
      d.resources(*spec, "overhead", sp / "overhead", pod.overhead);
      if (std::optional<V> gates = d.array(*spec, "schedulingGates", sp / "schedulingGates")) {
        pod.scheduling_gates = static_cast<int>(gates->size());
      }
      std::optional<V> claims = d.array(*spec, "resourceClaims", Path(kResourceClaimsPath));
      if (claims && claims->size() != 0) pod.unsupported_constraints.emplace_back(kResourceClaimsPath);
    }
    const Path st("status");
    if (std::optional<V> status = d.object(j, "status", st)) {
      d.str(*status, "phase", st / "phase", pod.phase);
      d.str(*status, "nominatedNodeName", st / "nominatedNodeName", pod.nominated_node_name);
      d.each_into(*status, "conditions", st / "conditions", pod.conditions, [&](V c, const Path& p, PodCondition& cond) {
        d.str(c, "type", p / "type", cond.type);
        d.str(c, "status", p / "status", cond.status);
        d.str(c, "reason", p / "reason", cond.reason);
        d.str(c, "message", p / "message", cond.message);
        d.timestamp(c, "lastTransitionTime", p / "lastTransitionTime", cond.last_transition_time);
      });
    }
  });
}

/// allocated, allocatedNonPreemptible and requested of `obj` (a Queue's status, a PodGroup's
/// status.resourcesStatus).
template <class V>
void decode_resources_status(Decoder<V>& d, V obj, const Path& path, ResourcesStatus& out) {
  d.resources(obj, "allocated", path / "allocated", out.allocated);
  d.resources(obj, "allocatedNonPreemptible", path / "allocatedNonPreemptible", out.allocated_non_preemptible);
  d.resources(obj, "requested", path / "requested", out.requested);
}

template <class V>
Result<Queue> decode_queue(V j) {
  return guarded<Queue>(j, [&](Decoder<V>& d, Queue& q) {
    const Path sp("spec");
    std::optional<V> spec = d.object(j, "spec", sp);
    if (!spec) return;
    d.str(*spec, "displayName", sp / "displayName", q.display_name);
    d.str(*spec, "parentQueue", sp / "parentQueue", q.parent_queue);
    d.integer(*spec, "priority", sp / "priority", q.priority);
    const Path rp(sp, "resources");
    if (std::optional<V> res = d.object(*spec, "resources", rp)) {
      q.has_resources = true;
      const std::pair<std::string_view, QueueResource*> kinds[] = {
          {"gpu", &q.gpu}, {"cpu", &q.cpu}, {"memory", &q.memory}};
      for (const auto& [name, target] : kinds) {
        const Path p(rp, name);
        std::optional<V> r = d.object(*res, name, p);
        if (!r) continue;
        d.number(*r, "quota", p / "quota", target->quota);
        d.number(*r, "overQuotaWeight", p / "overQuotaWeight", target->over_quota_weight);
        d.number(*r, "limit", p / "limit", target->limit);
      }
    }
    d.duration_seconds(*spec, "preemptMinRuntime", sp / "preemptMinRuntime", q.preempt_min_runtime_seconds);
    d.duration_seconds(*spec, "reclaimMinRuntime", sp / "reclaimMinRuntime", q.reclaim_min_runtime_seconds);
    const Path st("status");
    if (std::optional<V> status = d.object(j, "status", st)) {
      decode_resources_status(d, *status, st, q.resources_status);
      d.string_list(*status, "childQueues", st / "childQueues", q.child_queues);
    }
  });
}

template <class V>
Result<PodGroup> decode_pod_group(V j) {
  return guarded<PodGroup>(j, [&](Decoder<V>& d, PodGroup& pg) {
    const Path sp("spec");
    std::optional<V> spec = d.object(j, "spec", sp);
    if (!spec) return;
    d.integer(*spec, "minMember", sp / "minMember", pg.min_member);
    d.optional_integer(*spec, "minSubGroup", sp / "minSubGroup", pg.min_sub_group);
    d.duration_seconds(*spec, "preemptionDelay", sp / "preemptionDelay", pg.preemption_delay_seconds);
    d.duration_seconds(*spec, "stalenessGracePeriod", sp / "stalenessGracePeriod", pg.staleness_grace_period_seconds);
    d.str(*spec, "queue", sp / "queue", pg.queue);
    d.str(*spec, "priorityClassName", sp / "priorityClassName", pg.priority_class_name);
    d.str(*spec, "preemptibility", sp / "preemptibility", pg.preemptibility);
    d.optional_boolean(*spec, "markUnschedulable", sp / "markUnschedulable", pg.mark_unschedulable);
    d.optional_integer(*spec, "schedulingBackoff", sp / "schedulingBackoff", pg.scheduling_backoff);
    pg.topology_constraint = decode_topology_constraint(d, *spec, sp / "topologyConstraint");
    d.each_into(*spec, "subGroups", sp / "subGroups", pg.sub_groups, [&](V s, const Path& p, SubGroup& sg) {
      d.str(s, "name", p / "name", sg.name);
      d.integer(s, "minMember", p / "minMember", sg.min_member);
      d.optional_integer(s, "minSubGroup", p / "minSubGroup", sg.min_sub_group);
      d.optional_str(s, "parent", p / "parent", sg.parent);
      sg.topology_constraint = decode_topology_constraint(d, s, p / "topologyConstraint");
    });
    const Path st("status");
    std::optional<V> status = d.object(j, "status", st);
    if (!status) return;
    const Path rs_path(st, "resourcesStatus");
    if (std::optional<V> rs = d.object(*status, "resourcesStatus", rs_path)) {
      decode_resources_status(d, *rs, rs_path, pg.resources_status);
    }
    d.each_into(*status, "schedulingConditions", st / "schedulingConditions", pg.scheduling_conditions,
                [&](V c, const Path& p, SchedulingCondition& sc) {
                  d.str(c, "type", p / "type", sc.type);
                  d.str(c, "nodePool", p / "nodePool", sc.node_pool);
                  d.str(c, "reason", p / "reason", sc.reason);
                  d.str(c, "message", p / "message", sc.message);
                  d.str(c, "status", p / "status", sc.status);
                  d.str(c, "transitionID", p / "transitionID", sc.transition_id);
                  d.timestamp(c, "lastTransitionTime", p / "lastTransitionTime", sc.last_transition_time);
                  d.each_into(c, "reasons", p / "reasons", sc.reasons, [&](V r, const Path& rp, SchedulingReason& sr) {
                    d.str(r, "reason", rp / "reason", sr.reason);
                    d.str(r, "message", rp / "message", sr.message);
                  });
                });
  });
}

template <class V>
Result<PriorityClass> decode_priority_class(V j) {
  return guarded<PriorityClass>(j, [&](Decoder<V>& d, PriorityClass& pc) {
    d.integer(j, "value", Path("value"), pc.value);
    d.boolean(j, "globalDefault", Path("globalDefault"), pc.global_default);
    d.str(j, "preemptionPolicy", Path("preemptionPolicy"), pc.preemption_policy);
  });
}

template <class V>
Result<Topology> decode_topology(V j) {
  return guarded<Topology>(j, [&](Decoder<V>& d, Topology& t) {
    const Path sp("spec");
    std::optional<V> spec = d.object(j, "spec", sp);
    if (!spec) return;
    d.each_into(*spec, "levels", sp / "levels", t.levels, [&](V l, const Path& p, TopologyLevel& level) {
      d.str(l, "nodeLabel", p / "nodeLabel", level.node_label);
      d.str(l, "alias", p / "alias", level.alias);
    });
  });
}

template <class V>
Result<Namespace> decode_namespace(V j) {
  return guarded<Namespace>(j, [](Decoder<V>&, Namespace&) {});
}

template <class V>
Result<BindRequest> decode_bind_request(V j) {
  return guarded<BindRequest>(j, [&](Decoder<V>& d, BindRequest& br) {
    const Path sp("spec");
    if (std::optional<V> spec = d.object(j, "spec", sp)) {
      d.str(*spec, "podName", sp / "podName", br.pod_name);
      d.str(*spec, "selectedNode", sp / "selectedNode", br.selected_node);
      d.str(*spec, "receivedResourceType", sp / "receivedResourceType", br.received_resource_type);
      const Path gp(sp, "receivedGPU");
      if (std::optional<V> gpu = d.object(*spec, "receivedGPU", gp)) {
        d.integer(*gpu, "count", gp / "count", br.received_gpu_count);
        d.str(*gpu, "portion", gp / "portion", br.received_gpu_portion);
      }
      d.string_list(*spec, "selectedGPUGroups", sp / "selectedGPUGroups", br.selected_gpu_groups);
      d.optional_integer(*spec, "backoffLimit", sp / "backoffLimit", br.backoff_limit);
    }
    const Path st("status");
    if (std::optional<V> status = d.object(j, "status", st)) {
      d.str(*status, "phase", st / "phase", br.phase);
      d.str(*status, "reason", st / "reason", br.reason);
      d.integer(*status, "failedAttempts", st / "failedAttempts", br.failed_attempts);
    }
  });
}

// ------------------------------------------------------------------------------- workload owners

/// The replica map of each Kubeflow kind (docs/pod-grouping.md "Per kind").
inline std::string_view kubeflow_replica_map(std::string_view kind) {
  if (kind == "PyTorchJob") return "pytorchReplicaSpecs";
  if (kind == "TFJob") return "tfReplicaSpecs";
  if (kind == "XGBoostJob") return "xgbReplicaSpecs";
  if (kind == "JAXJob") return "jaxReplicaSpecs";
  if (kind == "PaddleJob") return "paddleReplicaSpecs";
  if (kind == "MPIJob") return "mpiReplicaSpecs";
  return {};
}

/// `template.metadata.annotations` of `obj`.
template <class V>
void template_annotations(Decoder<V>& d, V obj, const Path& path, StringMap& out) {
  std::optional<V> t = d.object(obj, "template", path / "template");
  if (!t) return;
  if (std::optional<V> md = d.object(*t, "metadata", path / "template.metadata")) {
    d.string_map(*md, "annotations", path / "template.metadata.annotations", out);
  }
}

template <class V>
void decode_jobset(Decoder<V>& d, V spec, WorkloadOwner& o) {
  const Path sp("spec");
  d.each_into(spec, "replicatedJobs", sp / "replicatedJobs", o.replicas, [&](V rj, const Path& p, WorkloadReplicas& r) {
    d.str(rj, "name", p / "name", r.name);
    d.optional_integer(rj, "replicas", p / "replicas", r.replicas);
    template_annotations(d, rj, p, r.template_annotations);
    if (std::optional<V> t = d.object(rj, "template", p / "template")) {
      if (std::optional<V> js = d.object(*t, "spec", p / "template.spec")) {
        d.optional_integer(*js, "parallelism", p / "template.spec.parallelism", r.parallelism);
      }
    }
  });
  if (std::optional<V> policy = d.object(spec, "startupPolicy", sp / "startupPolicy")) {
    d.str(*policy, "startupPolicyOrder", Path("spec.startupPolicy.startupPolicyOrder"), o.startup_policy);
  }
}

template <class V>
void decode_kubeflow(Decoder<V>& d, V spec, std::string_view map_key, WorkloadOwner& o) {
  const Path sp("spec");
  const Path map_path(sp, map_key);
  if (std::optional<V> m = d.object(spec, map_key, map_path)) {
    m->for_each_member([&](std::string_view type, V rs) {  // in key order, as nlohmann's objects iterate
      const Path p(map_path, type);
      if (!rs.is_object()) return d.wrong_type(p, "an object", rs);
      WorkloadReplicas r;
      r.name = type;
      d.optional_integer(rs, "replicas", p / "replicas", r.replicas);
      template_annotations(d, rs, p, r.template_annotations);
      o.replicas.push_back(std::move(r));
    });
  }
  if (std::optional<V> rp = d.object(spec, "runPolicy", sp / "runPolicy")) {
    if (std::optional<V> policy = d.object(*rp, "schedulingPolicy", Path("spec.runPolicy.schedulingPolicy"))) {
      d.optional_integer(*policy, "minAvailable", Path("spec.runPolicy.schedulingPolicy.minAvailable"),
                         o.min_available);
    }
  }
  if (std::optional<V> ep = d.object(spec, "elasticPolicy", sp / "elasticPolicy")) {
    d.optional_integer(*ep, "minReplicas", Path("spec.elasticPolicy.minReplicas"), o.elastic_min_replicas);
  }
  d.str(spec, "launcherCreationPolicy", sp / "launcherCreationPolicy", o.launcher_creation_policy);
}

template <class V>
void decode_ray_cluster_spec(Decoder<V>& d, V spec, const Path& path, WorkloadOwner& o) {
  const Path head_path(path, "headGroupSpec");
  if (std::optional<V> head = d.object(spec, "headGroupSpec", head_path)) {
    WorkloadReplicas h;
    h.name = "headgroup";
    template_annotations(d, *head, head_path, h.template_annotations);
    o.head = std::move(h);
  }
  d.each_into(spec, "workerGroupSpecs", path / "workerGroupSpecs", o.replicas,
              [&](V g, const Path& p, WorkloadReplicas& r) {
                d.str(g, "groupName", p / "groupName", r.name);
                d.optional_integer(g, "replicas", p / "replicas", r.replicas);
                d.optional_integer(g, "minReplicas", p / "minReplicas", r.min_replicas);
                d.optional_integer(g, "numOfHosts", p / "numOfHosts", r.num_of_hosts);
                d.boolean(g, "suspend", p / "suspend", r.suspended);
                template_annotations(d, g, p, r.template_annotations);
              });
}

template <class V>
void decode_ray(Decoder<V>& d, V j, V spec, WorkloadOwner& o) {
  if (o.kind == "RayCluster") decode_ray_cluster_spec(d, spec, Path("spec"), o);
  std::optional<V> status = member(j, "status");
  if (!status || !status->is_object()) return;
  const Path st("status");
  if (o.kind == "RayJob") d.str(*status, "rayClusterName", st / "rayClusterName", o.ray_cluster_name);
  if (o.kind == "RayService") {
    for (std::string_view which : {"pendingServiceStatus", "activeServiceStatus"}) {
      const Path wp(st, which);
      if (std::optional<V> s = d.object(*status, which, wp)) {
        std::string name;
        d.str(*s, "rayClusterName", wp / "rayClusterName", name);
        if (!name.empty()) o.ray_cluster_name = name;  // the active one, read last, wins
      }
    }
  }
}

template <class V>
void decode_leader_worker_set(Decoder<V>& d, V spec, WorkloadOwner& o) {
  d.str(spec, "startupPolicy", Path("spec.startupPolicy"), o.startup_policy);
  const Path p("spec.leaderWorkerTemplate");
  std::optional<V> t = d.object(spec, "leaderWorkerTemplate", p);
  if (!t) return;
  d.optional_integer(*t, "size", p / "size", o.size);
  if (std::optional<V> sg = d.object(*t, "subGroupPolicy", p / "subGroupPolicy")) {
    d.optional_integer(*sg, "subGroupSize", p / "subGroupPolicy.subGroupSize", o.sub_group_size);
    d.str(*sg, "subGroupPolicyType", p / "subGroupPolicy.subGroupPolicyType", o.sub_group_policy_type);
  }
  if (std::optional<V> w = d.object(*t, "workerTemplate", p / "workerTemplate")) {
    WorkloadReplicas r;
    r.name = "worker";
    if (std::optional<V> md = d.object(*w, "metadata", p / "workerTemplate.metadata")) {
      d.string_map(*md, "annotations", p / "workerTemplate.metadata.annotations", r.template_annotations);
    }
    o.replicas.push_back(std::move(r));
  }
}

/// An owner object; `kind_if_absent` stands for a `kind` member the object lacks (list items).
template <class V>
Result<WorkloadOwner> decode_workload_owner(V j, std::string_view kind_if_absent = {}) {
  return guarded<WorkloadOwner>(j, [&](Decoder<V>& d, WorkloadOwner& o) {
    if (j.find("kind")) {
      d.str(j, "kind", Path("kind"), o.kind);
    } else {
      o.kind = kind_if_absent;
    }
    std::string api_version;
    d.str(j, "apiVersion", Path("apiVersion"), api_version);
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
    std::optional<V> spec = member(j, "spec");
    if (!spec || !spec->is_object()) return;
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

/// The decoder of each kind of the table (kinds.hpp), over view V.
template <class V>
auto decode_kind(kinds::Node, V j, std::string_view) { return decode_node(j); }
template <class V>
auto decode_kind(kinds::Pod, V j, std::string_view) { return decode_pod(j); }
template <class V>
auto decode_kind(kinds::Queue, V j, std::string_view) { return decode_queue(j); }
template <class V>
auto decode_kind(kinds::PodGroup, V j, std::string_view) { return decode_pod_group(j); }
template <class V>
auto decode_kind(kinds::PriorityClass, V j, std::string_view) { return decode_priority_class(j); }
template <class V>
auto decode_kind(kinds::BindRequest, V j, std::string_view) { return decode_bind_request(j); }
template <class V>
auto decode_kind(kinds::WorkloadOwner, V j, std::string_view kind) { return decode_workload_owner(j, kind); }
template <class V>
auto decode_kind(kinds::Topology, V j, std::string_view) { return decode_topology(j); }
template <class V>
auto decode_kind(kinds::Namespace, V j, std::string_view) { return decode_namespace(j); }

/// Adds one decoded object of any known kind to `out` (unknown kinds go to out.skipped);
/// `kind_if_absent`, when not empty, is the kind of an object without a `kind` member.
template <class V>
Status decode_object_into(V j, std::string_view kind_if_absent, ClusterObjects& out) {
  if (!j.is_object()) return not_an_object(j);
  std::string_view kind_text;
  if (std::optional<V> k = j.find("kind")) {
    if (k->is_string()) kind_text = k->string();
  } else {
    kind_text = kind_if_absent;
  }
  if (kind_text.empty()) return Status::error("missing kind");
  const std::string kind(kind_text);
  std::optional<V> md = member(j, "metadata");
  std::optional<V> name_v = md ? member(*md, "name") : std::nullopt;
  if (!name_v || !name_v->is_string() || name_v->string().empty()) {
    return Status::error("missing metadata.name (" + kind + ")");
  }
  std::string api_version;
  if (std::optional<V> av = member(j, "apiVersion"); av && av->is_string()) api_version = av->string();

  // The kinds table gives each kind's API group. A missing apiVersion is accepted for hand-written
  // inputs; a different group (Volcano's Queue and PodGroup, say) is another kind with the same name.
  Status decoded = Status::ok();
  bool ours = false;
  // An object of a kind outside the table, in a named API group and a namespace, may own pods: it is
  // kept as a workload owner (docs/pod-grouping.md "Owners").
  std::optional<V> ns_v = member(*md, "namespace");
  const bool namespaced = ns_v && ns_v->is_string() && !ns_v->string().empty();
  const std::string group = group_of(api_version);
  const bool table_kind = is_known_kind(kind) && !is_owner_kind(kind);
  const std::string effective_kind =
      !table_kind && !is_owner_kind(kind) && !group.empty() && namespaced ? kind + "." + group : kind;
  const bool named = with_kind(effective_kind, [&](auto k) {
    using K = decltype(k);
    ours = api_version.empty() || K::kApiGroup == "*" || group == K::kApiGroup;
    if constexpr (std::is_same_v<K, kinds::WorkloadOwner>) ours = ours && namespaced;
    if (!ours) return;
    auto result = decode_kind(k, j, kind);
    if (!result) {
      decoded = result.status();
      return;
    }
    if constexpr (std::is_same_v<K, kinds::WorkloadOwner>) out.served_owner_kinds.insert(result->group_kind());
    K::in(out).push_back(std::move(result).value());
  });
  if (!ours) {
    std::string ns;
    if (ns_v && ns_v->is_string()) ns = ns_v->string();
    std::string what = kind + " " + (ns.empty() ? "" : ns + "/") + std::string(name_v->string());
    if (named) what += " (" + api_version + ")";
    out.skipped.push_back(std::move(what));
  }
  return decoded;
}

}  // namespace kai::model::json_detail
