// The per-kind JSON decoders of json_codec.hpp, and decode_object_into, which picks one by kind and
// apiVersion group. The field readers are in json_decoder.hpp.
#include <exception>
#include <optional>
#include <string>
#include <string_view>
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
                [&](const json& c, const std::string& p, size_t ci) {
                  Container container;
                  d.str(c, "name", join(p, "name"), container.name);
                  if (const json* res = d.object(c, "resources", join(p, "resources"))) {
                    const std::string rp = join(p, "resources");
                    d.resources(*res, "requests", join(rp, "requests"), container.requests);
                    d.resources(*res, "limits", join(rp, "limits"), container.limits);
                  }
                  // The API server defaults a missing request to its limit.
                  for (const auto& [name, limit] : container.limits) container.requests.emplace(name, limit);
                  d.each_object(c, "ports", join(p, "ports"),
                                [&](const json& port, const std::string& pp, size_t pi) {
                                  int64_t host_port = 0;
                                  d.integer(port, "hostPort", join(pp, "hostPort"), host_port);
                                  if (host_port > 0) {
                                    container.has_host_port = true;
                                    pod.unsupported_constraints.push_back(host_port_path(init, ci, pi));
                                  }
                                });
                  if (init) {
                    std::string policy;
                    d.str(c, "restartPolicy", join(p, "restartPolicy"), policy);
                    if (policy == "Always") {
                      container.restart_policy_always = true;
                      pod.unsupported_constraints.push_back(sidecar_path(ci));
                    }
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
  // Required pod (anti-)affinity is not implemented: record it so that the pod is refused.
  const std::pair<std::string_view, std::string_view> pod_affinities[] = {
      {"podAffinity", kPodAffinityPath}, {"podAntiAffinity", kPodAntiAffinityPath}};
  for (const auto& [kind, path] : pod_affinities) {
    const json* pa = d.object(*affinity, kind, "spec.affinity." + std::string(kind));
    if (pa == nullptr) continue;
    const json* req = d.array(*pa, "requiredDuringSchedulingIgnoredDuringExecution", std::string(path));
    if (req != nullptr && !req->empty()) pod.unsupported_constraints.emplace_back(path);
  }
}

void decode_topology_spread(Decoder& d, const json& spec, Pod& pod) {
  bool hard = false;
  d.each_object(spec, "topologySpreadConstraints", std::string(kTopologySpreadPath),
                [&](const json& c, const std::string& p, size_t) {
                  std::string when = "DoNotSchedule";  // the API default
                  d.str(c, "whenUnsatisfiable", join(p, "whenUnsatisfiable"), when);
                  if (when == "DoNotSchedule") hard = true;
                });
  if (hard) pod.unsupported_constraints.emplace_back(kTopologySpreadPath);
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
      // The order of these calls fixes the order of unsupported_constraints, which encode relies on.
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
  });
}

Result<PodGroup> decode_pod_group(const json& j) {
  return guarded<PodGroup>(j, [&](Decoder& d, PodGroup& pg) {
    const json* spec = d.object(j, "spec", "spec");
    if (spec == nullptr) return;
    d.integer(*spec, "minMember", "spec.minMember", pg.min_member);
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
                  d.optional_str(s, "parent", join(p, "parent"), sg.parent);
                  sg.topology_constraint = decode_topology_constraint(d, s, join(p, "topologyConstraint"));
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
  const bool named = with_kind(kind, [&](auto k) {
    using K = decltype(k);
    ours = api_version.empty() || group_of(api_version) == K::kApiGroup;
    if (!ours) return;
    auto result = K::decode(j);
    if (!result) {
      decoded = result.status();
      return;
    }
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
