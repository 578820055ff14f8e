// What the event log keeps of an object (k8s/model/log_redaction.hpp): no env values, managedFields or
// last-applied copy, and exactly what the decoders read.

#include "k8s/model/log_redaction.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "k8s/model/codec.hpp"
#include "k8s/model/watch_decode.hpp"

namespace kai::model {
namespace {

using nlohmann::json;

json secret_pod() {
  json container = {
      {"name", "main"},
      {"image", "busybox"},
      {"resources", {{"requests", {{"cpu", "1"}, {"nvidia.com/gpu", "1"}}}}},
      {"env",
       json::array({{{"name", "TOKEN"}, {"value", "s3cret"}},
                    {{"name", "ME"}, {"valueFrom", {{"fieldRef", {{"fieldPath", "metadata.name"}}}}}}})}};
  json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata",
               {{"name", "p"},
                {"namespace", "ns"},
                {"uid", "u1"},
                {"labels", {{"kai.scheduler/queue", "team-a"}}},
                {"annotations", {{"gpu-fraction", "0.5"}}},
                {"managedFields",
                 json::array({{{"manager", "kubectl"}, {"fieldsV1", {{"f:spec", json::object()}}}}})}}},
              {"spec",
               {{"schedulerName", "kai-scheduler"},
                {"containers", json::array({container})},
                {"initContainers", json::array({container})}}},
              {"status", {{"phase", "Pending"}}}};
  pod["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"] = pod.dump();
  return pod;
}

TEST(LogRedaction, DropsEnvValuesManagedFieldsAndTheLastAppliedCopy) {
  const std::string kept = redact_for_log(secret_pod().dump());
  EXPECT_EQ(kept.find("s3cret"), std::string::npos) << kept;
  const json j = json::parse(kept);
  EXPECT_FALSE(j["metadata"].contains("managedFields"));
  EXPECT_FALSE(j["metadata"]["annotations"].contains("kubectl.kubernetes.io/last-applied-configuration"));
  EXPECT_EQ(j["metadata"]["annotations"]["gpu-fraction"], "0.5");
  for (const char* list : {"containers", "initContainers"}) {
    const json& env = j["spec"][list][0]["env"];
    ASSERT_EQ(env.size(), 2u) << list;
    EXPECT_EQ(env[0], (json{{"name", "TOKEN"}})) << list;
    EXPECT_TRUE(env[1].contains("valueFrom")) << list;
  }
}

TEST(LogRedaction, TheDecodedObjectLosesOnlyTheLastAppliedCopy) {
  const std::string full = secret_pod().dump();
  ClusterObjects a, b;
  ASSERT_TRUE(decode_objects_json(full, "Pod", a).is_ok());
  ASSERT_TRUE(decode_objects_json(redact_for_log(full), "Pod", b).is_ok());
  ASSERT_EQ(a.pods.size(), 1u);
  // The typed pod keeps every annotation, so the copy would reach state snapshots; scheduling reads none of
  // it.
  EXPECT_EQ(a.pods[0].meta.annotations.erase("kubectl.kubernetes.io/last-applied-configuration"), 1u);
  EXPECT_EQ(encode_snapshot_json(a), encode_snapshot_json(b));
}

TEST(LogRedaction, OtherTextIsKeptByteForByte) {
  for (const std::string& text : {std::string(R"({"kind":"Node",  "metadata":{"name":"n"}})"),
                                  std::string("not json \"env\""), std::string(R"(["managedFields"])")}) {
    EXPECT_EQ(redact_for_log(text), text);
  }
}

/// What redaction must leave of `text`, computed on a DOM.
json expected_redaction(const std::string& text) {
  json j = json::parse(text);
  j["metadata"].erase("managedFields");
  if (j["metadata"].contains("annotations"))
    j["metadata"]["annotations"].erase("kubectl.kubernetes.io/last-applied-configuration");
  for (const char* list : {"containers", "initContainers", "ephemeralContainers"}) {
    if (!j["spec"].contains(list)) continue;
    for (json& c : j["spec"][list]) {
      if (!c.contains("env")) continue;
      for (json& var : c["env"]) var.erase("value");
    }
  }
  return j;
}

TEST(LogRedaction, CutsMembersWhereverTheyStandInTheTextAsReceived) {
  // The members to drop first, in the middle, last and alone, in compact and indented text, with
  // strings that hold commas, braces and escaped quotes: the text kept parses to what the DOM way
  // leaves, and keeps the order the server wrote.
  using ordered = nlohmann::ordered_json;
  const ordered tricky = "a,\"b\"},{[";
  std::vector<ordered> envs = {
      ordered::array({{{"value", "s3cret"}, {"name", "FIRST"}}}),
      ordered::array({{{"name", "MID"}, {"value", "s3cret"}, {"x", tricky}}}),
      ordered::array({{{"name", "LAST"}, {"value", tricky}}}),
      ordered::array({{{"value", "s3cret"}}}),
      ordered::array({{{"value", "s3cret"}}, {{"name", "B"}, {"value", "s3cret"}}, {{"name", "C"}}}),
  };
  int cases = 0;
  for (const ordered& env : envs) {
    for (int managed_first = 0; managed_first < 2; ++managed_first) {
      ordered meta = ordered::object();
      const ordered managed = ordered::array({{{"manager", "kubectl"}, {"note", tricky}}});
      if (managed_first) meta["managedFields"] = managed;
      meta["name"] = "p";
      meta["annotations"] = {{"kubectl.kubernetes.io/last-applied-configuration", "{\"kind\":\"Pod\"}"},
                             {"keep", tricky}};
      if (!managed_first) meta["managedFields"] = managed;
      ordered pod = {{"kind", "Pod"},
                     {"metadata", meta},
                     {"spec", {{"containers", ordered::array({{{"name", "main"}, {"env", env}}})}}},
                     {"status", {{"phase", "Pending"}}}};
      for (int indent : {-1, 2}) {
        const std::string text = pod.dump(indent);
        const std::string kept = redact_for_log(text);
        ++cases;
        EXPECT_EQ(kept.find("s3cret"), std::string::npos) << kept;
        EXPECT_EQ(kept.find("managedFields"), std::string::npos) << kept;
        const json parsed = json::parse(kept, nullptr, false);
        ASSERT_FALSE(parsed.is_discarded()) << "not JSON: " << kept;
        EXPECT_EQ(parsed, expected_redaction(text)) << kept;
        EXPECT_LT(kept.find("\"metadata\""), kept.find("\"spec\"")) << "the server's order is kept";
      }
    }
  }
  EXPECT_EQ(cases, 20);
}

TEST(LogRedaction, KeepsTheServersMemberOrderAndLayout) {
  const std::string text =
      R"({"spec": {"containers": [{"name": "m", "env": [{"name": "A", "value": "s3cret"}]}]}, "metadata": {"name": "p"}})";
  EXPECT_EQ(redact_for_log(text), R"({"spec": {"containers": [{"name": "m", "env": [{"name": "A"}]}]}, "metadata": {"name": "p"}})");
}

TEST(LogRedaction, TextThatDoesNotParseIsKeptAndTruncatedObjectsAreNotCut) {
  const std::string truncated = R"({"metadata":{"managedFields":[1,2],"name":"p"},"spec":{"containers":[{"env":[)";
  EXPECT_EQ(redact_for_log(truncated), truncated);
}

}  // namespace
}  // namespace kai::model
