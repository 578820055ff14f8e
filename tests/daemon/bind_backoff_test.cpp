// A bind that keeps failing backs its pod group off (docs/one-truth.md "Bind backoff"), end to end
// against kai-apiserver: a fraction pod whose reservation pod names a RuntimeClass that does not
// exist (the API server answers 403) is retried after 1, 2, 4, 8... s instead of every cycle; the pod
// says so (PodScheduled=False, reason BindingError, and a Warning event), `kai-log why` says so, and
// once the RuntimeClass exists the pod binds when its backoff ends.

#include <stdio.h>

#include "actors/daemon/daemon.hpp"
#include "tests/daemon/cluster_fixture.hpp"

namespace kai::e2e {
namespace {

/// The counted failures (bind failed, reservation timed out) of binds of `pod` in the log so far.
int failed_binds(const std::string& log_dir, const std::string& pod) {
  int n = 0;
  for_each_event(log_dir, [&](const events::Event& e) {
    if (const auto* o = std::get_if<events::BinderOutcome>(&e.payload)) {
      n += o->pod == pod &&
           (o->outcome == events::Outcome::kBindFailed || o->outcome == events::Outcome::kReservationTimedOut);
    }
  });
  return n;
}

Json pod_scheduled(const Json& pod) {
  if (pod.is_null()) return nullptr;
  for (const auto& c : pod["status"].value("conditions", Json::array())) {
    if (c.value("type", "") == "PodScheduled") return c;
  }
  return nullptr;
}

class BindBackoff : public DaemonTest {
 protected:
  void SetUp() override {
    cluster_.small(1);
    cluster_.namespace_("kai-resource-reservation");
  }
};

TEST_F(BindBackoff, AFractionPodWhoseReservationPodIsForbiddenBacksOffAndBindsOnceItCan) {
  start_daemon([](daemon::DaemonOptions& o) { o.reservation_runtime_class = "missing-runtime"; });
  const std::string log_dir = cluster_.dir + "/log";
  cluster_.create(cluster_.pod("team-a", "f", "test", 0, "", {{"gpu-fraction", "0.5"}}));
  ASSERT_TRUE(Cluster::eventually([&] { return failed_binds(log_dir, "team-a/f") >= 1; }));

  // Every attempt fails: its reservation pod is forbidden (RuntimeClass "missing-runtime" not found).
  // Without backoff the pod is decided again at each cycle (50 ms here, 1 s by default); with it the
  // attempts start 1, 2, 4 and 8 s after the failure before them: 5 in 20 s.
  std::this_thread::sleep_for(20s);
  const int attempts = failed_binds(log_dir, "team-a/f");
  std::printf("failed binds of team-a/f in the first 20 s: %d\n", attempts);
  EXPECT_GE(attempts, 3);
  EXPECT_LE(attempts, 5) << "the bind is retried without backoff";
  EXPECT_FALSE(bound("team-a", "f"));

  // The pod says why it waits: PodScheduled=False, reason BindingError, the API server's message.
  Json cond;
  ASSERT_TRUE(Cluster::eventually([&] {
    cond = pod_scheduled(cluster_.get_pod("team-a", "f"));
    return !cond.is_null() && cond.value("reason", "") == "BindingError";
  })) << cond.dump();
  EXPECT_EQ(cond.value("status", ""), "False");
  const std::string message = cond.value("message", "");
  EXPECT_NE(message.find("backing off after"), std::string::npos) << message;
  EXPECT_NE(message.find("failed binds"), std::string::npos) << message;
  EXPECT_NE(message.find("RuntimeClass \"missing-runtime\" not found"), std::string::npos) << message;
  EXPECT_NE(message.find("retried at"), std::string::npos) << message;
  bool warned = false;
  auto events = cluster_.server->list_objects("v1", "Event", "team-a");
  ASSERT_TRUE(events.is_ok());
  const Json items = Json::parse(events.value())["items"];
  for (const auto& e : items) {
    warned |= e["involvedObject"].value("name", "") == "f" && e.value("type", "") == "Warning" &&
              e.value("reason", "") == "BindingError" &&
              e.value("message", "").find("backing off after") != std::string::npos;
  }
  EXPECT_TRUE(warned) << items.dump();

  // kai-log why tells the same from the log.
  const std::string why = run_kai_log("-d " + log_dir + " why team-a/f");
  EXPECT_NE(why.find("BindingError"), std::string::npos) << why;
  EXPECT_NE(why.find("backing off after"), std::string::npos) << why;
  EXPECT_NE(why.find("RuntimeClass \"missing-runtime\" not found"), std::string::npos) << why;
  EXPECT_NE(why.find("retried at"), std::string::npos) << why;

  // The RuntimeClass is created: the pod binds once its backoff (at most a minute) is over.
  cluster_.create({{"apiVersion", "node.k8s.io/v1"},
                   {"kind", "RuntimeClass"},
                   {"metadata", {{"name", "missing-runtime"}}},
                   {"handler", "runc"}});
  EXPECT_TRUE(Cluster::eventually([&] { return bound("team-a", "f"); }, 70s));
  EXPECT_EQ(cluster_.pods("kai-resource-reservation").size(), 1u);
  stop_and_replay();  // the failures, the backoff and the bind replay without a difference
}

}  // namespace
}  // namespace kai::e2e
