// Counterfactual replay of a daemon's log (docs/counterfactual-replay.md), end to end against
// kai-apiserver: with the recorded configuration it reproduces what happened (every pod bound in the
// same cycle on the same node, the same evictions, the same waits), through whole GPUs, a shared
// GPU with its reservation pod, completions, a user's deletion and a reclaim; with other queues the
// command line reports both worlds.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <thread>

#include "k8s/client/kube_client.hpp"
#include "tests/daemon/cluster_fixture.hpp"
#include "tools/kai-log/counterfactual.hpp"
#include "tools/kai-log/counterfactual_report.hpp"

namespace kai::e2e {
namespace {

class CounterfactualReplay : public DaemonTest {
 protected:
  void SetUp() override {
    cluster_.namespace_("team-a");
    cluster_.namespace_("team-b");
    cluster_.namespace_("kai-resource-reservation");
    cluster_.node("n1", 4);
    cluster_.node("n2", 4);
    cluster_.queue("default", "", -1);
    cluster_.queue("team-a", "default", 4);
    cluster_.queue("team-b", "default", 4);
  }

  /// Marks a running pod Succeeded, as its kubelet would when its containers exit 0.
  void complete(const std::string& ns, const std::string& name) {
    k8s::KubeClient client(std::move(k8s::resolve_cluster_config(cluster_.server->kubeconfig_path())).value());
    auto r = client.merge_patch("/api/v1/namespaces/" + ns + "/pods/" + name + "/status",
                                Json{{"status", {{"phase", "Succeeded"}}}}.dump());
    ASSERT_TRUE(r.ok()) << r.describe();
  }

  bool all_bound(const std::string& ns, const std::vector<std::string>& names) {
    for (const auto& n : names)
      if (!bound(ns, n)) return false;
    return true;
  }

  kailog::CounterfactualResult counterfactual(const kailog::CounterfactualOptions& options) {
    storage::EventLogOptions o;
    o.read_only = true;
    auto log = storage::EventLog::open(cluster_.dir + "/log", o);
    EXPECT_TRUE(log.is_ok()) << log.message();
    std::ostringstream err;
    auto r = kailog::run_counterfactual(*log.value(), options, err);
    EXPECT_TRUE(r) << r.message() << err.str();
    return r ? std::move(r).value() : kailog::CounterfactualResult{};
  }
};

TEST_F(CounterfactualReplay, TheRecordedConfigurationReproducesWhatHappened) {
  start_daemon(nullptr);
  std::vector<std::string> a;
  for (int i = 0; i < 7; ++i) {
    a.push_back("a-" + std::to_string(i));
    cluster_.create(cluster_.pod("team-a", a.back(), "team-a", 1));
  }
  cluster_.create(cluster_.pod("team-a", "shared", "team-a", 0, "", {{"gpu-fraction", "0.5"}}));
  a.push_back("shared");
  ASSERT_TRUE(Cluster::eventually([&] { return all_bound("team-a", a); })) << "team-a's pods did not all bind";
  complete("team-a", "a-0");
  complete("team-a", "a-1");
  ASSERT_TRUE(cluster_.server->delete_object("v1", "Pod", "team-a", "a-2"));
  // team-b asks for its 4 guaranteed GPUs: 2 completed and 1 deleted leave 3, 4 taken by team-a's
  // borrowed pods: a reclaim evicts one.
  const std::vector<std::string> b = {"b-0", "b-1", "b-2", "b-3"};
  for (const auto& n : b) cluster_.create(cluster_.pod("team-b", n, "team-b", 1));
  ASSERT_TRUE(Cluster::eventually([&] { return all_bound("team-b", b); })) << "team-b's pods did not all bind";
  complete("team-b", "b-0");
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // a few cycles after the completion
  stop_and_replay();

  const auto result = counterfactual({});
  const auto report = kailog::summarize(result);
  ASSERT_GE(result.cycles, 3u);
  uint64_t evicted = 0;
  for (const auto& p : result.pods) {
    SCOPED_TRACE(p.key);
    ASSERT_TRUE(p.recorded.bind_ms.has_value()) << "every pod bound in the recording";
    EXPECT_EQ(p.counterfactual.node, p.recorded.node);
    EXPECT_EQ(p.counterfactual.bind_cycle, p.recorded.bind_cycle);
    EXPECT_EQ(p.counterfactual.bind_ms, p.recorded.bind_ms);
    EXPECT_EQ(to_string(p.counterfactual.end), to_string(p.recorded.end));
    EXPECT_EQ(p.counterfactual.end_ms, p.recorded.end_ms);
    if (p.recorded.end == kailog::PodEnd::kEvicted) ++evicted;
  }
  EXPECT_EQ(result.pods.size(), 12u);
  EXPECT_EQ(evicted, 1u) << "the reclaim";
  EXPECT_EQ(report.placed_differently, 0u);
  EXPECT_EQ(result.added_cycles, 0u) << "nothing finishes in the simulation that did not in the recording";
  for (const auto& q : report.queues) {
    SCOPED_TRACE(q.queue);
    EXPECT_DOUBLE_EQ(q.counterfactual.gpu_hours, q.recorded.gpu_hours);
    EXPECT_DOUBLE_EQ(q.counterfactual.wait_p95_s, q.recorded.wait_p95_s);
  }

  // Other queues through the command line: team-b may hold nothing (limit 0).
  const std::string queues = cluster_.dir + "/queues.yaml";
  std::ofstream(queues) << R"(apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: team-b}
spec:
  parentQueue: default
  resources:
    gpu: {quota: 0, limit: 0, overQuotaWeight: 1}
    cpu: {quota: -1, limit: -1, overQuotaWeight: 1}
    memory: {quota: -1, limit: -1, overQuotaWeight: 1}
)";
  const std::string table = run_kai_log("--log-dir " + cluster_.dir + "/log replay --queues " + queues);
  EXPECT_NE(table.find("team-b"), std::string::npos) << table;
  EXPECT_NE(table.find("Pods placed differently"), std::string::npos) << table;
  const std::string json = run_kai_log("--log-dir " + cluster_.dir + "/log replay --queues " + queues + " --format json");
  const auto j = Json::parse(json.substr(json.find('{')), nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << json;
  ASSERT_EQ(j["queues"].size(), 2u) << json;
  for (const auto& q : j["queues"]) {
    // team-b binds nothing, so it reclaims nothing: team-a keeps every pod it ran.
    EXPECT_EQ(q["counterfactual"]["evictions"], 0) << q.dump();
    EXPECT_EQ(q["recorded"]["evictions"], q["queue"] == "team-a" ? 1 : 0) << q.dump();
    if (q["queue"] == "team-b") {
      EXPECT_EQ(q["counterfactual"]["bound"], 0) << q.dump();
      EXPECT_EQ(q["counterfactual"]["neverBound"], 4) << q.dump();
    }
  }
}

}  // namespace
}  // namespace kai::e2e
