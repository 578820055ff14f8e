// The fast decoder (simdjson, only the fields the decoders read) against the reference (nlohmann's
// DOM, every field): the same objects, the same FieldErrors, the same failures, on every kind of
// the scenario corpus, a generated cluster, a realistic 4 KB pod with every field a decoder reads
// mutated to every JSON type, and random truncations and byte flips (never a crash).

#include "k8s/model/watch_decode.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "k8s/model/codec.hpp"
#include "k8s/model/json_codec.hpp"
#include "tests/model/scenario_corpus.hpp"
#include "tools/kai-gen/api_pod.hpp"
#include "tools/kai-gen/generator.hpp"

namespace kai::model {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

struct Decoded {
  bool ok = false;
  std::string message;
  ClusterObjects objects;
};

using DecodeFn = Status (*)(std::string_view, std::string_view, ClusterObjects&);

Decoded run(DecodeFn decode, std::string_view text, std::string_view kind = "Pod") {
  Decoded d;
  const Status s = decode(text, kind, d.objects);
  d.ok = s.is_ok();
  d.message = s.is_ok() ? "" : s.message();
  return d;
}

Decoded fast(std::string_view text) {
  return run(decode_objects_json, text);
}

void expect_same(std::string_view text, std::string_view kind = "Pod") {
  const Decoded f = run(decode_objects_json, text, kind);
  const Decoded r = run(decode_objects_json_reference, text, kind);
  EXPECT_EQ(f.ok, r.ok) << text.substr(0, 300);
  EXPECT_EQ(f.message, r.message) << text.substr(0, 300);
  EXPECT_TRUE(f.objects == r.objects) << text.substr(0, 300);
}

/// A pod as the API server sends it: managed fields, env, volumes, status; about 4 KB, with a
/// value for every field a pod decoder reads.
json rich_pod() {
  json p = gen::api_server_pod(17);
  p["metadata"]["deletionTimestamp"] = "2026-11-20T11:00:00Z";
  p["spec"]["nodeName"] = "";
  p["spec"]["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] =
      json::array({{{"topologyKey", "k"}}});
  p["spec"]["topologySpreadConstraints"] =
      json::array({{{"maxSkew", 1}, {"whenUnsatisfiable", "ScheduleAnyway"}}});
  p["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] = 1;
  p["spec"]["containers"][0]["ports"][0]["hostPort"] = 0;
  p["spec"]["initContainers"] = json::array(
      {{{"name", "init"}, {"restartPolicy", "Always"}, {"resources", {{"requests", {{"cpu", "100m"}}}}}}});
  p["spec"]["overhead"] = {{"cpu", "250m"}};
  p["spec"]["schedulingGates"] = json::array();
  p["spec"]["resourceClaims"] = json::array();
  p["status"]["nominatedNodeName"] = "n1";
  return p;
}

/// Every path to a value inside `j` (JSON pointers), objects and arrays included.
void collect_pointers(const json& j, const std::string& at, std::vector<std::string>& out) {
  out.push_back(at);
  if (j.is_object()) {
    for (const auto& [k, v] : j.items()) collect_pointers(v, at + "/" + k, out);
  } else if (j.is_array()) {
    for (size_t i = 0; i < j.size(); ++i) collect_pointers(j[i], at + "/" + std::to_string(i), out);
  }
}

TEST(WatchDecode, RealisticPodDecodesAsTheReferenceDoes) {
  const std::string text = rich_pod().dump();
  const Decoded f = fast(text);
  ASSERT_TRUE(f.ok) << f.message;
  ASSERT_EQ(f.objects.pods.size(), 1u);
  const Pod& pod = f.objects.pods[0];
  EXPECT_EQ(pod.meta.name, "train-worker-17");
  EXPECT_EQ(pod.containers.size(), 1u);
  EXPECT_EQ(pod.containers[0].requests.at("nvidia.com/gpu"), 1000);
  EXPECT_TRUE(pod.unsupported_constraints.empty());  // pod anti-affinity is kept (and the sidecar counted)
  EXPECT_EQ(pod.pod_anti_affinity.required.size(), 1u);
  EXPECT_TRUE(pod.init_containers.at(0).restart_policy_always);
  EXPECT_TRUE(pod.errors.empty());
  expect_same(text);
}

// Each value of the pod replaced by each JSON type (and by numbers simdjson leaves to nlohmann):
// whatever the decoders say about it, both paths say the same.
TEST(WatchDecode, EveryFieldMutatedToEveryTypeDecodesAsTheReferenceDoes) {
  const json pod = rich_pod();
  std::vector<std::string> pointers;
  collect_pointers(pod, "", pointers);
  const std::vector<std::string> replacements = {"null",
                                                 "true",
                                                 "\"\"",
                                                 "\"x\"",
                                                 "0",
                                                 "-1",
                                                 "1.5",
                                                 "2.0",
                                                 "1e400",
                                                 "99999999999999999999",
                                                 "[]",
                                                 "[1]",
                                                 "{}",
                                                 "{\"a\":\"b\"}",
                                                 "\"2026-01-01T00:00:00Z\"",
                                                 "\"Always\"",
                                                 "\"500m\"",
                                                 "18446744073709551615"};
  size_t cases = 0;
  for (const std::string& ptr : pointers) {
    if (ptr.empty()) continue;
    for (const std::string& r : replacements) {
      json mutated = pod;
      mutated[json::json_pointer(ptr)] = json::parse(r, nullptr, false, true);
      if (r == "1e400" || r == "99999999999999999999") {
        // Not representable in a json value: splice the text in instead.
        json marker = pod;
        marker[json::json_pointer(ptr)] = "@@MARK@@";
        std::string text = marker.dump();
        text.replace(text.find("\"@@MARK@@\""), 10, r);
        expect_same(text);
      } else {
        expect_same(mutated.dump());
      }
      ++cases;
    }
  }
  EXPECT_GT(cases, 1000u);
}

TEST(WatchDecode, ListsArraysAndMissingKindsDecodeAsTheReferenceDoes) {
  json item = rich_pod();
  item.erase("kind");
  expect_same(json{{"apiVersion", "v1"}, {"kind", "PodList"}, {"items", {item, item}}}.dump());
  expect_same(json{{"kind", "List"}, {"items", nullptr}}.dump());
  expect_same(json{{"kind", "List"}, {"items", "nope"}}.dump());
  expect_same(json::array({item, 3, item}).dump());
  expect_same(item.dump());
  expect_same(json{{"apiVersion", "v1"}, {"kind", "Pod"}}.dump());  // no name: an error
  expect_same(R"({"kind":"Pod","kind":"Node","metadata":{"name":"a"}})");
  expect_same(R"({"kind":"Pod","metadata":{"name":"a","name":"b"}})");
  expect_same("");
  expect_same("not json");
  expect_same("[]");
  expect_same("3");
}

// nlohmann's objects are sorted maps that keep the last of repeated keys; the simdjson view visits
// a map's members the same way, so labels, quantities and replica maps come out in the same order
// with the same FieldErrors whatever the text's order.
TEST(WatchDecode, MapsWithKeysOutOfOrderOrRepeatedDecodeAsTheReferenceDoes) {
  const std::string pod_head = R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"p","namespace":"ns",)";
  for (const char* labels : {R"({"b":"2","a":"1","c":3})", R"({"a":"1","a":2,"b":"x"})", R"({"a":2,"a":"1"})",
                             R"({"z":1,"y":[],"x":{}})", R"({"":"e","a":"1"})"}) {
    expect_same(pod_head + R"("labels":)" + labels + "}}");
    expect_same(pod_head + R"("labels":{}},"spec":{"nodeSelector":)" + labels + "}}");
  }
  const std::string requests = R"({"memory":"1Gi","cpu":"x","nvidia.com/gpu":1,"cpu":"500m","a":true})";
  expect_same(pod_head + R"("labels":{}},"spec":{"containers":[{"name":"c","resources":{"requests":)" + requests +
              "}}]}}");
  const std::string job = R"({"kind":"PyTorchJob","apiVersion":"kubeflow.org/v1","metadata":{"name":"j","namespace":"ns"},)"
                          R"("spec":{"pytorchReplicaSpecs":{"Worker":{"replicas":3},"Master":{"replicas":1},"Bad":7,)"
                          R"("Master":{"replicas":2}}}})";
  expect_same(job, "PyTorchJob");
  json item = json::parse(job);
  item.erase("kind");
  expect_same(json{{"kind", "PyTorchJobList"}, {"items", {item}}}.dump(), "PyTorchJob");
  const Decoded f = run(decode_objects_json, job, "PyTorchJob");
  ASSERT_TRUE(f.ok) << f.message;
  ASSERT_EQ(f.objects.owners.size(), 1u);
  ASSERT_EQ(f.objects.owners[0].replicas.size(), 2u);
  EXPECT_EQ(f.objects.owners[0].replicas[0].name, "Master");
  EXPECT_EQ(f.objects.owners[0].replicas[0].replicas, 2);  // the last of the repeated key
}

TEST(WatchDecode, GeneratedClusterDecodesAsTheReferenceDoes) {
  const ClusterObjects cluster = gen::generate(gen::ClusterSpec::scaled(0.01));
  const std::string list = encode_snapshot_json(cluster);
  const Decoded f = fast(list);
  ASSERT_TRUE(f.ok) << f.message;
  EXPECT_GT(f.objects.pods.size(), 1000u);
  expect_same(list);
}

// kai-sim's snapshot input: a flat List takes the fast path and gives what the reference gives;
// every other shape is left to decode_snapshot's nlohmann path (and its messages).
TEST(WatchDecode, ASnapshotListTakesTheFastPathOnlyWhenEveryItemNamesItsKind) {
  const ClusterObjects cluster = gen::generate(gen::ClusterSpec::scaled(0.01));
  const std::string list = encode_snapshot_json(cluster);
  ClusterObjects fast_objects;
  ASSERT_TRUE(decode_flat_list_json(list, fast_objects));
  ClusterObjects reference;
  ASSERT_TRUE(decode_objects_json_reference(list, "", reference).is_ok());
  EXPECT_TRUE(fast_objects == reference);
  auto snapshot = decode_snapshot(list);
  ASSERT_TRUE(snapshot) << snapshot.message();
  EXPECT_TRUE(*snapshot == reference);

  json item = rich_pod();
  json no_kind = item;
  no_kind.erase("kind");
  for (const json& other : {json{{"kind", "List"}, {"items", {item, no_kind}}},
                            json{{"kind", "List"}, {"items", {item, json{{"kind", "List"}, {"items", {item}}}}}},
                            json{{"kind", "List"}, {"items", {item, 3}}}, item,
                            json{{"kind", "List"}, {"items", {item, json{{"kind", "Pod"}}}}}}) {
    ClusterObjects out;
    EXPECT_FALSE(decode_flat_list_json(other.dump(), out)) << other.dump().substr(0, 200);
    EXPECT_TRUE(out == ClusterObjects{}) << "left empty";
  }
  ClusterObjects empty;
  EXPECT_TRUE(decode_flat_list_json(R"({"kind":"List","items":null})", empty));
  EXPECT_FALSE(decode_flat_list_json("[1,", empty));
}

// The items are found without a tree of the whole List, then parsed one by one where they lie: the
// List's other members and what follows it must still be valid JSON, and the result must not depend
// on whether the text was copied or read in place.
TEST(WatchDecode, ASnapshotListReadInPlaceRefusesWhatTheWholeDocumentParseRefuses) {
  const ClusterObjects cluster = gen::generate(gen::ClusterSpec::scaled(0.01));
  std::string list = encode_snapshot_json(cluster);
  ClusterObjects copied;
  ASSERT_TRUE(decode_flat_list_json(list, copied));
  list.reserve(list.size() + kSnapshotInPlacePadding);
  ClusterObjects in_place;
  ASSERT_TRUE(decode_flat_list_json(list, in_place, list.capacity() - list.size()));
  EXPECT_TRUE(in_place == copied);
  auto snapshot = decode_snapshot(list, list.capacity() - list.size());
  ASSERT_TRUE(snapshot) << snapshot.message();
  EXPECT_TRUE(*snapshot == copied);

  const std::string pod = rich_pod().dump();
  // kubectl writes the members in alphabetical order: items before kind.
  ClusterObjects kubectl_order;
  EXPECT_TRUE(decode_flat_list_json(R"({"apiVersion":"v1","items":[)" + pod + R"(],"kind":"List","metadata":{}})",
                                    kubectl_order));
  EXPECT_EQ(kubectl_order.pods.size(), 1u);
  // An item naming its kind last is found whole.
  json kindless = rich_pod();
  kindless.erase("kind");
  std::string kind_last = kindless.dump();
  kind_last.insert(kind_last.size() - 1, R"(,"kind":"Pod")");
  ClusterObjects kind_last_objects;
  EXPECT_TRUE(decode_flat_list_json(R"({"kind":"List","items":[)" + kind_last + "," + pod + "]}", kind_last_objects));
  ASSERT_EQ(kind_last_objects.pods.size(), 2u);
  EXPECT_TRUE(kind_last_objects.pods[0] == kind_last_objects.pods[1]);
  ClusterObjects array_of_items;
  EXPECT_TRUE(decode_flat_list_json(" [ " + pod + " , " + pod + " ] \n", array_of_items));
  EXPECT_EQ(array_of_items.pods.size(), 2u);
  // Not JSON at all: refused here and by decode_snapshot's reference parser.
  for (const std::string& bad : {
           R"({"kind":"List","items":[)" + pod + R"(],"metadata":{"resourceVersion":}})",  // a bad member
           R"({"kind":"List","items":[)" + pod + R"(]} {"kind":"List"})",                 // trailing text
           R"({"kind":"List","items":[)" + pod + ",]}",                                   // a trailing comma
           R"({"kind":"List","items":[)" + pod.substr(0, pod.size() - 1) + "]}",          // an item cut short
       }) {
    ClusterObjects out;
    EXPECT_FALSE(decode_flat_list_json(bad, out)) << bad.substr(0, 120);
    EXPECT_TRUE(out == ClusterObjects{}) << "left empty";
    EXPECT_FALSE(decode_snapshot(bad)) << "the reference parser refuses it too: " << bad.substr(0, 120);
  }
  // JSON, but not the one shape the fast path reads: left to the reference path's rules.
  for (const std::string& other : {
           R"({"kind":"List","items":[)" + pod + R"(],"items":[]})",      // repeated items
           R"({"kind":"List","kind":"PodList","items":[)" + pod + "]}",  // repeated kind
           R"({"kind":"Pod","items":[)" + pod + "]}",                     // not a List
           std::string(R"({"kind":"List"})"),                             // no items
       }) {
    ClusterObjects out;
    EXPECT_FALSE(decode_flat_list_json(other, out)) << other.substr(0, 120);
    EXPECT_TRUE(out == ClusterObjects{}) << "left empty";
  }
}

TEST(WatchDecode, ScenarioCorpusDecodesAsTheReferenceDoes) {
  size_t objects = 0;
  scenario_corpus::for_each_object([&](const json& d) {
    const std::string kind = d.value("kind", "Pod");
    expect_same(d.dump(), kind);
    ++objects;
  });
  EXPECT_GT(objects, 500u);
}

// Truncations and flipped bytes of a pod and of a list: never a crash, always the reference's answer.
TEST(WatchDecode, TruncatedAndCorruptedTextNeverCrashesAndMatchesTheReference) {
  json item = rich_pod();
  const std::vector<std::string> texts = {item.dump(),
                                          json{{"kind", "PodList"}, {"items", {item, item}}}.dump()};
  std::mt19937_64 rng(7);
  for (const std::string& text : texts) {
    for (size_t cut = 0; cut < text.size(); cut += 7) expect_same(std::string_view(text).substr(0, cut));
    for (int i = 0; i < 2000; ++i) {
      std::string t = text;
      const int flips = 1 + static_cast<int>(rng() % 4);
      for (int k = 0; k < flips; ++k) t[rng() % t.size()] = static_cast<char>(rng() % 256);
      expect_same(t);
    }
  }
}

}  // namespace
}  // namespace kai::model
