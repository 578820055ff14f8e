// YAML-to-JSON typing and whole-snapshot decoding (JSON Lists, arrays, multi-document YAML).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "k8s/model/codec.hpp"
#include "k8s/model/json_codec.hpp"

namespace kai::model {
namespace {

using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::StartsWith;

// ------------------------------------------------------------------------------- yaml_to_json

TEST(YamlToJsonTest, PlainScalarsFollowTheCoreSchema) {
  struct Case {
    const char* yaml;
    json expected;
  } cases[] = {
      {"true", true},
      {"False", false},
      {"TRUE", true},
      {"null", nullptr},
      {"~", nullptr},
      {"", nullptr},
      {"42", 42},
      {"-7", -7},
      {"+7", 7},
      {"0", 0},
      {"007", 7},
      {"0x1F", 31},
      {"0o17", 15},
      {"1.5", 1.5},
      {"1e3", 1000.0},
      {"-.5", -0.5},
      {"5.", 5.0},
      {"1.5E-2", 0.015},
      {"18446744073709551615", 18446744073709551615ull},
      {"1e", "1e"},
      {"yes", "yes"},
      {"on", "on"},
      {"100m", "100m"},
      {"4Gi", "4Gi"},
      {"1.2.3", "1.2.3"},
      {".inf", ".inf"},
      {"0x", "0x"},
      {"0o9", "0o9"},
      {"nullx", "nullx"},
      {"tRue", "tRue"},
      {"1_000", "1_000"},
      {"2024-01-02T03:04:05Z", "2024-01-02T03:04:05Z"},
  };
  for (const Case& c : cases) {
    auto j = yaml_to_json(std::string("v: ") + c.yaml);
    ASSERT_TRUE(j.is_ok()) << c.yaml << ": " << j.message();
    EXPECT_EQ((*j)["v"], c.expected) << c.yaml << " -> " << j->dump();
    EXPECT_EQ((*j)["v"].type(), c.expected.type()) << c.yaml << " -> " << j->dump();
  }
}

TEST(YamlToJsonTest, QuotedAndBlockScalarsStayStrings) {
  auto j = yaml_to_json(R"(a: "true"
b: '42'
c: "null"
d: ''
e: !!str 1e3
f: |
  12
g: >
  false
h: "1e3"
)");
  ASSERT_TRUE(j.is_ok()) << j.message();
  EXPECT_EQ(
      *j,
      json::parse(R"({"a":"true","b":"42","c":"null","d":"","e":"1e3","f":"12\n","g":"false\n","h":"1e3"})"));
}

TEST(YamlToJsonTest, MapsAndSequences) {
  auto j = yaml_to_json(R"(
metadata:
  name: p
  labels: {app: x, n: "1"}
spec:
  containers:
  - name: a
    resources:
      requests: {cpu: 500m, memory: 1Gi, nvidia.com/gpu: 1}
  - name: b
  tolerations: []
  empty:
anchors:
  base: &b {x: 1}
  copy: *b
)");
  ASSERT_TRUE(j.is_ok()) << j.message();
  EXPECT_EQ(*j, json::parse(R"({"metadata":{"name":"p","labels":{"app":"x","n":"1"}},
    "spec":{"containers":[{"name":"a","resources":{"requests":{"cpu":"500m","memory":"1Gi","nvidia.com/gpu":1}}},
                          {"name":"b"}],"tolerations":[],"empty":null},
    "anchors":{"base":{"x":1},"copy":{"x":1}}})"));
}

TEST(YamlToJsonTest, ErrorsCarryTheLine) {
  auto j = yaml_to_json("a: 1\nb: [1, 2\nc: 3\n");
  ASSERT_FALSE(j.is_ok());
  EXPECT_THAT(j.message(), StartsWith("not valid YAML"));
  EXPECT_THAT(j.message(), HasSubstr("at line"));
  auto k = yaml_to_json("a: 1\n? [x]\n: 2\n");
  ASSERT_FALSE(k.is_ok());
  EXPECT_THAT(k.message(), HasSubstr("line 2"));
}

// ------------------------------------------------------------------------------ decode_snapshot

TEST(DecodeSnapshotTest, JsonList) {
  auto s = decode_snapshot(R"(  {"apiVersion":"v1","kind":"List","items":[
    {"apiVersion":"v1","kind":"Node","metadata":{"name":"n1"},"status":{"allocatable":{"cpu":"4"}}},
    {"apiVersion":"v1","kind":"Pod","metadata":{"name":"p1","namespace":"ns"},"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"bad"}}}]}},
    {"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d","namespace":"ns"}}]})");
  ASSERT_TRUE(s.is_ok()) << s.message();
  ASSERT_EQ(s->nodes.size(), 1u);
  EXPECT_EQ(s->nodes[0].allocatable.at("cpu"), 4000);
  ASSERT_EQ(s->pods.size(), 1u);
  EXPECT_EQ(s->pods[0].errors.size(), 1u);  // kept, with its error
  EXPECT_TRUE(s->skipped.empty());
  ASSERT_EQ(s->owners.size(), 1u);  // an owner of pods (docs/pod-grouping.md)
  EXPECT_EQ(s->owners[0].meta.name, "d");
}

TEST(DecodeSnapshotTest, TypedListBareArrayAndSingleObject) {
  auto typed = decode_snapshot(
      R"({"apiVersion":"v1","kind":"PodList","metadata":{},"items":[{"kind":"Pod","metadata":{"name":"a"}},{"kind":"Pod","metadata":{"name":"b"}}]})");
  ASSERT_TRUE(typed.is_ok()) << typed.message();
  EXPECT_EQ(typed->pods.size(), 2u);
  auto array = decode_snapshot(
      R"([{"kind":"Node","metadata":{"name":"a"}},{"kind":"Queue","metadata":{"name":"q"}}])");
  ASSERT_TRUE(array.is_ok()) << array.message();
  EXPECT_EQ(array->nodes.size(), 1u);
  EXPECT_EQ(array->queues.size(), 1u);
  auto single =
      decode_snapshot("\n{\"kind\":\"PriorityClass\",\"metadata\":{\"name\":\"train\"},\"value\":50}");
  ASSERT_TRUE(single.is_ok()) << single.message();
  ASSERT_EQ(single->priority_classes.size(), 1u);
  EXPECT_EQ(single->priority_classes[0].value, 50);
  auto empty = decode_snapshot(R"({"apiVersion":"v1","kind":"List","items":null})");
  ASSERT_TRUE(empty.is_ok());
  EXPECT_TRUE(empty->pods.empty());
}

TEST(DecodeSnapshotTest, YamlMultiDocument) {
  auto s = decode_snapshot(R"(# a scenario
---
apiVersion: v1
kind: Node
metadata:
  name: node-1
  labels: {nvidia.com/gpu.memory: "81920"}
status:
  allocatable: {cpu: "8", memory: 64Gi, nvidia.com/gpu: 8, pods: 110}
  conditions: [{type: Ready, status: "True"}]
---
---
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: team-a}
spec:
  resources:
    gpu: {quota: 2, overQuotaWeight: 1, limit: -1}
    cpu: {quota: -1}
  preemptMinRuntime: 1m
---
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Pod
  metadata: {name: train-0, namespace: ns1, annotations: {pod-group-name: pg-1}}
  spec:
    schedulerName: kai-scheduler
    containers: [{name: c, resources: {limits: {nvidia.com/gpu: 1}}}]
- apiVersion: scheduling.run.ai/v2alpha2
  kind: PodGroup
  metadata: {name: pg-1, namespace: ns1}
  spec: {minMember: 1, queue: team-a, markUnschedulable: true}
...
)");
  ASSERT_TRUE(s.is_ok()) << s.message();
  ASSERT_EQ(s->nodes.size(), 1u);
  EXPECT_THAT(s->nodes[0].errors, IsEmpty());
  EXPECT_EQ(s->nodes[0].allocatable.at("nvidia.com/gpu"), 8000);
  EXPECT_EQ(s->nodes[0].allocatable.at("memory"), 64LL * 1024 * 1024 * 1024 * 1000);
  EXPECT_EQ(s->nodes[0].meta.labels.at("nvidia.com/gpu.memory"), "81920");
  EXPECT_EQ(s->nodes[0].conditions[0].status, "True");
  ASSERT_EQ(s->queues.size(), 1u);
  EXPECT_EQ(s->queues[0].gpu.quota, 2);
  EXPECT_EQ(s->queues[0].cpu.quota, -1);
  EXPECT_EQ(s->queues[0].preempt_min_runtime_seconds, 60.0);
  ASSERT_EQ(s->pods.size(), 1u);
  EXPECT_EQ(s->pods[0].containers[0].requests.at("nvidia.com/gpu"), 1000);
  ASSERT_EQ(s->pod_groups.size(), 1u);
  EXPECT_EQ(s->pod_groups[0].mark_unschedulable, true);
}

TEST(DecodeSnapshotTest, UnquotedYamlValuesThatMustBeStringsAreFieldErrors) {
  auto s = decode_snapshot(R"(kind: Pod
metadata: {name: p, annotations: {gpu-fraction: 0.5}, labels: {kai.scheduler/task-priority: 3}}
)");
  ASSERT_TRUE(s.is_ok()) << s.message();
  ASSERT_EQ(s->pods.size(), 1u);
  ASSERT_EQ(s->pods[0].errors.size(), 2u);
}

TEST(DecodeSnapshotTest, EmptyOrWhitespaceInputIsRefused) {
  for (const char* text : {"", "   \n", "\t\r\n \n"}) {
    auto s = decode_snapshot(text);
    ASSERT_FALSE(s.is_ok()) << '"' << text << '"';
    EXPECT_EQ(s.message(), "empty");
  }
}

TEST(DecodeSnapshotTest, YamlWithoutObjectsIsAnEmptySnapshot) {
  for (const char* text : {"---\n", "# nothing\n", R"({"kind":"List","items":[]})"}) {
    auto s = decode_snapshot(text);
    ASSERT_TRUE(s.is_ok()) << text;
    EXPECT_TRUE(s->pods.empty());
  }
}

TEST(DecodeSnapshotTest, Errors) {
  struct Case {
    const char* text;
    const char* prefix;
  } cases[] = {
      {R"({"kind":"List","items":[)", "not valid JSON"},
      {"[1, 2,]", "not valid JSON"},
      {R"({"kind":"List","items":[{"kind":"Pod","metadata":{"name":"a"}}, 3]})", "item 1: not an object"},
      {R"([{"kind":"Pod","metadata":{"name":"a"}},{"kind":"Pod","metadata":{"name":"b"}},{"kind":"Pod","metadata":{}}])",
       "item 2: missing metadata.name"},
      {R"([{"metadata":{"name":"a"}}])", "item 0: missing kind"},
      {R"({"kind":"List","items":{}})", "List items is not an array"},
      {"just some words", "YAML document 0: not an object"},
      {"a: [1\n", "not valid YAML"},
      {"kind: Pod\nmetadata: {name: a}\n---\n- 1\n", "item 1: not an object"},
      {"kind: Pod\nmetadata: {name: a}\n---\nkind: Node\n", "item 1: missing metadata.name"},
  };
  for (const Case& c : cases) {
    auto s = decode_snapshot(c.text);
    ASSERT_FALSE(s.is_ok()) << c.text;
    EXPECT_THAT(s.message(), StartsWith(c.prefix)) << c.text;
  }
  auto bad = decode_snapshot("[\n  {\"kind\": x}\n]");
  ASSERT_FALSE(bad.is_ok());
  EXPECT_THAT(bad.message(), HasSubstr("at byte 14"));
}

TEST(EncodeSnapshotTest, RoundTripsThroughDecode) {
  auto in = decode_snapshot(R"(
kind: Pod
metadata: {name: p, namespace: ns, creationTimestamp: "2024-01-02T03:04:05Z"}
spec: {containers: [{name: c, resources: {requests: {cpu: 250m}}}]}
---
kind: Node
metadata: {name: n}
status: {allocatable: {cpu: 4}}
---
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: q}
spec: {resources: {gpu: {quota: 1}}}
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: train}
value: 50
---
apiVersion: scheduling.run.ai/v2alpha2
kind: PodGroup
metadata: {name: pg, namespace: ns}
spec: {queue: q}
---
apiVersion: scheduling.run.ai/v1alpha2
kind: BindRequest
metadata: {name: p, namespace: ns}
spec: {podName: p, selectedNode: n}
)");
  ASSERT_TRUE(in.is_ok()) << in.message();
  const std::string text = encode_snapshot_json(*in);
  const json j = json::parse(text);
  EXPECT_EQ(j["apiVersion"], "v1");
  EXPECT_EQ(j["kind"], "List");
  ASSERT_EQ(j["items"].size(), 6u);
  // Referenced kinds first, pods last.
  EXPECT_EQ(j["items"][0]["kind"], "Node");
  EXPECT_EQ(j["items"][5]["kind"], "Pod");
  auto out = decode_snapshot(text);
  ASSERT_TRUE(out.is_ok()) << out.message();
  EXPECT_TRUE(out->nodes == in->nodes);
  EXPECT_TRUE(out->pods == in->pods);
  EXPECT_TRUE(out->queues == in->queues);
  EXPECT_TRUE(out->pod_groups == in->pod_groups);
  EXPECT_TRUE(out->priority_classes == in->priority_classes);
  EXPECT_TRUE(out->bind_requests == in->bind_requests);
  EXPECT_THAT(out->skipped, IsEmpty());
}

}  // namespace
}  // namespace kai::model
