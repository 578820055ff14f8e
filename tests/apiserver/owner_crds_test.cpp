// The owner-workload CRDs of tests/fixtures/crds created through the API next to deploy/crds, and the
// fields the pod groupers read surviving a write: a real server prunes whatever a structural schema
// does not declare, so a field missing from a schema would vanish on a real cluster without an error.

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "k8s/model/json_codec.hpp"
#include "tests/apiserver/fixture.hpp"

namespace kai::apiserver {
namespace {

namespace fs = std::filesystem;
using OwnerCrds = ApiServerTest;

Json read_yaml(const fs::path& file) {
  std::ifstream in(file);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto j = model::yaml_to_json(text);
  EXPECT_TRUE(j.is_ok()) << file << ": " << j.message();
  return j.is_ok() ? j.value() : Json();
}

/// A JobSet as the Kubeflow Trainer makes one: two replicated Jobs, started in order, suspended.
Json jobset() {
  const Json job_template = {
      {"metadata", {{"labels", {{"app", "train"}}}, {"annotations", {{"kai.scheduler/topology", "t"}}}}},
      {"spec",
       {{"parallelism", 2},
        {"completions", 2},
        {"backoffLimit", 0},
        {"template", {{"spec", {{"containers", {{{"name", "c"}, {"image", "busybox"}}}}}}}}}}};
  return {{"apiVersion", "jobset.x-k8s.io/v1alpha2"},
          {"kind", "JobSet"},
          {"metadata", {{"name", "js"}}},
          {"spec",
           {{"replicatedJobs",
             {{{"name", "driver"}, {"replicas", 1}, {"template", job_template}},
              {{"name", "workers"}, {"replicas", 3}, {"template", job_template}}}},
            {"startupPolicy", {{"startupPolicyOrder", "InOrder"}}},
            {"suspend", true},
            {"network", {{"enableDNSHostnames", true}}}}},
          {"undeclared", "pruned"}};
}

Json pytorchjob() {
  const Json replica = {{"replicas", 4},
                        {"restartPolicy", "OnFailure"},
                        {"template",
                         {{"metadata", {{"labels", {{"team", "a"}}}}},
                          {"spec", {{"containers", {{{"name", "pytorch"}, {"image", "busybox"}}}}}}}}};
  return {{"apiVersion", "kubeflow.org/v1"},
          {"kind", "PyTorchJob"},
          {"metadata", {{"name", "pt"}}},
          {"spec",
           {{"pytorchReplicaSpecs", {{"Master", replica}, {"Worker", replica}}},
            {"runPolicy",
             {{"cleanPodPolicy", "None"},
              {"schedulingPolicy", {{"minAvailable", 3}, {"queue", "team-a"}, {"priorityClass", "train"}}}}},
            {"elasticPolicy", {{"minReplicas", 1}, {"maxReplicas", 8}, {"rdzvBackend", "c10d"}}}}}};
}

/// A PodGroup with KAI v0.17's fields: minimums of satisfied subgroups, a subgroup that may stay empty,
/// a staleness grace period and a preemption delay.
Json podgroup() {
  return {{"apiVersion", "scheduling.run.ai/v2alpha2"},
          {"kind", "PodGroup"},
          {"metadata", {{"name", "pg"}}},
          {"spec",
           {{"minSubGroup", 1},
            {"queue", "team-a"},
            {"stalenessGracePeriod", "30s"},
            {"preemptionDelay", "5m"},
            {"subGroups",
             {{{"name", "workers"}, {"minSubGroup", 1}},
              {{"name", "optional"}, {"parent", "workers"}, {"minMember", 0}},
              {{"name", "required"}, {"parent", "workers"}, {"minMember", 2}}}}}}};
}

TEST_F(OwnerCrds, FixtureCrdsServeAndKeepGrouperFields) {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(source_dir() + "/tests/fixtures/crds")) {
    if (e.path().extension() == ".yaml") files.push_back(e.path());
  }
  EXPECT_EQ(files.size(), 13u);
  for (const auto& f : files) {
    const Json crd = read_yaml(f);
    auto c = req("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd);
    ASSERT_EQ(c.status, 201) << f << ": " << c.body;
    const Json& spec = crd["spec"];
    const std::string list = "/apis/" + spec["group"].get<std::string>() + "/" +
                             spec["versions"][0]["name"].get<std::string>() + "/namespaces/default/" +
                             spec["names"]["plural"].get<std::string>();
    EXPECT_EQ(req("GET", list).status, 200) << list;
  }

  const std::string jobsets = "/apis/jobset.x-k8s.io/v1alpha2/namespaces/default/jobsets";
  auto js = req("POST", jobsets, jobset());
  ASSERT_EQ(js.status, 201) << js.body;
  Json got = get(jobsets + "/js");
  Json want = jobset();
  want.erase("undeclared");  // the only field no schema keeps: the schema is applied
  EXPECT_EQ(got["spec"], want["spec"]);
  EXPECT_FALSE(got.contains("undeclared"));
  Json bad = jobset();
  bad["metadata"]["name"] = "bad";
  bad["spec"]["startupPolicy"]["startupPolicyOrder"] = "Sometimes";
  EXPECT_EQ(req("POST", jobsets, bad).status, 422) << "the declared enum is checked";

  const std::string pytorchjobs = "/apis/kubeflow.org/v1/namespaces/default/pytorchjobs";
  auto pt = req("POST", pytorchjobs, pytorchjob());
  ASSERT_EQ(pt.status, 201) << pt.body;
  EXPECT_EQ(get(pytorchjobs + "/pt")["spec"], pytorchjob()["spec"]);

  const std::string podgroups = "/apis/scheduling.run.ai/v2alpha2/namespaces/default/podgroups";
  auto pg = req("POST", podgroups, podgroup());
  ASSERT_EQ(pg.status, 201) << pg.body;
  const Json pg_spec = get(podgroups + "/pg")["spec"];
  EXPECT_EQ(pg_spec, podgroup()["spec"]);
  EXPECT_EQ(pg_spec["minSubGroup"], 1);
  EXPECT_EQ(pg_spec["stalenessGracePeriod"], "30s");
  EXPECT_EQ(pg_spec["subGroups"][0]["minSubGroup"], 1);
  EXPECT_EQ(pg_spec["subGroups"][1]["minMember"], 0);
  Json negative = podgroup();
  negative["metadata"]["name"] = "negative";
  negative["spec"]["subGroups"][1]["minMember"] = -1;
  EXPECT_EQ(req("POST", podgroups, negative).status, 422);
}

}  // namespace
}  // namespace kai::apiserver
