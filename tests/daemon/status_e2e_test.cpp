// The statuses users read with kubectl, written by the daemon against kai-apiserver as KAI's
// controllers write them (docs/status.md): a gang that cannot fit has schedulingConditions with a
// readable reason, a bound group has resourcesStatus.allocated, its queue has status.allocated and
// requested, and its parent lists it in childQueues; /metrics has the queue-controller series; a
// restart rewrites nothing that is already right; replay agrees (DaemonTest's TearDown).
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <thread>

#include "k8s/http/http_client.hpp"
#include "tests/daemon/cluster_fixture.hpp"
#include "tests/daemon/daemon_harness.hpp"

namespace kai::e2e {
namespace {

using Json = nlohmann::json;

class StatusDaemon : public DaemonTest {
 protected:
  void SetUp() override {
    cluster_.namespace_("team-a");
    cluster_.test_queues();
    cluster_.node("n1", 4);
  }
  /// Starts (or restarts on the same log) the daemon with its metrics port.
  void start() {
    start_daemon([](daemon::DaemonOptions& o) { o.metrics_port = 1; });  // ephemeral
    if (!daemon_) return;
    http::Endpoint ep;
    ep.port = daemon_->metrics_port();
    ep.tls = false;
    client_ = std::make_unique<http::HttpClient>(ep);
  }
  void restart() {
    daemon_->stop();
    daemon_.reset();
    start();
  }
  std::string metrics_text() { return client_->request("GET", "/metrics").body; }
  /// PodGroup and Queue status patches the API server has served so far.
  uint64_t status_patches() {
    uint64_t n = 0;
    for (const auto& [what, count] : cluster_.server->request_counts()) {
      const bool ours = what.find("podgroups") != std::string::npos || what.find("queues") != std::string::npos;
      if (what.rfind("patch ", 0) == 0 && ours && what.find("/status") != std::string::npos) n += count;
    }
    return n;
  }
  Json read(const std::string& api_version, const std::string& kind, const std::string& ns, const std::string& name) {
    auto r = cluster_.server->get_object(api_version, kind, ns, name);
    return r.is_ok() ? Json::parse(r.value()) : Json();
  }
  /// PodGroup `name` of minMember `n` in queue test, with `n` pods of `gpus` GPUs each.
  void gang(const std::string& name, int n, int gpus) {
    cluster_.pod_group("team-a", name, "test", n);
    for (int i = 0; i < n; ++i) {
      cluster_.create(cluster_.pod("team-a", name + "-" + std::to_string(i), "test", gpus, "",
                                   {{"pod-group-name", name}}));
    }
  }
  /// The five fields the issue names, once all are as expected.
  bool five_of_five(std::string* missing) {
    const Json big = read("scheduling.run.ai/v2alpha2", "PodGroup", "team-a", "big");
    const Json fits = read("scheduling.run.ai/v2alpha2", "PodGroup", "team-a", "fits");
    const Json test = read("scheduling.run.ai/v2", "Queue", "", "test");
    const Json parent = read("scheduling.run.ai/v2", "Queue", "", "default");
    auto at = [](const Json& j, const Json::json_pointer& p) { return j.is_object() && j.contains(p) ? j.at(p) : Json::object(); };
    const Json cond = at(big, "/status/schedulingConditions/0"_json_pointer);
    std::vector<std::string> gaps;
    if (cond.value("type", "") != "UnschedulableOnNodePool" || cond.value("message", "").empty())
      gaps.push_back("big: schedulingConditions " + cond.dump());
    if (at(fits, "/status/resourcesStatus/allocated/nvidia.com~1gpu"_json_pointer) != "2")
      gaps.push_back("fits: resourcesStatus " + at(fits, "/status"_json_pointer).dump());
    if (at(test, "/status/allocated/nvidia.com~1gpu"_json_pointer) != "2")
      gaps.push_back("test: allocated " + at(test, "/status"_json_pointer).dump());
    if (at(test, "/status/requested/nvidia.com~1gpu"_json_pointer) != "10")
      gaps.push_back("test: requested " + at(test, "/status"_json_pointer).dump());
    if (at(parent, "/status/childQueues"_json_pointer) != Json::array({"test"}))
      gaps.push_back("default: childQueues " + at(parent, "/status"_json_pointer).dump());
    if (missing != nullptr) {
      missing->clear();
      for (const auto& g : gaps) *missing += g + "; ";
    }
    return gaps.empty();
  }

  std::unique_ptr<http::HttpClient> client_;
};

TEST_F(StatusDaemon, AGangThatCannotFitABoundGroupAndTheirQueuesShowWhatKaiShows) {
  start();
  gang("fits", 1, 2);
  ASSERT_TRUE(Cluster::eventually([&] { return bound("team-a", "fits-0"); }));
  gang("big", 2, 4);  // 8 GPUs, 2 left
  std::string missing;
  ASSERT_TRUE(Cluster::eventually([&] { return five_of_five(&missing); })) << missing;
  const Json big = read("scheduling.run.ai/v2alpha2", "PodGroup", "team-a", "big");
  const Json& cond = big["status"]["schedulingConditions"][0];
  EXPECT_EQ(cond["nodePool"], "default");
  EXPECT_EQ(cond["reason"], "Unschedulable");
  EXPECT_EQ(cond["transitionID"], "1");
  EXPECT_FALSE(cond["reasons"].empty());

  // The queue-controller metrics, from the same statuses.
  const std::string metrics = metrics_text();
  EXPECT_NE(metrics.find(R"(kai_queue_allocated_gpus{queue_display_name="",queue_metadata_name="test",queue_name="test"} 2)"),
            std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find(R"(kai_queue_info{queue_display_name="",queue_metadata_name="default",queue_name="default"} 1)"),
            std::string::npos);

  // A restart finds every status right and writes none (once the writes asked for are made).
  uint64_t patches_before = status_patches();
  for (uint64_t seen = daemon_->cycles(); daemon_->cycles() < seen + 10;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (status_patches() != patches_before) {
      patches_before = status_patches();
      seen = daemon_->cycles();
    }
  }
  ASSERT_GE(patches_before, 5u) << "the statuses above were written with status patches";
  restart();
  const uint64_t cycles = daemon_->cycles();
  ASSERT_TRUE(Cluster::eventually([&] { return daemon_->cycles() >= cycles + 5; }));
  EXPECT_TRUE(five_of_five(&missing)) << missing;
  EXPECT_EQ(status_patches(), patches_before) << "a restart rewrote a status that was right";
}

// A PodGroup with markUnschedulable: false (KAI v0.17): its pending pod gets the Warning event but
// no PodScheduled condition; a group beside it without the field gets both.
TEST_F(StatusDaemon, MarkUnschedulableFalseSendsTheEventAndLeavesThePodsConditionAlone) {
  start();
  cluster_.create({{"apiVersion", "scheduling.run.ai/v2alpha2"},
                   {"kind", "PodGroup"},
                   {"metadata", {{"name", "quiet"}, {"namespace", "team-a"}}},
                   {"spec", {{"minMember", 1}, {"queue", "test"}, {"markUnschedulable", false}}}});
  cluster_.create(cluster_.pod("team-a", "quiet-0", "test", 8, "", {{"pod-group-name", "quiet"}}));
  gang("loud", 1, 8);
  auto warned = [&](const std::string& pod) {
    auto events = cluster_.server->list_objects("events.k8s.io/v1", "Event", "team-a");
    if (!events.is_ok()) return false;
    const Json parsed = Json::parse(events.value());
    for (const auto& e : parsed["items"]) {
      if (e["regarding"].value("name", "") == pod && e.value("type", "") == "Warning" &&
          e.value("reason", "") == "Unschedulable")
        return true;
    }
    return false;
  };
  auto has_condition = [&](const std::string& pod) {
    const Json p = cluster_.get_pod("team-a", pod);
    if (p.is_null()) return false;
    for (const auto& c : p["status"].value("conditions", Json::array())) {
      if (c.value("type", "") == "PodScheduled" && c.value("status", "") == "False") return true;
    }
    return false;
  };
  ASSERT_TRUE(Cluster::eventually([&] {
    return warned("quiet-0") && warned("loud-0") && has_condition("loud-0");
  })) << "quiet-0 warned "
      << warned("quiet-0") << ", loud-0 warned " << warned("loud-0") << ", loud-0 condition "
      << has_condition("loud-0");
  EXPECT_FALSE(has_condition("quiet-0")) << "markUnschedulable: false, yet the pod's condition was set";
}

TEST_F(StatusDaemon, TheConditionIsClearedOnceTheGangRunsAndTheQueueFollowsDeletion) {
  start();
  gang("big", 2, 4);  // 8 GPUs on a 4-GPU node
  ASSERT_TRUE(Cluster::eventually([&] {
    return read("scheduling.run.ai/v2alpha2", "PodGroup", "team-a", "big")["status"].contains("schedulingConditions");
  }));
  cluster_.node("n2", 4);
  ASSERT_TRUE(Cluster::eventually([&] {
    const Json s = read("scheduling.run.ai/v2alpha2", "PodGroup", "team-a", "big")["status"];
    return !s.contains("schedulingConditions") && s.contains("/resourcesStatus/allocated/nvidia.com~1gpu"_json_pointer) &&
           s.at("/resourcesStatus/allocated/nvidia.com~1gpu"_json_pointer) == "8";
  })) << read("scheduling.run.ai/v2alpha2", "PodGroup", "team-a", "big").dump();
  ASSERT_TRUE(Cluster::eventually([&] {
    return read("scheduling.run.ai/v2", "Queue", "", "test").value("/status/allocated/nvidia.com~1gpu"_json_pointer, "") == "8";
  }));
  ASSERT_TRUE(cluster_.server->delete_object("v1", "Pod", "team-a", "big-0").is_ok());
  ASSERT_TRUE(Cluster::eventually([&] {
    return read("scheduling.run.ai/v2", "Queue", "", "test").value("/status/allocated/nvidia.com~1gpu"_json_pointer, "") == "4";
  })) << read("scheduling.run.ai/v2", "Queue", "", "test").dump();
}

}  // namespace
}  // namespace kai::e2e
