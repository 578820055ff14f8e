// Per-kind decoding, field errors on bad input, defaults, and decode(encode(x)) == x.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <type_traits>
#include <vector>

#include "k8s/model/json_codec.hpp"

namespace kai::model {
namespace {

using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

/// The field paths of `errors`, to compare against a list.
std::vector<std::string> fields(const std::vector<FieldError>& errors) {
  std::vector<std::string> out;
  for (const FieldError& e : errors) out.push_back(e.field);
  return out;
}

// ----------------------------------------------------------------------------------- metadata

TEST(MetaDecodeTest, ReadsAllFields) {
  auto n = decode_node(json::parse(R"({
    "apiVersion":"v1","kind":"Node",
    "metadata":{"name":"n1","namespace":"","uid":"u-1","resourceVersion":"42","generation":3,
      "creationTimestamp":"2024-01-02T03:04:05Z","deletionTimestamp":"2024-01-02T05:04:05.123456+02:00",
      "labels":{"a":"b"},"annotations":{"x":"y"},
      "ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"rs","uid":"u-2","controller":true}]}})"));
  ASSERT_TRUE(n.is_ok()) << n.message();
  const ObjectMeta& m = n->meta;
  EXPECT_EQ(m.name, "n1");
  EXPECT_EQ(m.uid, "u-1");
  EXPECT_EQ(m.resource_version, "42");
  EXPECT_EQ(m.generation, 3);
  EXPECT_EQ(m.creation_timestamp, 1704164645);
  ASSERT_TRUE(m.deletion_timestamp.has_value());
  EXPECT_EQ(*m.deletion_timestamp, 1704164645);  // 05:04:05+02:00 == 03:04:05Z
  EXPECT_EQ(m.labels, (StringMap{{"a", "b"}}));
  EXPECT_EQ(m.annotations, (StringMap{{"x", "y"}}));
  ASSERT_EQ(m.owner_references.size(), 1u);
  EXPECT_EQ(m.owner_references[0].kind, "ReplicaSet");
  EXPECT_EQ(m.owner_references[0].uid, "u-2");
  EXPECT_TRUE(m.owner_references[0].controller);
  EXPECT_THAT(n->errors, IsEmpty());
}

TEST(MetaDecodeTest, TimestampForms) {
  struct Case {
    const char* text;
    int64_t unix_seconds;
  } cases[] = {
      {"1970-01-01T00:00:00Z", 0},          {"1970-01-01T00:00:01.999Z", 1},
      {"2024-02-29T23:59:59Z", 1709251199}, {"2024-01-01T00:00:00-01:30", 1704072600},
      {"1969-12-31T23:59:59Z", -1},         {"2000-01-01t00:00:00z", 946684800},
  };
  for (const Case& c : cases) {
    auto p = decode_pod(json{{"metadata", {{"name", "p"}, {"creationTimestamp", c.text}}}});
    ASSERT_TRUE(p.is_ok());
    EXPECT_THAT(p->errors, IsEmpty()) << c.text;
    EXPECT_EQ(p->meta.creation_timestamp, c.unix_seconds) << c.text;
  }
  for (const char* bad :
       {"2024-13-01T00:00:00Z", "2023-02-29T00:00:00Z", "2024-01-01 00:00", "yesterday",
        "2024-01-01T00:00:00", "2024-01-01T24:00:00Z", "2024-01-01T00:00:00+2:00", "2024-01-01T00:00:00.Z"}) {
    auto p = decode_pod(json{{"metadata", {{"name", "p"}, {"creationTimestamp", bad}}}});
    ASSERT_TRUE(p.is_ok());
    EXPECT_THAT(fields(p->errors), ElementsAre("metadata.creationTimestamp")) << bad;
    EXPECT_EQ(p->meta.creation_timestamp, 0);
  }
}

TEST(MetaDecodeTest, NonStringLabelAndAnnotationValuesAreFieldErrors) {
  auto p = decode_pod(json::parse(R"({"metadata":{"name":"p",
      "labels":{"ok":"1","num":1},"annotations":{"gpu-fraction":0.5,"pod-group-name":"pg"}}})"));
  ASSERT_TRUE(p.is_ok());
  EXPECT_THAT(fields(p->errors), ElementsAre("metadata.labels.num", "metadata.annotations.gpu-fraction"));
  EXPECT_EQ(p->meta.labels, (StringMap{{"ok", "1"}}));
  EXPECT_EQ(p->meta.annotations, (StringMap{{"pod-group-name", "pg"}}));
}

TEST(MetaDecodeTest, WrongTypesNeverThrow) {
  const char* inputs[] = {
      R"({"metadata":"x"})",
      R"({"metadata":{"name":5,"labels":[],"annotations":"a","ownerReferences":{}}})",
      R"({"metadata":{"name":"p","ownerReferences":[1,"a",null]}})",
      R"({"metadata":{"name":"p","generation":"3"}})",
      R"({"metadata":{"name":"p","generation":1.5}})",
      R"({"spec":[],"status":"Running"})",
      R"({"spec":{"containers":{"a":1},"initContainers":"x","tolerations":[5],"affinity":[]}})",
      R"({"spec":{"containers":[{"resources":"x"}, {"resources":{"requests":[]}}, {"ports":"p"}]}})",
      R"({"spec":{"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":[{"key":1,"values":"x"}]}]}}}}})",
      R"({"spec":{"taints":"t","unschedulable":"yes"},"status":{"capacity":[1],"conditions":{}}})",
  };
  for (const char* in : inputs) {
    const json j = json::parse(in);
    EXPECT_TRUE(decode_pod(j).is_ok()) << in;
    EXPECT_TRUE(decode_node(j).is_ok()) << in;
    EXPECT_TRUE(decode_queue(j).is_ok()) << in;
    EXPECT_TRUE(decode_pod_group(j).is_ok()) << in;
    EXPECT_TRUE(decode_priority_class(j).is_ok()) << in;
    EXPECT_TRUE(decode_bind_request(j).is_ok()) << in;
    EXPECT_FALSE(decode_pod(j)->errors.empty()) << in;
  }
  for (const json& j : {json(nullptr), json("pod"), json::array(), json(3)}) {
    EXPECT_FALSE(decode_pod(j).is_ok());
    EXPECT_FALSE(decode_node(j).is_ok());
    EXPECT_FALSE(decode_queue(j).is_ok());
    EXPECT_FALSE(decode_pod_group(j).is_ok());
    EXPECT_FALSE(decode_priority_class(j).is_ok());
    EXPECT_FALSE(decode_bind_request(j).is_ok());
  }
}

// --------------------------------------------------------------------------------------- Node

TEST(NodeDecodeTest, ReadsSpecAndStatus) {
  auto n = decode_node(json::parse(R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"node-1"},
    "spec":{"unschedulable":true,"taints":[{"key":"k","value":"v","effect":"NoSchedule"},{"key":"g","effect":"NoExecute"}]},
    "status":{"capacity":{"cpu":"8","memory":"32Gi","nvidia.com/gpu":"8","pods":"110"},
              "allocatable":{"cpu":"7500m","memory":"30Gi","nvidia.com/gpu":8},
              "conditions":[{"type":"Ready","status":"True","reason":"KubeletReady"},{"type":"DiskPressure","status":"False"}]}})"));
  ASSERT_TRUE(n.is_ok());
  EXPECT_THAT(n->errors, IsEmpty());
  EXPECT_TRUE(n->unschedulable);
  ASSERT_EQ(n->taints.size(), 2u);
  EXPECT_EQ(n->taints[0].key, "k");
  EXPECT_EQ(n->taints[0].value, "v");
  EXPECT_EQ(n->taints[0].effect, "NoSchedule");
  EXPECT_EQ(n->taints[1].value, "");
  EXPECT_EQ(n->capacity.at("memory"), 32LL * 1024 * 1024 * 1024 * 1000);
  EXPECT_EQ(n->capacity.at("pods"), 110000);
  EXPECT_EQ(n->allocatable.at("cpu"), 7500);
  EXPECT_EQ(n->allocatable.at("nvidia.com/gpu"), 8000);
  ASSERT_EQ(n->conditions.size(), 2u);
  EXPECT_EQ(n->conditions[0].type, "Ready");
  EXPECT_EQ(n->conditions[0].status, "True");
}

TEST(NodeDecodeTest, BadQuantityIsAFieldErrorAndTheRestIsDecoded) {
  auto n = decode_node(json::parse(R"({"metadata":{"name":"n"},
    "status":{"allocatable":{"cpu":"lots","memory":"1Gi","pods":true}}})"));
  ASSERT_TRUE(n.is_ok());
  EXPECT_THAT(fields(n->errors), ElementsAre("status.allocatable.cpu", "status.allocatable.pods"));
  EXPECT_NE(n->errors[0].message.find("lots"), std::string::npos) << n->errors[0].message;
  EXPECT_EQ(n->allocatable, (ResourceList{{"memory", 1073741824000}}));
}

// ---------------------------------------------------------------------------------------- Pod

constexpr const char* kFullPod = R"({
  "apiVersion":"v1","kind":"Pod",
  "metadata":{"name":"train-0","namespace":"ns1","uid":"p-uid","labels":{"kai.scheduler/queue":"team-a"},
              "annotations":{"pod-group-name":"pg-1"}},
  "spec":{
    "schedulerName":"kai-scheduler","nodeName":"","priorityClassName":"train","priority":50,
    "nodeSelector":{"zone":"a"},
    "affinity":{
      "nodeAffinity":{
        "requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[
          {"matchExpressions":[{"key":"gpu","operator":"In","values":["a100","h100"]}],
           "matchFields":[{"key":"metadata.name","operator":"NotIn","values":["node-9"]}]},
          {"matchExpressions":[{"key":"spot","operator":"DoesNotExist"}]}]},
        "preferredDuringSchedulingIgnoredDuringExecution":[{"weight":1,"preference":{}}]},
      "podAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[{"weight":1}]},
      "podAntiAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[]}},
    "topologySpreadConstraints":[{"maxSkew":1,"topologyKey":"zone","whenUnsatisfiable":"ScheduleAnyway"}],
    "tolerations":[{"key":"nvidia.com/gpu","operator":"Exists","effect":"NoSchedule"},
                   {"key":"a","value":"b"}],
    "containers":[
      {"name":"main","resources":{"requests":{"cpu":"500m","memory":"1Gi"},
                                  "limits":{"cpu":"1","nvidia.com/gpu":"1"}},
       "ports":[{"containerPort":8080}]},
      {"name":"side"}],
    "initContainers":[{"name":"init","resources":{"limits":{"cpu":"100m"}},"restartPolicy":"OnFailure"}],
    "overhead":{"cpu":"10m"},
    "schedulingGates":[{"name":"a"},{"name":"b"}],
    "resourceClaims":[]},
  "status":{"phase":"Pending","nominatedNodeName":"node-2",
            "conditions":[{"type":"PodScheduled","status":"False","reason":"Unschedulable","message":"m"}]}})";

TEST(PodDecodeTest, ReadsEveryField) {
  auto p = decode_pod(json::parse(kFullPod));
  ASSERT_TRUE(p.is_ok());
  EXPECT_THAT(p->errors, IsEmpty());
  EXPECT_EQ(p->meta.namespace_, "ns1");
  EXPECT_EQ(p->scheduler_name, "kai-scheduler");
  EXPECT_EQ(p->priority_class_name, "train");
  EXPECT_EQ(p->priority, 50);
  EXPECT_EQ(p->node_selector, (StringMap{{"zone", "a"}}));
  ASSERT_TRUE(p->required_node_affinity.has_value());
  const auto& terms = *p->required_node_affinity;
  ASSERT_EQ(terms.size(), 2u);
  ASSERT_EQ(terms[0].match_expressions.size(), 1u);
  EXPECT_EQ(terms[0].match_expressions[0].key, "gpu");
  EXPECT_EQ(terms[0].match_expressions[0].op, "In");
  EXPECT_THAT(terms[0].match_expressions[0].values, ElementsAre("a100", "h100"));
  ASSERT_EQ(terms[0].match_fields.size(), 1u);
  EXPECT_EQ(terms[0].match_fields[0].key, "metadata.name");
  EXPECT_EQ(terms[1].match_expressions[0].op, "DoesNotExist");
  EXPECT_THAT(terms[1].match_expressions[0].values, IsEmpty());
  ASSERT_EQ(p->tolerations.size(), 2u);
  EXPECT_EQ(p->tolerations[0].op, "Exists");
  EXPECT_EQ(p->tolerations[1].op, "Equal");  // defaulted
  EXPECT_EQ(p->tolerations[1].value, "b");
  EXPECT_EQ(p->tolerations[1].effect, "");
  ASSERT_EQ(p->containers.size(), 2u);
  const Container& main = p->containers[0];
  EXPECT_EQ(main.name, "main");
  // cpu request kept, gpu request defaulted from its limit.
  EXPECT_EQ(main.requests, (ResourceList{{"cpu", 500}, {"memory", 1073741824000}, {"nvidia.com/gpu", 1000}}));
  EXPECT_EQ(main.limits, (ResourceList{{"cpu", 1000}, {"nvidia.com/gpu", 1000}}));
  EXPECT_THAT(main.host_ports, IsEmpty());
  EXPECT_THAT(p->containers[1].requests, IsEmpty());
  ASSERT_EQ(p->init_containers.size(), 1u);
  EXPECT_EQ(p->init_containers[0].requests, (ResourceList{{"cpu", 100}}));
  EXPECT_FALSE(p->init_containers[0].restart_policy_always);
  EXPECT_EQ(p->overhead, (ResourceList{{"cpu", 10}}));
  EXPECT_EQ(p->scheduling_gates, 2);
  // Preferred terms, soft spread constraints and empty lists are not constraints.
  EXPECT_THAT(p->unsupported_constraints, IsEmpty());
  EXPECT_EQ(p->phase, "Pending");
  EXPECT_EQ(p->nominated_node_name, "node-2");
  ASSERT_EQ(p->conditions.size(), 1u);
  EXPECT_EQ(p->conditions[0].reason, "Unschedulable");
  EXPECT_EQ(p->conditions[0].message, "m");
}

TEST(PodDecodeTest, DefaultsWhenFieldsAreMissing) {
  auto p = decode_pod(json::parse(R"({"metadata":{"name":"p"}})"));
  ASSERT_TRUE(p.is_ok());
  EXPECT_THAT(p->errors, IsEmpty());
  EXPECT_FALSE(p->priority.has_value());
  EXPECT_FALSE(p->required_node_affinity.has_value());
  EXPECT_THAT(p->containers, IsEmpty());
  EXPECT_EQ(p->scheduling_gates, 0);
  EXPECT_EQ(p->phase, "");
}

TEST(PodDecodeTest, NullIsTreatedAsAbsent) {
  auto p = decode_pod(json::parse(
      R"({"metadata":{"name":"p","labels":null},"spec":{"containers":null,"tolerations":null,"priority":null}})"));
  ASSERT_TRUE(p.is_ok());
  EXPECT_THAT(p->errors, IsEmpty());
}

TEST(PodDecodeTest, KeepsPodAffinitySpreadAndHostPortsAndListsResourceClaims) {
  auto p = decode_pod(json::parse(R"({"metadata":{"name":"p"},"spec":{
    "affinity":{"podAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[
                  {"topologyKey":"z","labelSelector":{"matchLabels":{"app":"a"}},"namespaces":["x"],
                   "matchLabelKeys":["rev"]}],
                  "preferredDuringSchedulingIgnoredDuringExecution":[
                  {"weight":7,"podAffinityTerm":{"topologyKey":"h","namespaceSelector":{}}}]},
                "podAntiAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[
                  {"topologyKey":"h","labelSelector":{"matchExpressions":[{"key":"app","operator":"In","values":["b"]}]}}]}},
    "topologySpreadConstraints":[{"whenUnsatisfiable":"ScheduleAnyway"},{"maxSkew":1,"topologyKey":"z","minDomains":3}],
    "containers":[{"name":"a","ports":[{"containerPort":80},{"containerPort":81,"hostPort":8081,"protocol":"UDP","hostIP":"10.0.0.1"}]},
                  {"name":"b","ports":[{"containerPort":80,"hostPort":0}]}],
    "initContainers":[{"name":"i","ports":[{"hostPort":9}]},{"name":"sidecar","restartPolicy":"Always"}],
    "resourceClaims":[{"name":"gpu"}]}})"));
  ASSERT_TRUE(p.is_ok());
  EXPECT_THAT(p->errors, IsEmpty());
  EXPECT_THAT(p->unsupported_constraints, ElementsAre("spec.resourceClaims"));
  ASSERT_EQ(p->pod_affinity.required.size(), 1u);
  const PodAffinityTerm& term = p->pod_affinity.required[0];
  EXPECT_EQ(term.topology_key, "z");
  ASSERT_TRUE(term.label_selector.has_value());
  EXPECT_EQ(term.label_selector->match_labels, (StringMap{{"app", "a"}}));
  EXPECT_THAT(term.namespaces, ElementsAre("x"));
  EXPECT_FALSE(term.namespace_selector.has_value());
  EXPECT_THAT(term.match_label_keys, ElementsAre("rev"));
  ASSERT_EQ(p->pod_affinity.preferred.size(), 1u);
  EXPECT_EQ(p->pod_affinity.preferred[0].weight, 7);
  EXPECT_FALSE(p->pod_affinity.preferred[0].term.label_selector.has_value());  // matches no pod
  EXPECT_TRUE(p->pod_affinity.preferred[0].term.namespace_selector.has_value());  // {}: every namespace
  ASSERT_EQ(p->pod_anti_affinity.required.size(), 1u);
  EXPECT_EQ(p->pod_anti_affinity.required[0].label_selector->match_expressions[0].op, "In");
  ASSERT_EQ(p->topology_spread_constraints.size(), 2u);
  EXPECT_EQ(p->topology_spread_constraints[0].when_unsatisfiable, "ScheduleAnyway");
  EXPECT_EQ(p->topology_spread_constraints[1].when_unsatisfiable, "DoNotSchedule");  // the API default
  EXPECT_EQ(p->topology_spread_constraints[1].min_domains, 3);
  EXPECT_EQ(p->topology_spread_constraints[1].node_affinity_policy, "Honor");
  EXPECT_EQ(p->topology_spread_constraints[1].node_taints_policy, "Ignore");
  ASSERT_EQ(p->containers[0].host_ports.size(), 1u);
  EXPECT_EQ(p->containers[0].host_ports[0], (HostPort{8081, "UDP", "10.0.0.1"}));
  EXPECT_THAT(p->containers[1].host_ports, IsEmpty());  // hostPort 0 claims nothing
  ASSERT_EQ(p->init_containers[0].host_ports.size(), 1u);
  EXPECT_EQ(p->init_containers[0].host_ports[0], (HostPort{9, "TCP", ""}));
  EXPECT_TRUE(p->init_containers[1].restart_policy_always);
}

TEST(PodDecodeTest, BadFieldsAreRecordedAndTheRestDecoded) {
  auto p = decode_pod(json::parse(R"({"metadata":{"name":"p","namespace":"ns"},"spec":{
    "schedulerName":7,
    "priority":3000000000,
    "containers":[{"name":"a","resources":{"requests":{"cpu":"abc","memory":"1Gi"},"limits":{"cpu":"2"}}},
                  "not-a-container",
                  {"name":"c","resources":{"requests":{"cpu":{"v":1}}}}],
    "tolerations":[{"key":"k","operator":5}]},
    "status":{"phase":"Running"}})"));
  ASSERT_TRUE(p.is_ok());
  EXPECT_THAT(fields(p->errors),
              ElementsAre("spec.schedulerName", "spec.priority", "spec.tolerations[0].operator",
                          "spec.containers[0].resources.requests.cpu", "spec.containers[1]",
                          "spec.containers[2].resources.requests.cpu"));
  EXPECT_EQ(p->meta.namespace_, "ns");
  EXPECT_EQ(p->phase, "Running");
  EXPECT_FALSE(p->priority.has_value());
  ASSERT_EQ(p->containers.size(), 2u);
  // The bad cpu request is dropped; the API server would have defaulted it from the limit anyway.
  EXPECT_EQ(p->containers[0].requests, (ResourceList{{"cpu", 2000}, {"memory", 1073741824000}}));
  EXPECT_EQ(p->containers[1].name, "c");
  ASSERT_EQ(p->tolerations.size(), 1u);
  EXPECT_EQ(p->tolerations[0].op, "Equal");
}

TEST(PodDecodeTest, NumericQuantitiesAreAccepted) {
  auto p = decode_pod(json::parse(
      R"({"metadata":{"name":"p"},"spec":{"containers":[{"resources":{"requests":{"cpu":0.5,"memory":1e3,"x":2}}}]}})"));
  ASSERT_TRUE(p.is_ok());
  EXPECT_THAT(p->errors, IsEmpty());
  EXPECT_EQ(p->containers[0].requests, (ResourceList{{"cpu", 500}, {"memory", 1000000}, {"x", 2000}}));
}

// -------------------------------------------------------------------------------------- Queue

TEST(QueueDecodeTest, ReadsSpec) {
  auto q = decode_queue(json::parse(R"({"apiVersion":"scheduling.run.ai/v2","kind":"Queue",
    "metadata":{"name":"team-a"},
    "spec":{"displayName":"Team A","parentQueue":"dept-1","priority":200,
      "resources":{"gpu":{"quota":2,"overQuotaWeight":1,"limit":-1},
                   "cpu":{"quota":1.5,"overQuotaWeight":0.5}},
      "preemptMinRuntime":"1m30s","reclaimMinRuntime":"500ms"},
    "status":{"allocated":{"cpu":"2"}}})"));
  ASSERT_TRUE(q.is_ok());
  EXPECT_THAT(q->errors, IsEmpty());
  EXPECT_EQ(q->display_name, "Team A");
  EXPECT_EQ(q->parent_queue, "dept-1");
  EXPECT_EQ(q->priority, 200);
  EXPECT_TRUE(q->has_resources);
  EXPECT_EQ(q->gpu.quota, 2);
  EXPECT_EQ(q->gpu.over_quota_weight, 1);
  EXPECT_EQ(q->gpu.limit, -1);
  EXPECT_EQ(q->cpu.quota, 1.5);
  EXPECT_EQ(q->cpu.limit, 0);  // missing means 0 (docs/kai-compatibility.md "Custom resources")
  EXPECT_EQ(q->memory.quota, 0);
  EXPECT_EQ(q->preempt_min_runtime_seconds, 90.0);
  EXPECT_EQ(q->reclaim_min_runtime_seconds, 0.5);
}

TEST(QueueDecodeTest, Defaults) {
  auto q = decode_queue(json::parse(R"({"metadata":{"name":"q"},"spec":{}})"));
  ASSERT_TRUE(q.is_ok());
  EXPECT_EQ(q->priority, 100);
  EXPECT_FALSE(q->has_resources);
  EXPECT_FALSE(q->preempt_min_runtime_seconds.has_value());
  auto no_spec = decode_queue(json::parse(R"({"metadata":{"name":"q"}})"));
  ASSERT_TRUE(no_spec.is_ok());
  EXPECT_EQ(no_spec->priority, 100);
}

TEST(QueueDecodeTest, Durations) {
  struct Case {
    const char* text;
    double seconds;
  } cases[] = {{"0", 0},       {"2h", 7200}, {"1m30s", 90},           {"500ms", 0.5},
               {"1.5h", 5400}, {"-1s", -1},  {"1h2m3s4ms", 3723.004}, {"10us", 1e-5},
               {"3ns", 3e-9},  {"+5s", 5},   {"1\xC2\xB5s", 1e-6},    {".5s", 0.5},
               {"1.s", 1}};
  for (const Case& c : cases) {
    auto q = decode_queue(json{{"metadata", {{"name", "q"}}}, {"spec", {{"preemptMinRuntime", c.text}}}});
    ASSERT_TRUE(q.is_ok());
    EXPECT_THAT(q->errors, IsEmpty()) << c.text;
    ASSERT_TRUE(q->preempt_min_runtime_seconds.has_value()) << c.text;
    EXPECT_DOUBLE_EQ(*q->preempt_min_runtime_seconds, c.seconds) << c.text;
  }
  for (const char* bad : {"", "1", "1d", "s", "1.5.5s", "abc", "1h 2m", "-", "99999999999h"}) {
    auto q = decode_queue(json{{"metadata", {{"name", "q"}}}, {"spec", {{"reclaimMinRuntime", bad}}}});
    ASSERT_TRUE(q.is_ok());
    EXPECT_THAT(fields(q->errors), ElementsAre("spec.reclaimMinRuntime")) << bad;
    EXPECT_FALSE(q->reclaim_min_runtime_seconds.has_value());
  }
}

TEST(QueueDecodeTest, BadFields) {
  auto q = decode_queue(json::parse(R"({"metadata":{"name":"q"},"spec":{"priority":"high",
    "resources":{"gpu":{"quota":"2","limit":4},"cpu":[],"memory":{"overQuotaWeight":true}},
    "preemptMinRuntime":60}})"));
  ASSERT_TRUE(q.is_ok());
  EXPECT_THAT(fields(q->errors),
              ElementsAre("spec.priority", "spec.resources.gpu.quota", "spec.resources.cpu",
                          "spec.resources.memory.overQuotaWeight", "spec.preemptMinRuntime"));
  EXPECT_EQ(q->priority, 100);
  EXPECT_TRUE(q->has_resources);
  EXPECT_EQ(q->gpu.limit, 4);
}

// ----------------------------------------------------------------------------------- PodGroup

TEST(PodGroupDecodeTest, ReadsSpec) {
  auto pg = decode_pod_group(json::parse(R"({"apiVersion":"scheduling.run.ai/v2alpha2","kind":"PodGroup",
    "metadata":{"name":"pg-1","namespace":"ns1"},
    "spec":{"minMember":2,"queue":"team-a","priorityClassName":"train","preemptibility":"non-preemptible",
      "markUnschedulable":false,"schedulingBackoff":1,
      "topologyConstraint":{"topology":"cluster-topology","requiredTopologyLevel":"rack","preferredTopologyLevel":"host"},
      "subGroups":[{"name":"leaders","minMember":1},
                   {"name":"workers","minMember":4,"parent":"leaders","topologyConstraint":{"requiredTopologyLevel":"block"}}]}})"));
  ASSERT_TRUE(pg.is_ok());
  EXPECT_THAT(pg->errors, IsEmpty());
  EXPECT_EQ(pg->min_member, 2);
  EXPECT_EQ(pg->queue, "team-a");
  EXPECT_EQ(pg->priority_class_name, "train");
  EXPECT_EQ(pg->preemptibility, "non-preemptible");
  EXPECT_EQ(pg->mark_unschedulable, false);
  EXPECT_EQ(pg->scheduling_backoff, 1);
  EXPECT_EQ(pg->topology_constraint.topology, "cluster-topology");
  EXPECT_EQ(pg->topology_constraint.required_level, "rack");
  EXPECT_EQ(pg->topology_constraint.preferred_level, "host");
  ASSERT_EQ(pg->sub_groups.size(), 2u);
  EXPECT_EQ(pg->sub_groups[0].name, "leaders");
  EXPECT_FALSE(pg->sub_groups[0].parent.has_value());
  EXPECT_EQ(pg->sub_groups[1].min_member, 4);
  EXPECT_EQ(pg->sub_groups[1].parent, "leaders");
  EXPECT_EQ(pg->sub_groups[1].topology_constraint.required_level, "block");
}

TEST(PodGroupDecodeTest, DefaultsAndKeepsZero) {
  auto pg = decode_pod_group(json::parse(R"({"metadata":{"name":"pg"},"spec":{"queue":"q"}})"));
  ASSERT_TRUE(pg.is_ok());
  EXPECT_EQ(pg->min_member, 1);
  EXPECT_FALSE(pg->mark_unschedulable.has_value());
  EXPECT_FALSE(pg->scheduling_backoff.has_value());
  EXPECT_TRUE(pg->topology_constraint.empty());
  auto zero = decode_pod_group(json::parse(R"({"metadata":{"name":"pg"},"spec":{"minMember":0}})"));
  ASSERT_TRUE(zero.is_ok());
  EXPECT_EQ(zero->min_member, 0);
}

TEST(PodGroupDecodeTest, BadFields) {
  auto pg = decode_pod_group(json::parse(R"({"metadata":{"name":"pg"},"spec":{"minMember":"2","queue":"q",
    "markUnschedulable":"yes","topologyConstraint":"rack","subGroups":[{"name":"a","parent":1},7]}})"));
  ASSERT_TRUE(pg.is_ok());
  EXPECT_THAT(fields(pg->errors),
              ElementsAre("spec.minMember", "spec.markUnschedulable", "spec.topologyConstraint",
                          "spec.subGroups[0].parent", "spec.subGroups[1]"));
  EXPECT_EQ(pg->min_member, 1);
  EXPECT_EQ(pg->queue, "q");
  EXPECT_FALSE(pg->mark_unschedulable.has_value());
  ASSERT_EQ(pg->sub_groups.size(), 1u);
  EXPECT_EQ(pg->sub_groups[0].name, "a");
}

// ---------------------------------------------------------------------- PriorityClass, BindRequest

TEST(PriorityClassDecodeTest, ReadsFields) {
  auto pc = decode_priority_class(json::parse(R"({"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass",
    "metadata":{"name":"train"},"value":50,"globalDefault":true,"preemptionPolicy":"Never"})"));
  ASSERT_TRUE(pc.is_ok());
  EXPECT_EQ(pc->value, 50);
  EXPECT_TRUE(pc->global_default);
  EXPECT_EQ(pc->preemption_policy, "Never");
  auto bad = decode_priority_class(json::parse(R"({"metadata":{"name":"x"},"value":"50"})"));
  ASSERT_TRUE(bad.is_ok());
  EXPECT_THAT(fields(bad->errors), ElementsAre("value"));
}

TEST(BindRequestDecodeTest, ReadsFields) {
  auto br =
      decode_bind_request(json::parse(R"({"apiVersion":"scheduling.run.ai/v1alpha2","kind":"BindRequest",
    "metadata":{"name":"pod-a","namespace":"ns1","labels":{"selected-node":"node1"}},
    "spec":{"podName":"pod-a","selectedNode":"node1","receivedResourceType":"Fraction",
      "receivedGPU":{"count":1,"portion":"0.50"},"selectedGPUGroups":["g1","g2"],"backoffLimit":3},
    "status":{"phase":"Failed","reason":"boom","failedAttempts":2}})"));
  ASSERT_TRUE(br.is_ok());
  EXPECT_THAT(br->errors, IsEmpty());
  EXPECT_EQ(br->pod_name, "pod-a");
  EXPECT_EQ(br->selected_node, "node1");
  EXPECT_EQ(br->received_resource_type, "Fraction");
  EXPECT_EQ(br->received_gpu_count, 1);
  EXPECT_EQ(br->received_gpu_portion, "0.50");
  EXPECT_THAT(br->selected_gpu_groups, ElementsAre("g1", "g2"));
  EXPECT_EQ(br->backoff_limit, 3);
  EXPECT_EQ(br->phase, "Failed");
  EXPECT_EQ(br->reason, "boom");
  EXPECT_EQ(br->failed_attempts, 2);
  auto bad = decode_bind_request(json::parse(
      R"({"metadata":{"name":"b"},"spec":{"receivedGPU":{"count":"1","portion":0.5},"selectedGPUGroups":["a",2]}})"));
  ASSERT_TRUE(bad.is_ok());
  EXPECT_THAT(fields(bad->errors),
              ElementsAre("spec.receivedGPU.count", "spec.receivedGPU.portion", "spec.selectedGPUGroups[1]"));
  EXPECT_THAT(bad->selected_gpu_groups, ElementsAre("a"));
}

// --------------------------------------------------------------------------------- dispatching

TEST(DecodeObjectIntoTest, DispatchesOnKindAndGroup) {
  ClusterObjects out;
  const char* objects[] = {
      R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"n"}})",
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"ns"}})",
      R"({"apiVersion":"scheduling.run.ai/v2","kind":"Queue","metadata":{"name":"q"}})",
      R"({"kind":"Queue","metadata":{"name":"q2"}})",
      R"({"apiVersion":"scheduling.run.ai/v2alpha2","kind":"PodGroup","metadata":{"name":"pg","namespace":"ns"}})",
      R"({"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass","metadata":{"name":"pc"},"value":1})",
      R"({"apiVersion":"scheduling.run.ai/v1alpha2","kind":"BindRequest","metadata":{"name":"b","namespace":"ns"}})",
      R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d","namespace":"ns"}})",
      R"({"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"Queue","metadata":{"name":"vq"}})",
      R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm"}})",
  };
  for (const char* o : objects) ASSERT_TRUE(decode_object_into(json::parse(o), out).is_ok()) << o;
  EXPECT_EQ(out.nodes.size(), 1u);
  EXPECT_EQ(out.pods.size(), 1u);
  ASSERT_EQ(out.queues.size(), 2u);
  EXPECT_EQ(out.queues[1].meta.name, "q2");
  EXPECT_EQ(out.pod_groups.size(), 1u);
  EXPECT_EQ(out.priority_classes.size(), 1u);
  EXPECT_EQ(out.bind_requests.size(), 1u);
  // A namespaced object of another group may own pods: the pod grouper's input (docs/pod-grouping.md).
  ASSERT_EQ(out.owners.size(), 1u);
  EXPECT_EQ(out.owners[0].group_kind(), "Deployment.apps");
  EXPECT_THAT(out.skipped, ElementsAre("Queue vq (scheduling.volcano.sh/v1beta1)", "ConfigMap cm"));
}

TEST(DecodeObjectIntoTest, MissingKindOrNameIsAnError) {
  ClusterObjects out;
  for (const char* o :
       {R"({"metadata":{"name":"x"}})", R"({"kind":"Pod"})", R"({"kind":"Pod","metadata":{}})",
        R"({"kind":5,"metadata":{"name":"x"}})", R"({"kind":"Pod","metadata":{"name":""}})",
        R"({"kind":"Pod","metadata":"x"})", R"([1])"}) {
    Status s = decode_object_into(json::parse(o), out);
    EXPECT_FALSE(s.is_ok()) << o;
  }
  EXPECT_TRUE(out.pods.empty());
}

/// Every node of `doc` replaced in turn by a value of every JSON type: decoding must still succeed
/// (the top level stays an object) and must not throw.
template <class Decode>
void mutate_everywhere(const json& doc, Decode decode) {
  const json replacements[] = {json(nullptr), json("x"),     json(-1),       json(1.5),
                               json(true),    json::array(), json::object(), json::array({1, "a"})};
  const json flat = doc.flatten();
  for (const auto& [pointer, leaf] : flat.items()) {
    // Each prefix of the pointer names an inner node as well as the leaf.
    json::json_pointer ptr(pointer);
    while (!ptr.empty()) {
      for (const json& r : replacements) {
        json mutated = doc;
        mutated[ptr] = r;
        Result<typename std::decay_t<decltype(*decode(doc))>> out = decode(mutated);
        EXPECT_TRUE(out.is_ok()) << ptr.to_string() << " = " << r.dump();
      }
      ptr = ptr.parent_pointer();
    }
  }
}

TEST(MutationTest, DecodersSurviveAnyTypeAnywhere) {
  mutate_everywhere(json::parse(kFullPod), [](const json& j) { return decode_pod(j); });
  mutate_everywhere(json::parse(R"({"metadata":{"name":"q","labels":{"a":"b"}},"spec":{"displayName":"d",
    "parentQueue":"p","priority":1,"resources":{"gpu":{"quota":1,"overQuotaWeight":1,"limit":1}},
    "preemptMinRuntime":"1s","reclaimMinRuntime":"1s"}})"),
                    [](const json& j) { return decode_queue(j); });
  mutate_everywhere(
      json::parse(R"({"metadata":{"name":"pg","ownerReferences":[{"name":"x","controller":true}]},
    "spec":{"minMember":1,"queue":"q","markUnschedulable":true,"schedulingBackoff":1,
    "topologyConstraint":{"topology":"t"},"subGroups":[{"name":"a","minMember":1,"parent":"b",
    "topologyConstraint":{"requiredTopologyLevel":"r"}}]}})"),
      [](const json& j) { return decode_pod_group(j); });
  mutate_everywhere(json::parse(R"({"metadata":{"name":"n","creationTimestamp":"2024-01-02T03:04:05Z"},
    "spec":{"unschedulable":true,"taints":[{"key":"k","effect":"e"}]},
    "status":{"capacity":{"cpu":"1"},"allocatable":{"cpu":"1"},"conditions":[{"type":"Ready","status":"True"}]}})"),
                    [](const json& j) { return decode_node(j); });
  mutate_everywhere(json::parse(R"({"metadata":{"name":"b"},"spec":{"podName":"p","receivedGPU":{"count":1,
    "portion":"0.5"},"selectedGPUGroups":["g"],"backoffLimit":1},"status":{"phase":"P","failedAttempts":1}})"),
                    [](const json& j) { return decode_bind_request(j); });
  mutate_everywhere(
      json::parse(R"({"metadata":{"name":"pc"},"value":1,"globalDefault":true,"preemptionPolicy":"Never"})"),
      [](const json& j) { return decode_priority_class(j); });
}

// ---------------------------------------------------------------------------------- round trips

template <class T, class Decode>
void expect_round_trip(const T& x, Decode decode) {
  const json j = encode(x);
  Result<T> back = decode(j);
  ASSERT_TRUE(back.is_ok()) << back.message();
  EXPECT_THAT(back->errors, IsEmpty()) << j.dump();
  EXPECT_TRUE(*back == x) << j.dump();
  // Once more through text, as a snapshot file would be.
  Result<T> again = decode(json::parse(j.dump()));
  ASSERT_TRUE(again.is_ok());
  EXPECT_TRUE(*again == x) << j.dump();
}

ObjectMeta full_meta(const char* name, const char* ns) {
  ObjectMeta m;
  m.name = name;
  m.namespace_ = ns;
  m.uid = std::string(name) + "-uid";
  m.resource_version = "17";
  m.generation = 2;
  m.creation_timestamp = 1704164645;
  m.deletion_timestamp = -86401;
  m.labels = {{"a", "b"}, {"kai.scheduler/queue", "q"}};
  m.annotations = {{"gpu-fraction", "0.5"}};
  m.owner_references = {{"batch/v1", "Job", "j", "j-uid", true}, {"v1", "Pod", "p", "", false}};
  return m;
}

TEST(RoundTripTest, Node) {
  Node n;
  n.meta = full_meta("node-1", "");
  n.unschedulable = true;
  n.taints = {{"k", "v", "NoSchedule"}, {"k2", "", "NoExecute"}};
  n.capacity = {{"cpu", 8000}, {"memory", 34359738368000}, {"nvidia.com/gpu", 8000}};
  n.allocatable = {{"cpu", 7500}, {"weird", -1}, {"pods", 110000}};
  n.conditions = {{"Ready", "True"}, {"DiskPressure", "False"}};
  expect_round_trip(n, [](const json& j) { return decode_node(j); });
  expect_round_trip(Node{}, [](const json& j) { return decode_node(j); });
}

TEST(RoundTripTest, DecodedPodWithEverything) {
  auto p = decode_pod(json::parse(kFullPod));
  ASSERT_TRUE(p.is_ok());
  expect_round_trip(*p, [](const json& j) { return decode_pod(j); });
}

TEST(RoundTripTest, PodWithInterPodConstraints) {
  auto p = decode_pod(json::parse(R"({"metadata":{"name":"p","labels":{"rev":"1"}},"spec":{
    "affinity":{"podAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[{"topologyKey":"z",
                  "labelSelector":{"matchLabels":{"a":"b"},"matchExpressions":[{"key":"c","operator":"Exists"}]},
                  "mismatchLabelKeys":["rev"]}],
                  "preferredDuringSchedulingIgnoredDuringExecution":[{"weight":3,"podAffinityTerm":{
                  "topologyKey":"h","namespaceSelector":{"matchLabels":{"kubernetes.io/metadata.name":"q"}}}}]},
                "podAntiAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[{"topologyKey":"h",
                  "labelSelector":{},"namespaces":["n1","n2"]}]}},
    "topologySpreadConstraints":[{"maxSkew":2,"topologyKey":"z","labelSelector":{"matchLabels":{"a":"b"}},
                                  "nodeTaintsPolicy":"Honor","matchLabelKeys":["rev"]}],
    "containers":[{"name":"a","ports":[{"containerPort":80},{"containerPort":81,"hostPort":8081},
                                       {"containerPort":82},{"hostPort":1,"protocol":"SCTP"}]},
                  {"name":"b","ports":[{"containerPort":80,"hostPort":0}]}],
    "initContainers":[{"name":"i","ports":[{"hostPort":9,"hostIP":"127.0.0.1"}],"restartPolicy":"Always"}],
    "resourceClaims":[{"name":"gpu"}]}})"));
  ASSERT_TRUE(p.is_ok());
  EXPECT_THAT(p->errors, IsEmpty());
  ASSERT_EQ(p->unsupported_constraints.size(), 1u);
  EXPECT_EQ(p->containers[0].host_ports.size(), 2u);
  EXPECT_TRUE(p->init_containers[0].restart_policy_always);
  expect_round_trip(*p, [](const json& j) { return decode_pod(j); });
}

TEST(RoundTripTest, BuiltPod) {
  Pod p;
  p.meta = full_meta("p", "ns");
  p.scheduler_name = "kai-scheduler";
  p.node_name = "node-1";
  p.priority = -5;
  p.required_node_affinity = std::vector<NodeSelectorTerm>{};  // present but empty: matches nothing
  p.tolerations = {{"", "Exists", "", ""}};
  Container c;
  c.name = "main";
  c.requests = {{"cpu", 1}, {"memory", 1000}};
  c.limits = {{"memory", 2000}};
  p.containers = {c};
  p.phase = "Running";
  p.conditions = {{"Ready", "True", "", ""}};
  expect_round_trip(p, [](const json& j) { return decode_pod(j); });
  Pod empty;
  empty.meta.name = "e";
  expect_round_trip(empty, [](const json& j) { return decode_pod(j); });
}

TEST(RoundTripTest, Queue) {
  Queue q;
  q.meta = full_meta("team-a", "");
  q.display_name = "Team A";
  q.parent_queue = "dept";
  q.has_resources = true;
  q.gpu = {2, 1, -1};
  q.cpu = {1500.5, 0.25, 4000};
  q.memory = {0.1, 0, 1e12};
  q.priority = 7;
  q.preempt_min_runtime_seconds = 5400.25;
  q.reclaim_min_runtime_seconds = 0.000001;
  expect_round_trip(q, [](const json& j) { return decode_queue(j); });
  Queue plain;
  plain.meta.name = "p";
  plain.preempt_min_runtime_seconds = -3;
  plain.reclaim_min_runtime_seconds = 0;
  expect_round_trip(plain, [](const json& j) { return decode_queue(j); });
}

TEST(RoundTripTest, PodGroup) {
  PodGroup pg;
  pg.meta = full_meta("pg", "ns");
  pg.min_member = 0;
  pg.queue = "q";
  pg.priority_class_name = "train";
  pg.preemptibility = "preemptible";
  pg.mark_unschedulable = false;
  pg.scheduling_backoff = -1;
  pg.topology_constraint = {"topo", "rack", ""};
  pg.sub_groups = {{"a", 0, 1, std::nullopt, {}}, {"b", 0, std::nullopt, "a", {"", "", "host"}},
                   {"c", 3, std::nullopt, "", {}}};
  pg.staleness_grace_period_seconds = -1;
  pg.preemption_delay_seconds = 90;
  expect_round_trip(pg, [](const json& j) { return decode_pod_group(j); });
}

TEST(RoundTripTest, PriorityClassAndBindRequest) {
  PriorityClass pc;
  pc.meta = full_meta("inference", "");
  pc.value = 125;
  pc.global_default = true;
  pc.preemption_policy = "PreemptLowerPriority";
  expect_round_trip(pc, [](const json& j) { return decode_priority_class(j); });

  BindRequest br;
  br.meta = full_meta("pod-a", "ns");
  br.pod_name = "pod-a";
  br.selected_node = "node1";
  br.received_resource_type = "Fraction";
  br.received_gpu_count = 1;
  br.received_gpu_portion = "0.50";
  br.selected_gpu_groups = {"g"};
  br.backoff_limit = 0;
  br.phase = "Pending";
  br.reason = "r";
  br.failed_attempts = 4;
  expect_round_trip(br, [](const json& j) { return decode_bind_request(j); });
}

TEST(EncodeTest, WritesKubernetesShapes) {
  Pod p;
  p.meta.name = "p";
  p.meta.namespace_ = "ns";
  p.meta.creation_timestamp = 1704164645;
  Container c;
  c.name = "main";
  c.requests = {{"cpu", 1500}, {"memory", 2000}};
  p.containers = {c};
  const json j = encode(p);
  EXPECT_EQ(j["apiVersion"], "v1");
  EXPECT_EQ(j["kind"], "Pod");
  EXPECT_EQ(j["metadata"]["creationTimestamp"], "2024-01-02T03:04:05Z");
  EXPECT_EQ(j["spec"]["containers"][0]["resources"]["requests"]["cpu"], "1500m");
  EXPECT_EQ(j["spec"]["containers"][0]["resources"]["requests"]["memory"], "2");
  Queue q;
  q.meta.name = "q";
  q.preempt_min_runtime_seconds = 90;
  EXPECT_EQ(encode(q)["apiVersion"], "scheduling.run.ai/v2");
  EXPECT_EQ(encode(q)["spec"]["preemptMinRuntime"], "1m30s");
  EXPECT_EQ(encode(PodGroup{})["apiVersion"], "scheduling.run.ai/v2alpha2");
  EXPECT_EQ(encode(BindRequest{})["apiVersion"], "scheduling.run.ai/v1alpha2");
  EXPECT_EQ(encode(PriorityClass{})["apiVersion"], "scheduling.k8s.io/v1");
}

}  // namespace
}  // namespace kai::model
