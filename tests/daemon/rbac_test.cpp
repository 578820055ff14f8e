// deploy/'s RBAC against what the daemon really calls: the kustomize base is applied to kai-apiserver,
// kai-scheduler runs as deployed (leader election, webhooks with the Secret's certificate), schedules
// whole-GPU, fractional, gang and reclaiming workloads, and every request the server saw must be
// allowed to the kai-scheduler service account.

#include "actors/daemon/daemon.hpp"
#include "tests/daemon/cluster_fixture.hpp"
#include "tests/deploy/manifests.hpp"
#include "tests/deploy/rbac_rules.hpp"

namespace kai::e2e {
namespace {

std::string describe(const apiserver::RequestAttributes& a) {
  return a.verb + " " + (a.group.empty() ? "" : a.group + "/") + a.resource +
         (a.ns.empty() ? "" : " in " + a.ns) + (a.name.empty() ? "" : " named " + a.name);
}

TEST(DeployedRbac, CoversEveryCallTheDaemonMakes) {
  Cluster c;
  std::vector<Json> objects;
  ASSERT_NO_FATAL_FAILURE(deploy::base_objects(source_dir(), objects));
  for (const auto& o : objects) {
    if (o.value("kind", "") != "CustomResourceDefinition") c.create(o);  // the Cluster loaded deploy/crds
  }
  c.namespace_("team-a");
  c.namespace_("team-b");
  c.node("n1", 4);
  c.queue("team-a", "default", 2, 100);
  c.queue("team-b", "default", 2, 100);

  daemon::DaemonOptions o = c.daemon_options();
  o.metrics_port = 1;
  o.webhook_port = 1;
  o.leader_elect = true;
  o.identity = "kai-scheduler-0";
  o.lease_duration = std::chrono::seconds(2);
  o.renew_deadline = std::chrono::milliseconds(1500);
  o.retry_period = std::chrono::milliseconds(250);
  daemon::Daemon d(o);
  c.server->reset_request_counts();  // from here on, only the daemon talks to the server
  ASSERT_TRUE(d.start().is_ok());

  auto bound = [&](const std::string& ns, const std::string& name) {
    return !Cluster::node_of(c.get_pod(ns, name)).empty();
  };
  // team-a fills the node (a fraction pod through the sharing chain, whole GPUs), a gang waits.
  c.create(c.pod("team-a", "shared", "team-a", 0, "train", {{"gpu-fraction", "0.5"}}));
  for (int i = 0; i < 3; ++i) c.create(c.pod("team-a", "whole-" + std::to_string(i), "team-a", 1, "train"));
  ASSERT_TRUE(Cluster::eventually([&] {
    return bound("team-a", "shared") && bound("team-a", "whole-0") && bound("team-a", "whole-1") &&
           bound("team-a", "whole-2");
  }));
  c.pod_group("team-a", "gang", "team-a", 2);
  for (int i = 0; i < 2; ++i) {
    c.create(
        c.pod("team-a", "gang-" + std::to_string(i), "team-a", 1, "train", {{"pod-group-name", "gang"}}));
  }
  // A PodGroup that starts: its last start is written onto it (the PodGroup writer's patch).
  c.pod_group("team-b", "one", "team-b", 1);
  c.create(c.pod("team-b", "one-0", "team-b", 0, "train", {{"pod-group-name", "one"}}));
  ASSERT_TRUE(Cluster::eventually([&] {
    auto list = c.server->list_objects("scheduling.run.ai/v2alpha2", "PodGroup", "team-b");
    return list.is_ok() && list.value().find("kai.scheduler/last-start-timestamp") != std::string::npos;
  }));
  // team-b reclaims its quota of 2 GPUs from team-a.
  c.create(c.pod("team-b", "reclaimer", "team-b", 2, "train"));
  ASSERT_TRUE(Cluster::eventually([&] { return bound("team-b", "reclaimer"); }, 60s));
  ASSERT_TRUE(Cluster::eventually(
      [&] { return !Cluster::condition_message(c.get_pod("team-a", "gang-0")).empty(); }));
  d.stop();
  expect_replay_matches(c.dir + "/log");

  const auto seen = c.server->requests_seen();
  std::set<std::string> verbs;
  for (const auto& a : seen) verbs.insert(a.verb + " " + a.resource);
  // The workload above exercised the binder, the sharing chain, evictions, statuses and the lease.
  for (const std::string want :
       {"create pods/binding", "create pods", "delete pods", "patch pods", "patch pods/status",
        "update leases", "create secrets", "patch mutatingwebhookconfigurations"}) {
    EXPECT_TRUE(verbs.count(want)) << "the scenario never made a \"" << want << "\" call";
  }
  const auto rules = deploy::RbacRules::for_service_account(objects, "kai-scheduler", "kai-scheduler");
  for (const auto& a : seen) {
    EXPECT_TRUE(rules.allows(a.verb, a.group, a.resource, a.ns, a.name))
        << "deploy/base/rbac.yaml does not allow a call the daemon made: " << describe(a);
  }
}

}  // namespace
}  // namespace kai::e2e
