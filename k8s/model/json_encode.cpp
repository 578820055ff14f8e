// The per-kind JSON encoders of json_codec.hpp: each writes back the fields its decoder reads, with
// the object's apiVersion and kind.
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "k8s/model/json_codec.hpp"
#include "k8s/model/pod_constraint_paths.hpp"
#include "k8s/model/quantity.hpp"
#include "k8s/model/time.hpp"

namespace kai::model {

using namespace json_detail;

namespace {

using nlohmann::json;

// ------------------------------------------------------------------------------- encoding helpers

/// Writes `items` as the array `obj[key]`, each element from `encode_one`; writes nothing when empty.
template <class T, class F>
void put_array(json& obj, const char* key, const std::vector<T>& items, F&& encode_one) {
  if (items.empty()) return;
  json arr = json::array();
  for (const T& item : items) arr.push_back(encode_one(item));
  obj[key] = std::move(arr);
}

json encode_meta(const ObjectMeta& m) {
  json md = json::object();
  md["name"] = m.name;
  if (!m.namespace_.empty()) md["namespace"] = m.namespace_;
  if (!m.uid.empty()) md["uid"] = m.uid;
  if (!m.resource_version.empty()) md["resourceVersion"] = m.resource_version;
  if (m.generation != 0) md["generation"] = m.generation;
  if (m.creation_timestamp != 0) md["creationTimestamp"] = format_rfc3339(m.creation_timestamp);
  if (m.deletion_timestamp) md["deletionTimestamp"] = format_rfc3339(*m.deletion_timestamp);
  if (!m.labels.empty()) md["labels"] = m.labels;
  if (!m.annotations.empty()) md["annotations"] = m.annotations;
  put_array(md, "ownerReferences", m.owner_references, [](const OwnerReference& r) {
    json o = {{"apiVersion", r.api_version}, {"kind", r.kind}, {"name", r.name}, {"uid", r.uid}};
    if (r.controller) o["controller"] = true;
    return o;
  });
  return md;
}

json header(std::string_view api_version, std::string_view kind, const ObjectMeta& m) {
  return json{{"apiVersion", api_version}, {"kind", kind}, {"metadata", encode_meta(m)}};
}

json encode_resources(const ResourceList& r) {
  json out = json::object();
  for (const auto& [name, milli] : r) out[name] = format_quantity_milli(milli);
  return out;
}

void put_if(json& obj, const char* key, const std::string& value) {
  if (!value.empty()) obj[key] = value;
}

json encode_requirements(const std::vector<NodeSelectorRequirement>& reqs) {
  json out = json::array();
  for (const NodeSelectorRequirement& r : reqs) {
    json o = {{"key", r.key}, {"operator", r.op}};
    if (!r.values.empty()) o["values"] = r.values;
    out.push_back(std::move(o));
  }
  return out;
}

json encode_topology_constraint(const TopologyConstraint& t) {
  json o = json::object();
  put_if(o, "topology", t.topology);
  put_if(o, "requiredTopologyLevel", t.required_level);
  put_if(o, "preferredTopologyLevel", t.preferred_level);
  return o;
}

json encode_containers(const std::vector<Container>& containers, bool init) {
  json out = json::array();
  for (size_t ci = 0; ci < containers.size(); ++ci) {
    const Container& c = containers[ci];
    json o = {{"name", c.name}};
    json resources = json::object();
    // Requests equal to a limit were possibly defaulted from it; writing them is harmless because
    // decoding keeps an explicit request.
    if (!c.requests.empty()) resources["requests"] = encode_resources(c.requests);
    if (!c.limits.empty()) resources["limits"] = encode_resources(c.limits);
    if (!resources.empty()) o["resources"] = std::move(resources);
    put_array(o, "ports", c.host_ports, [](const HostPort& hp) {
      json port = {{"containerPort", hp.port}, {"hostPort", hp.port}, {"protocol", hp.protocol}};
      put_if(port, "hostIP", hp.host_ip);
      return port;
    });
    if (init && c.restart_policy_always) o["restartPolicy"] = "Always";
    out.push_back(std::move(o));
  }
  return out;
}

bool lists(const Pod& pod, std::string_view path) {
  for (const std::string& p : pod.unsupported_constraints) {
    if (p == path) return true;
  }
  return false;
}

json encode_label_selector(const LabelSelector& sel) {
  json o = json::object();
  if (!sel.match_labels.empty()) o["matchLabels"] = sel.match_labels;
  put_array(o, "matchExpressions", sel.match_expressions, [](const LabelSelectorRequirement& r) {
    json e = {{"key", r.key}, {"operator", r.op}};
    if (!r.values.empty()) e["values"] = r.values;
    return e;
  });
  return o;
}

json encode_pod_affinity_term(const PodAffinityTerm& t) {
  json o = {{"topologyKey", t.topology_key}};
  if (t.label_selector) o["labelSelector"] = encode_label_selector(*t.label_selector);
  if (!t.namespaces.empty()) o["namespaces"] = t.namespaces;
  if (t.namespace_selector) o["namespaceSelector"] = encode_label_selector(*t.namespace_selector);
  if (!t.match_label_keys.empty()) o["matchLabelKeys"] = t.match_label_keys;
  if (!t.mismatch_label_keys.empty()) o["mismatchLabelKeys"] = t.mismatch_label_keys;
  return o;
}

}  // namespace

// ------------------------------------------------------------------------------------ encoders

json encode(const Node& x) {
  json j = header("v1", "Node", x.meta);
  json spec = json::object();
  if (x.unschedulable) spec["unschedulable"] = true;
  put_array(spec, "taints", x.taints, [](const Taint& t) {
    json o = {{"key", t.key}, {"effect", t.effect}};
    put_if(o, "value", t.value);
    return o;
  });
  j["spec"] = std::move(spec);
  json status = json::object();
  if (!x.capacity.empty()) status["capacity"] = encode_resources(x.capacity);
  if (!x.allocatable.empty()) status["allocatable"] = encode_resources(x.allocatable);
  put_array(status, "conditions", x.conditions,
            [](const NodeCondition& c) { return json{{"type", c.type}, {"status", c.status}}; });
  j["status"] = std::move(status);
  return j;
}

json encode(const Pod& x) {
  json j = header("v1", "Pod", x.meta);
  json spec = json::object();
  put_if(spec, "schedulerName", x.scheduler_name);
  put_if(spec, "nodeName", x.node_name);
  put_if(spec, "priorityClassName", x.priority_class_name);
  if (x.priority) spec["priority"] = *x.priority;
  if (!x.node_selector.empty()) spec["nodeSelector"] = x.node_selector;
  json affinity = json::object();
  if (x.required_node_affinity) {
    json terms = json::array();
    for (const NodeSelectorTerm& t : *x.required_node_affinity) {
      json term = json::object();
      if (!t.match_expressions.empty()) term["matchExpressions"] = encode_requirements(t.match_expressions);
      if (!t.match_fields.empty()) term["matchFields"] = encode_requirements(t.match_fields);
      terms.push_back(std::move(term));
    }
    affinity["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"] =
        std::move(terms);
  }
  const std::pair<const char*, const PodAffinityRules*> pod_affinities[] = {
      {"podAffinity", &x.pod_affinity}, {"podAntiAffinity", &x.pod_anti_affinity}};
  for (const auto& [kind, rules] : pod_affinities) {
    if (rules->empty()) continue;
    json o = json::object();
    put_array(o, "requiredDuringSchedulingIgnoredDuringExecution", rules->required, encode_pod_affinity_term);
    put_array(o, "preferredDuringSchedulingIgnoredDuringExecution", rules->preferred,
              [](const WeightedPodAffinityTerm& w) {
                return json{{"weight", w.weight}, {"podAffinityTerm", encode_pod_affinity_term(w.term)}};
              });
    affinity[kind] = std::move(o);
  }
  if (!affinity.empty()) spec["affinity"] = std::move(affinity);
  put_array(spec, "topologySpreadConstraints", x.topology_spread_constraints, [](const TopologySpreadConstraint& c) {
    json o = {{"maxSkew", c.max_skew},
              {"topologyKey", c.topology_key},
              {"whenUnsatisfiable", c.when_unsatisfiable},
              {"nodeAffinityPolicy", c.node_affinity_policy},
              {"nodeTaintsPolicy", c.node_taints_policy}};
    if (c.label_selector) o["labelSelector"] = encode_label_selector(*c.label_selector);
    if (c.min_domains) o["minDomains"] = *c.min_domains;
    if (!c.match_label_keys.empty()) o["matchLabelKeys"] = c.match_label_keys;
    return o;
  });
  put_array(spec, "tolerations", x.tolerations, [](const Toleration& t) {
    json o = {{"operator", t.op}};
    put_if(o, "key", t.key);
    put_if(o, "value", t.value);
    put_if(o, "effect", t.effect);
    return o;
  });
  spec["containers"] = encode_containers(x.containers, false);
  if (!x.init_containers.empty()) spec["initContainers"] = encode_containers(x.init_containers, true);
  if (!x.overhead.empty()) spec["overhead"] = encode_resources(x.overhead);
  if (x.scheduling_gates > 0) {
    json gates = json::array();
    for (int i = 0; i < x.scheduling_gates; ++i) gates.push_back({{"name", "gate-" + std::to_string(i)}});
    spec["schedulingGates"] = std::move(gates);
  }
  if (lists(x, kResourceClaimsPath)) spec["resourceClaims"] = json::array({{{"name", "claim-0"}}});
  j["spec"] = std::move(spec);
  json status = json::object();
  put_if(status, "phase", x.phase);
  put_if(status, "nominatedNodeName", x.nominated_node_name);
  put_array(status, "conditions", x.conditions, [](const PodCondition& c) {
    json o = {{"type", c.type}, {"status", c.status}};
    put_if(o, "reason", c.reason);
    put_if(o, "message", c.message);
    if (c.last_transition_time) o["lastTransitionTime"] = format_rfc3339(*c.last_transition_time);
    return o;
  });
  j["status"] = std::move(status);
  return j;
}

json encode(const Queue& x) {
  json j = header("scheduling.run.ai/v2", "Queue", x.meta);
  json spec = json::object();
  put_if(spec, "displayName", x.display_name);
  put_if(spec, "parentQueue", x.parent_queue);
  spec["priority"] = x.priority;
  if (x.has_resources) {
    auto res = [](const QueueResource& r) {
      return json{{"quota", r.quota}, {"overQuotaWeight", r.over_quota_weight}, {"limit", r.limit}};
    };
    spec["resources"] = {{"gpu", res(x.gpu)}, {"cpu", res(x.cpu)}, {"memory", res(x.memory)}};
  }
  auto duration = [](double seconds) { return format_go_duration(std::llround(seconds * 1e9)); };
  if (x.preempt_min_runtime_seconds) spec["preemptMinRuntime"] = duration(*x.preempt_min_runtime_seconds);
  if (x.reclaim_min_runtime_seconds) spec["reclaimMinRuntime"] = duration(*x.reclaim_min_runtime_seconds);
  j["spec"] = std::move(spec);
  json status = encode(x.resources_status);
  if (!x.child_queues.empty()) status["childQueues"] = x.child_queues;
  if (!status.empty()) j["status"] = std::move(status);
  return j;
}

json encode(const PodGroup& x) {
  json j = header("scheduling.run.ai/v2alpha2", "PodGroup", x.meta);
  json spec = json::object();
  // As KAI's pod grouper writes it: minSubGroup instead of minMember when the group has one.
  if (x.min_sub_group) {
    spec["minSubGroup"] = *x.min_sub_group;
    if (x.min_member != 1) spec["minMember"] = x.min_member;
  } else {
    spec["minMember"] = x.min_member;
  }
  auto duration = [](double seconds) { return format_go_duration(std::llround(seconds * 1e9)); };
  if (x.preemption_delay_seconds) spec["preemptionDelay"] = duration(*x.preemption_delay_seconds);
  if (x.staleness_grace_period_seconds)
    spec["stalenessGracePeriod"] = duration(*x.staleness_grace_period_seconds);
  put_if(spec, "queue", x.queue);
  put_if(spec, "priorityClassName", x.priority_class_name);
  put_if(spec, "preemptibility", x.preemptibility);
  if (x.mark_unschedulable) spec["markUnschedulable"] = *x.mark_unschedulable;
  if (x.scheduling_backoff) spec["schedulingBackoff"] = *x.scheduling_backoff;
  if (!x.topology_constraint.empty())
    spec["topologyConstraint"] = encode_topology_constraint(x.topology_constraint);
  put_array(spec, "subGroups", x.sub_groups, [](const SubGroup& s) {
    json o = {{"name", s.name}};
    if (s.min_sub_group) {
      o["minSubGroup"] = *s.min_sub_group;
      if (s.min_member != 0) o["minMember"] = s.min_member;
    } else {
      o["minMember"] = s.min_member;
    }
    if (s.parent) o["parent"] = *s.parent;
    if (!s.topology_constraint.empty())
      o["topologyConstraint"] = encode_topology_constraint(s.topology_constraint);
    return o;
  });
  j["spec"] = std::move(spec);
  json status = json::object();
  if (json r = encode(x.resources_status); !r.empty()) status["resourcesStatus"] = std::move(r);
  put_array(status, "schedulingConditions", x.scheduling_conditions,
            [](const SchedulingCondition& c) { return encode(c); });
  if (!status.empty()) j["status"] = std::move(status);
  return j;
}

json encode(const ResourcesStatus& x) {
  json out = json::object();
  if (!x.allocated.empty()) out["allocated"] = encode_resources(x.allocated);
  if (!x.allocated_non_preemptible.empty())
    out["allocatedNonPreemptible"] = encode_resources(x.allocated_non_preemptible);
  if (!x.requested.empty()) out["requested"] = encode_resources(x.requested);
  return out;
}

json encode(const SchedulingCondition& x) {
  json o = json::object();
  put_if(o, "type", x.type);
  put_if(o, "nodePool", x.node_pool);
  put_if(o, "reason", x.reason);
  put_if(o, "message", x.message);
  put_array(o, "reasons", x.reasons, [](const SchedulingReason& r) {
    json e = json::object();
    put_if(e, "reason", r.reason);
    put_if(e, "message", r.message);
    return e;
  });
  if (x.last_transition_time) o["lastTransitionTime"] = format_rfc3339(*x.last_transition_time);
  put_if(o, "status", x.status);
  put_if(o, "transitionID", x.transition_id);
  return o;
}

json encode(const PriorityClass& x) {
  json j = header("scheduling.k8s.io/v1", "PriorityClass", x.meta);
  j["value"] = x.value;
  if (x.global_default) j["globalDefault"] = true;
  put_if(j, "preemptionPolicy", x.preemption_policy);
  return j;
}

json encode(const Topology& x) {
  json j = header("kai.scheduler/v1alpha1", "Topology", x.meta);
  json levels = json::array();
  for (const auto& l : x.levels) {
    json level = {{"nodeLabel", l.node_label}};
    put_if(level, "alias", l.alias);
    levels.push_back(std::move(level));
  }
  j["spec"] = {{"levels", std::move(levels)}};
  return j;
}

json encode(const Namespace& x) {
  return header("v1", "Namespace", x.meta);
}

json encode(const BindRequest& x) {
  json j = header("scheduling.run.ai/v1alpha2", "BindRequest", x.meta);
  json spec = json::object();
  put_if(spec, "podName", x.pod_name);
  put_if(spec, "selectedNode", x.selected_node);
  put_if(spec, "receivedResourceType", x.received_resource_type);
  if (x.received_gpu_count != 0 || !x.received_gpu_portion.empty()) {
    json gpu = {{"count", x.received_gpu_count}};
    put_if(gpu, "portion", x.received_gpu_portion);
    spec["receivedGPU"] = std::move(gpu);
  }
  if (!x.selected_gpu_groups.empty()) spec["selectedGPUGroups"] = x.selected_gpu_groups;
  if (x.backoff_limit) spec["backoffLimit"] = *x.backoff_limit;
  j["spec"] = std::move(spec);
  json status = json::object();
  put_if(status, "phase", x.phase);
  put_if(status, "reason", x.reason);
  if (x.failed_attempts != 0) status["failedAttempts"] = x.failed_attempts;
  j["status"] = std::move(status);
  return j;
}

namespace {

json encode_template_annotations(const StringMap& annotations) {
  return json{{"metadata", {{"annotations", annotations}}}};
}

json encode_replicas(const WorkloadReplicas& r, const char* name_key) {
  json o = json::object();
  put_if(o, name_key, r.name);
  if (r.replicas) o["replicas"] = *r.replicas;
  if (r.min_replicas) o["minReplicas"] = *r.min_replicas;
  if (r.num_of_hosts) o["numOfHosts"] = *r.num_of_hosts;
  if (r.suspended) o["suspend"] = true;
  if (!r.template_annotations.empty() || r.parallelism) {
    o["template"] = encode_template_annotations(r.template_annotations);
    if (r.parallelism) o["template"]["spec"]["parallelism"] = *r.parallelism;
  }
  return o;
}

}  // namespace

json encode(const WorkloadOwner& x) {
  // Without a known version the kind is written as "Kind.group", which the decoder reads back.
  json j = x.version.empty() ? json{{"kind", x.group_kind()}, {"metadata", encode_meta(x.meta)}}
                             : header(x.group + "/" + x.version, x.kind, x.meta);
  json spec = json::object();
  if (x.group == "jobset.x-k8s.io") {
    for (const auto& r : x.replicas) spec["replicatedJobs"].push_back(encode_replicas(r, "name"));
    if (!x.startup_policy.empty()) spec["startupPolicy"]["startupPolicyOrder"] = x.startup_policy;
  } else if (x.group == "kubeflow.org") {
    const std::string map_key = x.kind == "PyTorchJob"   ? "pytorchReplicaSpecs"
                                : x.kind == "TFJob"      ? "tfReplicaSpecs"
                                : x.kind == "XGBoostJob" ? "xgbReplicaSpecs"
                                : x.kind == "JAXJob"     ? "jaxReplicaSpecs"
                                : x.kind == "PaddleJob"  ? "paddleReplicaSpecs"
                                                         : "mpiReplicaSpecs";
    for (const auto& r : x.replicas) spec[map_key][r.name] = encode_replicas(r, "");
    if (x.min_available) spec["runPolicy"]["schedulingPolicy"]["minAvailable"] = *x.min_available;
    if (x.elastic_min_replicas) spec["elasticPolicy"]["minReplicas"] = *x.elastic_min_replicas;
    put_if(spec, "launcherCreationPolicy", x.launcher_creation_policy);
  } else if (x.group == "ray.io") {
    if (x.head) spec["headGroupSpec"] = encode_replicas(*x.head, "");
    for (const auto& r : x.replicas) spec["workerGroupSpecs"].push_back(encode_replicas(r, "groupName"));
    if (!x.ray_cluster_name.empty()) {
      if (x.kind == "RayService") {
        j["status"]["activeServiceStatus"]["rayClusterName"] = x.ray_cluster_name;
      } else {
        j["status"]["rayClusterName"] = x.ray_cluster_name;
      }
    }
  } else if (x.group == "leaderworkerset.x-k8s.io") {
    put_if(spec, "startupPolicy", x.startup_policy);
    json t = json::object();
    if (x.size) t["size"] = *x.size;
    if (x.sub_group_size) t["subGroupPolicy"]["subGroupSize"] = *x.sub_group_size;
    if (!x.sub_group_policy_type.empty()) t["subGroupPolicy"]["subGroupPolicyType"] = x.sub_group_policy_type;
    for (const auto& r : x.replicas) t["workerTemplate"] = encode_template_annotations(r.template_annotations);
    if (!t.empty()) spec["leaderWorkerTemplate"] = std::move(t);
  }
  if (!spec.empty()) j["spec"] = std::move(spec);
  return j;
}

}  // namespace kai::model
