// deploy/ against the test API server: every manifest of the kustomize base is accepted, the RBAC
// rules are least-privilege, the StatefulSet has the shape docs/configuration.md "Deployment" describes, and (where a
// kubectl >= 1.27 is installed) every overlay renders with `kubectl kustomize` and applies with
// `kubectl apply`.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "k8s/apiserver/api_server.hpp"
#include "k8s/model/json_codec.hpp"
#include "tests/deploy/manifests.hpp"
#include "tests/deploy/rbac_rules.hpp"
#include "tests/shell/kubectl.hpp"

namespace kai::deploy {
namespace {

std::string source_dir() {
  const char* env = std::getenv("KAI_SOURCE_DIR");
  return env != nullptr ? env : KAI_DEFAULT_SOURCE_DIR;
}

class DeployBase : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(base_objects(source_dir(), objects_));
  }
  std::vector<Json> of_kind(const std::string& kind) const {
    std::vector<Json> out;
    for (const auto& o : objects_) {
      if (o.value("kind", "") == kind) out.push_back(o);
    }
    return out;
  }
  const Json& statefulset() const {
    for (const auto& o : objects_) {
      if (o.value("kind", "") == "StatefulSet") return o;
    }
    static const Json none;
    return none;
  }
  std::vector<Json> objects_;
};

TEST_F(DeployBase, EveryManifestIsAcceptedByTheApiServer) {
  apiserver::ServerOptions options;  // no CRDs preloaded: the base installs its own
  apiserver::ApiServer server(options);
  ASSERT_TRUE(server.start().is_ok());
  ASSERT_GE(objects_.size(), 20u);
  for (const auto& o : objects_) {
    auto created = server.create_object(o.dump());
    EXPECT_TRUE(created.is_ok()) << o.value("kind", "") << " " << o["metadata"].value("name", "") << ": "
                                 << created.message();
  }
}

TEST_F(DeployBase, ReservationNamespaceAndServiceAccountAreShipped) {
  std::set<std::string> namespaces;
  for (const auto& ns : of_kind("Namespace")) namespaces.insert(ns["metadata"]["name"]);
  EXPECT_TRUE(namespaces.count("kai-scheduler"));
  EXPECT_TRUE(namespaces.count("kai-resource-reservation"));
  bool reservation_sa = false;
  for (const auto& sa : of_kind("ServiceAccount")) {
    reservation_sa |= sa["metadata"]["name"] == "kai-resource-reservation" &&
                      sa["metadata"]["namespace"] == "kai-resource-reservation";
  }
  EXPECT_TRUE(reservation_sa);
}

TEST_F(DeployBase, PriorityClassesAreKais) {
  std::map<std::string, int> values;
  for (const auto& pc : of_kind("PriorityClass")) values[pc["metadata"]["name"]] = pc["value"];
  EXPECT_EQ(values, (std::map<std::string, int>{
                        {"train", 50}, {"build-preemptible", 75}, {"build", 100}, {"inference", 125}}));
}

TEST_F(DeployBase, RbacHasNoWildcards) {
  for (const std::string kind : {"ClusterRole", "Role"}) {
    for (const auto& role : of_kind(kind)) {
      for (const auto& rule : role["rules"]) {
        for (const char* field : {"apiGroups", "resources", "verbs"}) {
          for (const auto& v : rule.value(field, Json::array())) {
            EXPECT_NE(v.get<std::string>(), "*") << kind << " " << role["metadata"]["name"] << " " << field;
          }
        }
        EXPECT_FALSE(rule.contains("nonResourceURLs")) << role["metadata"]["name"];
      }
    }
  }
}

TEST_F(DeployBase, RbacCoversTheSchedulersCallsAndNothingBroader) {
  const RbacRules rules = RbacRules::for_service_account(objects_, "kai-scheduler", "kai-scheduler");
  // Calls the daemon makes (docs/security.md "RBAC").
  EXPECT_TRUE(rules.allows("watch", "", "pods", "team-a"));
  EXPECT_TRUE(rules.allows("create", "", "pods/binding", "team-a"));
  EXPECT_TRUE(rules.allows("delete", "", "pods", "team-a"));
  EXPECT_TRUE(rules.allows("create", "", "pods", "kai-resource-reservation"));
  EXPECT_TRUE(rules.allows("get", "", "namespaces", "", "kai-resource-reservation"));
  EXPECT_TRUE(
      rules.allows("get", "", "serviceaccounts", "kai-resource-reservation", "kai-resource-reservation"));
  EXPECT_TRUE(rules.allows("update", "coordination.k8s.io", "leases", "kai-scheduler"));
  EXPECT_TRUE(rules.allows("get", "", "namespaces", "", "kai-scheduler"));
  EXPECT_TRUE(rules.allows("patch", "scheduling.run.ai", "podgroups/status", "team-a"));
  EXPECT_TRUE(rules.allows("create", "events.k8s.io", "events", "team-a"));
  EXPECT_TRUE(rules.allows("get", "", "secrets", "kai-scheduler", "kai-scheduler-webhook-cert"));
  EXPECT_TRUE(rules.allows("patch", "admissionregistration.k8s.io", "mutatingwebhookconfigurations", "",
                           "kai-scheduler"));
  // Least privilege: no pod creation in user namespaces, no leases elsewhere, no secrets, no node
  // writes.
  EXPECT_FALSE(rules.allows("create", "", "pods", "team-a"));
  EXPECT_FALSE(rules.allows("update", "coordination.k8s.io", "leases", "kube-system"));
  EXPECT_FALSE(rules.allows("get", "", "secrets", "kai-scheduler"));
  EXPECT_FALSE(rules.allows("get", "", "secrets", "kai-scheduler", "someone-elses-secret"));
  EXPECT_FALSE(rules.allows("get", "", "secrets", "team-a", "kai-scheduler-webhook-cert"));
  EXPECT_FALSE(rules.allows("patch", "admissionregistration.k8s.io", "mutatingwebhookconfigurations", "",
                            "another-webhook"));
  EXPECT_FALSE(rules.allows("create", "", "namespaces", ""));
  EXPECT_FALSE(rules.allows("patch", "", "nodes", ""));
  // Namespaces are read (their labels are pod affinity's namespaceSelector input), never written.
  EXPECT_TRUE(rules.allows("watch", "", "namespaces", ""));
  EXPECT_FALSE(rules.allows("patch", "", "namespaces", "", "team-a"));
  EXPECT_FALSE(rules.allows("delete", "scheduling.run.ai", "queues", ""));
}

TEST_F(DeployBase, WebhooksPointAtTheSchedulersServiceWithTheirDocumentedFailurePolicies) {
  std::map<std::string, std::string> policy_by_path;
  for (const std::string kind : {"MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"}) {
    for (const auto& config : of_kind(kind)) {
      for (const auto& hook : config["webhooks"]) {
        const Json& svc = hook["clientConfig"]["service"];
        EXPECT_EQ(svc["name"], "kai-scheduler-webhook");
        EXPECT_EQ(svc["namespace"], "kai-scheduler");
        policy_by_path[svc["path"]] = hook["failurePolicy"];
      }
    }
  }
  EXPECT_EQ(policy_by_path, (std::map<std::string, std::string>{{"/mutate-pods", "Ignore"},
                                                                {"/validate-pods", "Ignore"},
                                                                {"/validate-queues", "Fail"},
                                                                {"/validate-podgroups", "Fail"}}));
  bool service = false;
  for (const auto& s : of_kind("Service")) service |= s["metadata"]["name"] == "kai-scheduler-webhook";
  EXPECT_TRUE(service);
}

TEST_F(DeployBase, StatefulSetRunsTwoElectingReplicasWithAVolumeEach) {
  const Json& sts = statefulset();
  ASSERT_FALSE(sts.is_null());
  EXPECT_EQ(sts["spec"]["replicas"], 2);
  const Json& pod = sts["spec"]["template"]["spec"];
  EXPECT_EQ(pod["serviceAccountName"], "kai-scheduler");
  EXPECT_EQ(pod["securityContext"]["runAsNonRoot"], true);
  const Json& c = pod["containers"][0];
  EXPECT_EQ(c["securityContext"]["readOnlyRootFilesystem"], true);
  std::set<std::string> args(c["args"].begin(), c["args"].end());
  EXPECT_TRUE(args.count("--leader-elect"));
  bool log_dir_on_claim = false;
  for (const auto& claim : sts["spec"]["volumeClaimTemplates"]) {
    for (const auto& m : c["volumeMounts"]) {
      if (m["name"] == claim["metadata"]["name"] && args.count("--log-dir=" + m["mountPath"].get<std::string>() + "/log")) {
        log_dir_on_claim = true;
      }
    }
  }
  EXPECT_TRUE(log_dir_on_claim) << "the event log must live on the replica's own volume";
}

// ---------------------------------------------------------------------------------------- kubectl

using Cmd = test_shell::CommandRun;
using test_shell::kubectl_unusable;
using test_shell::run;

class DeployOverlay : public ::testing::TestWithParam<std::pair<std::string, std::string>> {};

TEST_P(DeployOverlay, RendersAndAppliesWithKubectl) {
  if (std::string why = kubectl_unusable(); !why.empty()) GTEST_SKIP() << why;
  const auto& [overlay, expected_arg] = GetParam();
  // As on a real cluster, the CRDs are installed before the objects that use them (README:
  // `kubectl apply -k deploy/crds` first); the overlay then applies them again unchanged.
  apiserver::ServerOptions options;
  options.crd_dir = source_dir() + "/deploy/crds";
  apiserver::ApiServer server(options);
  ASSERT_TRUE(server.start().is_ok());
  const std::string dir = fs::path(server.kubeconfig_path()).parent_path().string();
  const std::string kubectl = "kubectl --kubeconfig " + server.kubeconfig_path() + " --cache-dir " + dir + "/cache ";
  const std::string path = source_dir() + "/deploy/overlays/" + overlay;

  Cmd rendered = run(kubectl + "kustomize " + path + " > " + dir + "/rendered.yaml");
  ASSERT_EQ(rendered.code, 0) << rendered.out;
  Cmd applied = run(kubectl + "apply -f " + dir + "/rendered.yaml");
  ASSERT_EQ(applied.code, 0) << applied.out;
  EXPECT_NE(applied.out.find("statefulset.apps/kai-scheduler created"), std::string::npos) << applied.out;
  EXPECT_NE(applied.out.find("queue.scheduling.run.ai/test created"), std::string::npos) << applied.out;

  Cmd args = run(kubectl + "get statefulset -n kai-scheduler kai-scheduler -o jsonpath={.spec.template.spec.containers[0].args}");
  ASSERT_EQ(args.code, 0) << args.out;
  if (!expected_arg.empty()) {
    EXPECT_NE(args.out.find(expected_arg), std::string::npos) << args.out;
  }
  // Applying again changes nothing and fails nothing (kubectl apply is how upgrades are done).
  Cmd again = run(kubectl + "apply -f " + dir + "/rendered.yaml");
  EXPECT_EQ(again.code, 0) << again.out;
}

INSTANTIATE_TEST_SUITE_P(Overlays, DeployOverlay,
                         ::testing::Values(std::pair<std::string, std::string>{"default", "--leader-elect"},
                                           std::pair<std::string, std::string>{"no-gpu-sharing", "--gpu-sharing=false"},
                                           std::pair<std::string, std::string>{"nvidia-runtime",
                                                                               "--reservation-runtime-class=nvidia"}),
                         [](const auto& info) {
                           std::string name = info.param.first;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

}  // namespace
}  // namespace kai::deploy
