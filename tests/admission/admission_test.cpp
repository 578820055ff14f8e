// Admission webhooks: every GPU-sharing validation rule, the fraction-pod mutation (applied as the API
// server would apply the JSON Patch), runtime-class enforcement, Queue / PodGroup validation, the
// AdmissionReview envelope, and garbage in.

#include <gtest/gtest.h>
#include <openssl/evp.h>

#include <nlohmann/json.hpp>
#include <random>

#include "k8s/admission/admission.hpp"

namespace kai::admission {
namespace {

using Json = nlohmann::json;

RandomSuffix fixed_suffix() {
  return [](size_t n) { return std::string("abcdefgh").substr(0, n); };
}

Json pod(Json annotations = Json::object(), Json resources = Json::object()) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", "vllm-0"}, {"namespace", "team-a"}, {"annotations", annotations}}},
          {"spec",
           {{"schedulerName", "kai-scheduler"},
            {"containers", Json::array({{{"name", "server"}, {"image", "vllm"}, {"resources", resources}}})}}}};
}

Json gpu_limit(int n) { return {{"limits", {{"nvidia.com/gpu", n}}}}; }

std::string validate(const Json& p, AdmissionOptions options = {}) {
  Decision d = decide(Hook::kPodValidate, "CREATE", p.dump(), options, fixed_suffix());
  return d.allowed ? "" : d.message;
}

/// The pod after the mutating webhook, by applying its JSON Patch to the original.
Json mutated(const Json& p, AdmissionOptions options = {}) {
  Decision d = decide(Hook::kPodMutate, "CREATE", p.dump(), options, fixed_suffix());
  EXPECT_TRUE(d.allowed) << d.message;
  if (d.patch.empty()) return p;
  return p.patch(Json::parse(d.patch));
}

TEST(PodValidation, AcceptsPlainAndWellFormedSharedPods) {
  EXPECT_EQ(validate(pod()), "");
  EXPECT_EQ(validate(pod({}, gpu_limit(2))), "");
  EXPECT_EQ(validate(pod({{"gpu-fraction", "0.5"}})), "");
  EXPECT_EQ(validate(pod({{"gpu-memory", "4096"}})), "");
  EXPECT_EQ(validate(pod({{"gpu-fraction", "0.25"}, {"gpu-fraction-num-devices", "2"}})), "");
  EXPECT_EQ(validate(pod({{"gpu-fraction", "0.5"}, {"mps", "true"}})), "");
}

TEST(PodValidation, RefusesEveryMalformedRequestWithAReason) {
  struct Case {
    Json pod;
    std::string expect;
  };
  const std::vector<Case> cases = {
      {pod({{"gpu-fraction", "1"}}), "gpu-fraction=\"1\""},
      {pod({{"gpu-fraction", "0"}}), "greater than 0"},
      {pod({{"gpu-fraction", "1.5"}}), "smaller than 1"},
      {pod({{"gpu-fraction", "half"}}), "gpu-fraction=\"half\""},
      {pod({{"gpu-fraction", "0.5x"}}), "gpu-fraction=\"0.5x\""},
      {pod({{"gpu-fraction", "nan"}}), "gpu-fraction=\"nan\""},
      {pod({{"gpu-fraction", ""}}), "gpu-fraction=\"\""},
      {pod({{"gpu-memory", "0"}}), "gpu-memory=\"0\""},
      {pod({{"gpu-memory", "-100"}}), "positive integer"},
      {pod({{"gpu-memory", "1.5"}}), "positive integer"},
      {pod({{"gpu-memory", "4096"}, {"gpu-fraction", "0.5"}}), "gpu-memory cannot be combined"},
      {pod({{"gpu-memory", "4096"}}, gpu_limit(1)), "gpu-memory cannot be combined"},
      {pod({{"gpu-fraction", "0.5"}}, gpu_limit(1)), "gpu-fraction cannot be combined"},
      {pod({{"gpu-fraction-num-devices", "2"}}), "needs gpu-fraction or gpu-memory"},
      {pod({{"gpu-fraction", "0.5"}, {"gpu-fraction-num-devices", "0"}}), "gpu-fraction-num-devices=\"0\""},
      {pod({{"mps", "true"}}), "MPS is only supported"},
      {pod({{"gpu-fraction", "0.5"}, {"gpu-fraction-container-name", "sidecar"}}), "no container of that name"},
  };
  for (const auto& c : cases) {
    const std::string why = validate(c.pod);
    EXPECT_NE(why.find(c.expect), std::string::npos) << c.pod["metadata"]["annotations"] << " -> \"" << why << "\"";
  }
}

TEST(PodValidation, WholeGpuLimitOnAnInitContainerCounts) {
  Json p = pod({{"gpu-fraction", "0.5"}});
  p["spec"]["initContainers"] = Json::array({{{"name", "warmup"}, {"resources", gpu_limit(1)}}});
  EXPECT_NE(validate(p), "");
}

TEST(PodValidation, SharingDisabledRefusesSharedPodsOnly) {
  AdmissionOptions off;
  off.gpu_sharing = false;
  EXPECT_NE(validate(pod({{"gpu-fraction", "0.5"}}), off).find("GPU sharing is disabled"), std::string::npos);
  EXPECT_NE(validate(pod({{"gpu-memory", "1000"}}), off).find("team-a/vllm-0"), std::string::npos);
  EXPECT_EQ(validate(pod({}, gpu_limit(1)), off), "");
}

TEST(PodValidation, PodsOfOtherSchedulersAreNotOurs) {
  Json p = pod({{"gpu-fraction", "7"}});
  p["spec"]["schedulerName"] = "default-scheduler";
  EXPECT_EQ(validate(p), "");
  EXPECT_EQ(mutated(p), p);
}

TEST(PodMutation, FractionPodGetsTheSharingChainsConfigMapsAndRuntimeClass) {
  Json p = pod({{"gpu-fraction", "0.7"}});
  p["metadata"]["ownerReferences"] = Json::array({{{"kind", "ReplicaSet"}, {"name", "vllm-7d9f"}}});
  const Json m = mutated(p);
  const std::string prefix = "vllm-7d9f-abcdefg-shared-gpu";
  EXPECT_EQ(m["metadata"]["annotations"]["runai/shared-gpu-configmap"], prefix);
  EXPECT_EQ(m["metadata"]["annotations"]["gpu-fraction"], "0.7");
  EXPECT_EQ(m["spec"]["runtimeClassName"], "nvidia");
  const Json& c = m["spec"]["containers"][0];
  ASSERT_EQ(c["env"].size(), 3u);
  std::vector<std::string> names;
  for (const auto& e : c["env"]) {
    names.push_back(e["name"]);
    EXPECT_EQ(e["valueFrom"]["configMapKeyRef"]["name"], prefix + "-0");
    EXPECT_EQ(e["valueFrom"]["configMapKeyRef"]["key"], e["name"]);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"NVIDIA_VISIBLE_DEVICES", "RUNAI_NUM_OF_GPUS", "GPU_PORTION"}));
  EXPECT_EQ(c["envFrom"], Json::parse(R"([{"configMapRef":{"name":")" + prefix + R"(-0-evar","optional":false}}])"));
  EXPECT_EQ(m["spec"]["volumes"],
            Json::parse(R"([{"name":")" + prefix + R"(-0-vol","configMap":{"name":")" + prefix + R"(-0"}}])"));
  // Everything else is untouched.
  EXPECT_EQ(m["spec"]["containers"][0]["image"], "vllm");
}

TEST(PodMutation, ExistingEntriesAreReplacedNotDuplicated) {
  Json p = pod({{"gpu-memory", "2000"}, {"runai/shared-gpu-configmap", "given-prefix"}});
  p["spec"]["containers"][0]["env"] = Json::array(
      {{{"name", "NVIDIA_VISIBLE_DEVICES"}, {"value", "all"}}, {{"name", "MODEL"}, {"value", "llama"}}});
  p["spec"]["volumes"] = Json::array({{{"name", "given-prefix-0-vol"}, {"emptyDir", Json::object()}},
                                      {{"name", "cache"}, {"emptyDir", Json::object()}}});
  p["spec"]["runtimeClassName"] = "custom";
  const Json m = mutated(p);
  EXPECT_EQ(m["metadata"]["annotations"]["runai/shared-gpu-configmap"], "given-prefix");
  EXPECT_EQ(m["spec"]["runtimeClassName"], "custom");
  const Json& env = m["spec"]["containers"][0]["env"];
  ASSERT_EQ(env.size(), 4u);
  EXPECT_EQ(env[0]["name"], "MODEL");
  EXPECT_EQ(env[1]["valueFrom"]["configMapKeyRef"]["name"], "given-prefix-0");
  ASSERT_EQ(m["spec"]["volumes"].size(), 2u);
  EXPECT_EQ(m["spec"]["volumes"][0]["name"], "cache");
  EXPECT_EQ(m["spec"]["volumes"][1]["configMap"]["name"], "given-prefix-0");
  // A second pass (a retried create) changes nothing.
  EXPECT_EQ(mutated(m), m);
}

TEST(PodMutation, NamedInitContainerGetsTheSharedGpu) {
  Json p = pod({{"gpu-fraction", "0.5"}, {"gpu-fraction-container-name", "prepare"}});
  p["spec"]["initContainers"] = Json::array({{{"name", "fetch"}}, {{"name", "prepare"}}});
  const Json m = mutated(p);
  const std::string prefix = m["metadata"]["annotations"]["runai/shared-gpu-configmap"];
  EXPECT_FALSE(m["spec"]["containers"][0].contains("env"));
  EXPECT_FALSE(m["spec"]["initContainers"][0].contains("env"));
  EXPECT_EQ(m["spec"]["initContainers"][1]["env"][0]["valueFrom"]["configMapKeyRef"]["name"], prefix + "-i1");
  EXPECT_EQ(m["spec"]["volumes"][0]["name"], prefix + "-i1-vol");
}

TEST(PodMutation, LongNamesStayWithinTheVolumeNameLimit) {
  Json p = pod({{"gpu-fraction", "0.5"}});
  p["metadata"]["name"] = std::string(200, 'x') + "-" + std::string(40, 'y');
  const Json m = mutated(p);
  const std::string volume = m["spec"]["volumes"][0]["name"];
  const std::string evar = m["spec"]["containers"][0]["envFrom"][0]["configMapRef"]["name"];
  EXPECT_LE(volume.size(), 63u);
  EXPECT_LE(evar.size(), 63u);
  EXPECT_EQ(volume.substr(0, 5), "xxxxx");
  // A cut right after a hyphen does not leave "--" behind.
  p["metadata"]["name"] = std::string(32, 'a') + "-bbbbbbbb";
  EXPECT_EQ(mutated(p)["metadata"]["annotations"]["runai/shared-gpu-configmap"],
            std::string(32, 'a') + "-abcdefg-shared-gpu");
}

TEST(PodMutation, GenerateNamePodsUseTheirPrefix) {
  Json p = pod({{"gpu-fraction", "0.5"}});
  p["metadata"].erase("name");
  p["metadata"]["generateName"] = "infer-";
  EXPECT_EQ(mutated(p)["metadata"]["annotations"]["runai/shared-gpu-configmap"], "infer-abcdefg-shared-gpu");
}

TEST(PodMutation, RuntimeClassOnlyForGpuPodsAndOnlyWhenConfigured) {
  EXPECT_EQ(mutated(pod({}, gpu_limit(1)))["spec"]["runtimeClassName"], "nvidia");
  EXPECT_FALSE(mutated(pod())["spec"].contains("runtimeClassName"));
  AdmissionOptions none;
  none.gpu_pod_runtime_class = "";
  EXPECT_FALSE(mutated(pod({}, gpu_limit(1)), none)["spec"].contains("runtimeClassName"));
  // A whole-GPU pod gets nothing else.
  const Json m = mutated(pod({}, gpu_limit(1)));
  EXPECT_FALSE(m["spec"]["containers"][0].contains("env"));
  EXPECT_FALSE(m["metadata"]["annotations"].contains("runai/shared-gpu-configmap"));
}

TEST(PodMutation, MutatingHookRefusesInvalidPodsInsteadOfPatchingThem) {
  Decision d = decide(Hook::kPodMutate, "CREATE", pod({{"gpu-fraction", "2"}}).dump(), {}, fixed_suffix());
  EXPECT_FALSE(d.allowed);
  EXPECT_TRUE(d.patch.empty());
}

TEST(QueueValidation, ResourcesAreRequired) {
  Json q = {{"apiVersion", "scheduling.run.ai/v2"}, {"kind", "Queue"}, {"metadata", {{"name", "team-a"}}},
            {"spec", {{"parentQueue", "org"}}}};
  Decision d = decide(Hook::kQueueValidate, "CREATE", q.dump(), {}, fixed_suffix());
  EXPECT_FALSE(d.allowed);
  EXPECT_NE(d.message.find("queue team-a: spec.resources is required"), std::string::npos) << d.message;
  q["spec"]["resources"] = {{"gpu", {{"quota", -1}, {"limit", -1}, {"overQuotaWeight", 1}}}};
  EXPECT_TRUE(decide(Hook::kQueueValidate, "UPDATE", q.dump(), {}, fixed_suffix()).allowed);
  q.erase("spec");
  EXPECT_FALSE(decide(Hook::kQueueValidate, "CREATE", q.dump(), {}, fixed_suffix()).allowed);
}

TEST(PodGroupValidation, SubgroupsMustFormATree) {
  auto check = [](const Json& subgroups) {
    Json pg = {{"kind", "PodGroup"}, {"metadata", {{"name", "pg"}}}, {"spec", {{"minMember", 1}, {"subGroups", subgroups}}}};
    Decision d = decide(Hook::kPodGroupValidate, "CREATE", pg.dump(), {}, fixed_suffix());
    return d.allowed ? std::string() : d.message;
  };
  EXPECT_EQ(check(Json::parse(R"([{"name":"workers","minMember":2},{"name":"gpu","parent":"workers","minMember":1}])")), "");
  EXPECT_NE(check(Json::parse(R"([{"name":"a"},{"name":"a"}])")).find("duplicate"), std::string::npos);
  EXPECT_NE(check(Json::parse(R"([{"name":"Workers"}])")).find("lower case"), std::string::npos);
  EXPECT_NE(check(Json::parse(R"([{"name":"a","parent":"ghost"}])")).find("parent \"ghost\""), std::string::npos);
  EXPECT_NE(check(Json::parse(R"([{"name":"a","parent":"b"},{"name":"b","parent":"a"}])")).find("cycle"),
            std::string::npos);
  EXPECT_NE(check(Json::parse(R"([{"name":"a","parent":"a"}])")).find("cycle"), std::string::npos);
  EXPECT_NE(check(Json::parse(R"([{"minMember":1}])")).find("name is required"), std::string::npos);
}

std::string base64_decode(const std::string& in) {
  std::string out(in.size(), '\0');
  const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(in.data()), static_cast<int>(in.size()));
  out.resize(static_cast<size_t>(n));
  while (!out.empty() && out.back() == '\0') out.pop_back();  // DecodeBlock counts padding bytes
  return out;
}

TEST(AdmissionReview, EchoesTheUidAndCarriesABase64JsonPatch) {
  Json p = pod({{"gpu-fraction", "0.2"}});
  Json request = {{"apiVersion", "admission.k8s.io/v1"},
                  {"kind", "AdmissionReview"},
                  {"request", {{"uid", "705ab4f5-6393-11e8-b7cc-42010a800002"}, {"operation", "CREATE"}, {"object", p}}}};
  bool bad = true;
  Json out = Json::parse(review(Hook::kPodMutate, request.dump(), {}, fixed_suffix(), &bad));
  EXPECT_FALSE(bad);
  EXPECT_EQ(out["apiVersion"], "admission.k8s.io/v1");
  EXPECT_EQ(out["kind"], "AdmissionReview");
  EXPECT_EQ(out["response"]["uid"], "705ab4f5-6393-11e8-b7cc-42010a800002");
  EXPECT_EQ(out["response"]["allowed"], true);
  EXPECT_EQ(out["response"]["patchType"], "JSONPatch");
  const Json patch = Json::parse(base64_decode(out["response"]["patch"]));
  EXPECT_EQ(p.patch(patch)["metadata"]["annotations"]["runai/shared-gpu-configmap"], "vllm-0-abcdefg-shared-gpu");

  request["request"]["object"]["metadata"]["annotations"]["gpu-fraction"] = "3";
  out = Json::parse(review(Hook::kPodValidate, request.dump(), {}, fixed_suffix(), &bad));
  EXPECT_EQ(out["response"]["allowed"], false);
  EXPECT_EQ(out["response"]["status"]["code"], 403);
  EXPECT_NE(out["response"]["status"]["message"].get<std::string>().find("gpu-fraction=\"3\""), std::string::npos);
  EXPECT_FALSE(out["response"].contains("patch"));

  request["request"]["operation"] = "DELETE";
  request["request"].erase("object");
  EXPECT_EQ(Json::parse(review(Hook::kPodValidate, request.dump(), {}, fixed_suffix()))["response"]["allowed"], true);
}

TEST(AdmissionReview, GarbageIsABadRequestNeverACrash) {
  bool bad = false;
  for (const std::string body : {"", "{", "[]", "{\"kind\":\"Pod\"}", "{\"kind\":\"AdmissionReview\"}",
                                 "{\"kind\":\"AdmissionReview\",\"request\":{\"object\":{}}}"}) {
    Json out = Json::parse(review(Hook::kPodMutate, body, {}, fixed_suffix(), &bad));
    EXPECT_TRUE(bad) << body;
    EXPECT_TRUE(out.contains("error")) << body;
  }
  // Every truncation and random byte flips of a valid review: an answer, never a crash.
  const std::string valid =
      Json{{"kind", "AdmissionReview"},
           {"apiVersion", "admission.k8s.io/v1"},
           {"request", {{"uid", "u"}, {"operation", "CREATE"}, {"object", pod({{"gpu-fraction", "0.5"}})}}}}
          .dump();
  std::mt19937 rng(7);
  for (size_t cut = 0; cut <= valid.size(); ++cut) {
    std::string body = valid.substr(0, cut);
    if (!body.empty() && cut % 3 == 0) body[rng() % body.size()] = static_cast<char>(rng() % 256);
    for (Hook hook : {Hook::kPodMutate, Hook::kPodValidate, Hook::kQueueValidate, Hook::kPodGroupValidate}) {
      const std::string out = review(hook, body, {}, fixed_suffix(), &bad);
      EXPECT_FALSE(out.empty());
    }
  }
  // Wrongly typed fields inside a well-formed review.
  for (const char* object : {R"({"metadata":{"annotations":{"gpu-fraction":0.5}},"spec":{"schedulerName":"kai-scheduler","containers":[{}]}})",
                             R"({"metadata":[],"spec":{"schedulerName":"kai-scheduler","containers":{}}})",
                             R"({"metadata":{"annotations":{"gpu-fraction":"0.5"}},"spec":{"schedulerName":"kai-scheduler","containers":[]}})",
                             R"({"metadata":[],"spec":{"schedulerName":"kai-scheduler","containers":[5]}})",
                             R"({"metadata":{"annotations":{"gpu-fraction":"0.5"}},"spec":{"schedulerName":"kai-scheduler","containers":[5]}})",
                             R"({"metadata":{"annotations":{"gpu-fraction":"0.5"}},"spec":{"schedulerName":"kai-scheduler","containers":[{"name":"a"}],"volumes":{"a":1}}})",
                             R"({"spec":{"schedulerName":"kai-scheduler","subGroups":7,"volumes":3,"containers":[{"env":5,"envFrom":"x"}]},"metadata":{"annotations":{"gpu-memory":"10"}}})"}) {
    for (Hook hook : {Hook::kPodMutate, Hook::kPodValidate, Hook::kQueueValidate, Hook::kPodGroupValidate}) {
      Decision d = decide(hook, "CREATE", object, {}, fixed_suffix());
      (void)d;
    }
  }
}

TEST(RandomSuffix, IsLowerCaseAlphanumericOfTheAskedLength) {
  auto random = system_random_suffix();
  const std::string s = random(7);
  ASSERT_EQ(s.size(), 7u);
  for (char ch : s) EXPECT_TRUE((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9')) << s;
}

}  // namespace
}  // namespace kai::admission
