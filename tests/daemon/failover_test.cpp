// Hot-standby failover (docs/event-ordering.md "Decisions before binds"): two kai-scheduler processes elect a leader on a Lease; SIGKILL the
// leader and the standby binds the next pending pod within the lease duration and two cycles; no pod
// is bound twice; both logs together hold every decision once, stamped with its leader's epoch. And a
// leader cut off from the API server stops binding before its lease can expire.

#include <signal.h>
#include <sys/wait.h>

#include "actors/daemon/daemon.hpp"
#include "k8s/model/time.hpp"
#include "storage/event_log.hpp"
#include "tests/daemon/cluster_fixture.hpp"

namespace kai::e2e {
namespace {

constexpr auto kLease = 2s;  // tests use 1-2 s leases (docs/build-and-ci.md "Timing in tests")

pid_t spawn_replica(const Cluster& c, const std::string& identity) {
  return c.spawn_scheduler(
      {"--log-dir", c.dir + "/log-" + identity, "--schedule-period", "50ms", "--leader-elect",
       "--leader-elect-identity", identity, "--leader-elect-lease-duration", "2s",
       "--leader-elect-renew-deadline", "1500ms", "--leader-elect-retry-period", "250ms"},
      c.dir + "/" + identity + ".log");
}

/// An in-process replica that elects, with short leases (retry 250 ms).
daemon::DaemonOptions electing(const Cluster& c, const std::string& identity,
                               std::chrono::milliseconds lease = kLease,
                               std::chrono::milliseconds renew = 1500ms) {
  daemon::DaemonOptions o = c.daemon_options();
  o.leader_elect = true;
  o.identity = identity;
  o.lease_duration = lease;
  o.renew_deadline = renew;
  o.retry_period = 250ms;
  return o;
}

/// The Lease's spec.holderIdentity and leaseTransitions ("" / -1 when there is no Lease yet).
std::pair<std::string, int> lease_holder(const Cluster& c) {
  auto list = c.server->list_objects("coordination.k8s.io/v1", "Lease", "kai-scheduler");
  if (!list.is_ok()) return {"", -1};
  const Json items =
      Json::parse(list.value())["items"];  // owned: a range-for over a temporary's member dangles
  for (const auto& l : items) {
    if (l["metadata"]["name"] == "kai-scheduler") {
      return {l["spec"].value("holderIdentity", ""), l["spec"].value("leaseTransitions", 0)};
    }
  }
  return {"", -1};
}

struct LoggedDecision {
  std::string pod;
  uint64_t epoch = 0;
};

std::vector<LoggedDecision> decisions_in(const std::string& dir) {
  std::vector<LoggedDecision> out;
  for_each_event(dir, [&](const events::Event& e) {
    if (const auto* d = std::get_if<events::DecisionEvent>(&e.payload))
      out.push_back({d->decision.pod, d->leader_epoch});
  });
  return out;
}

TEST(Failover, StandbyTakesOverAfterTheLeaderIsKilledWithoutDoubleBinds) {
  Cluster c;
  c.namespace_("team-a");
  c.namespace_("kai-scheduler");
  c.node("n1", 8);
  c.test_queues();
  pid_t a = spawn_replica(c, "replica-a");
  ASSERT_TRUE(Cluster::eventually([&] { return lease_holder(c).first == "replica-a"; }, 20s))
      << "replica-a never took the lease";
  pid_t b = spawn_replica(c, "replica-b");
  c.create(c.pod("team-a", "before", "test", 1));
  ASSERT_TRUE(Cluster::eventually([&] { return !Cluster::node_of(c.get_pod("team-a", "before")).empty(); }));
  // Give the standby time to list and project (hot standby), then kill the leader.
  std::this_thread::sleep_for(1s);
  EXPECT_EQ(lease_holder(c).first, "replica-a");
  ::kill(a, SIGKILL);
  int status = 0;
  ::waitpid(a, &status, 0);
  const auto killed_at = std::chrono::steady_clock::now();
  c.create(c.pod("team-a", "after", "test", 1));
  // Lease duration + two cycles is the expectation; 5x that is the bound (docs/build-and-ci.md "Timing in tests").
  ASSERT_TRUE(Cluster::eventually([&] { return !Cluster::node_of(c.get_pod("team-a", "after")).empty(); },
                                  std::chrono::seconds(5 * 3)))
      << "the standby did not take over";
  const auto took =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - killed_at);
  std::cerr << "failover: the standby bound the next pod " << took.count()
            << " ms after the leader was killed\n";
  EXPECT_EQ(lease_holder(c).first, "replica-b");
  EXPECT_GE(lease_holder(c).second, 1);
  ::kill(b, SIGTERM);
  ::waitpid(b, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "replica-b exit status " << status;

  EXPECT_EQ(c.server->request_counts()["create pods/binding"], 2u);  // each pod bound once
  // Both logs together hold each decision once; the standby's carry the higher epoch.
  std::map<std::string, std::vector<std::pair<std::string, uint64_t>>> by_pod;
  for (const std::string replica : {"replica-a", "replica-b"}) {
    for (const auto& d : decisions_in(c.dir + "/log-" + replica))
      by_pod[d.pod].emplace_back(replica, d.epoch);
  }
  ASSERT_EQ(by_pod["team-a/before"].size(), 1u);
  ASSERT_EQ(by_pod["team-a/after"].size(), 1u);
  EXPECT_EQ(by_pod["team-a/before"][0].first, "replica-a");
  EXPECT_EQ(by_pod["team-a/after"][0].first, "replica-b");
  EXPECT_GT(by_pod["team-a/after"][0].second, by_pod["team-a/before"][0].second);
  // Each replica's log replays exactly: the killed leader's and the one that took over.
  for (const std::string replica : {"replica-a", "replica-b"}) expect_replay_matches(c.dir + "/log-" + replica);
}

TEST(Failover, GracefulStopHandsTheLeaseOverAtOnce) {
  Cluster c;
  c.namespace_("kai-scheduler");
  daemon::Daemon d(electing(c, "graceful"));
  ASSERT_TRUE(d.start().is_ok());
  ASSERT_TRUE(Cluster::eventually([&] { return d.leading(); }, 10s));
  d.stop();
  EXPECT_EQ(lease_holder(c).first, "");  // released: a standby need not wait out the lease
}

TEST(Failover, MissingLeaseNamespaceIsAClearError) {
  Cluster c;
  daemon::DaemonOptions o = electing(c, "x");
  o.lease_namespace = "no-such-namespace";
  daemon::Daemon d(o);
  auto s = d.start();
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("no-such-namespace"), std::string::npos) << s.message();
}

TEST(Failover, LeaderCutOffFromTheApiServerStopsBindingBeforeItsLeaseExpires) {
  Cluster c;
  c.namespace_("team-a");
  c.namespace_("kai-scheduler");
  c.node("n1", 8);
  c.test_queues();
  daemon::Daemon d(electing(c, "cut-off", 3s, 2s));
  ASSERT_TRUE(d.start().is_ok());
  ASSERT_TRUE(Cluster::eventually([&] { return d.leading() && d.synced(); }, 10s));

  // Every Lease call fails from now on: the leader can no longer renew.
  apiserver::Faults cut;
  cut.match = "/leases";
  cut.internal_errors = 1000000;
  c.server->set_faults(cut);
  ASSERT_TRUE(Cluster::eventually([&] { return !d.leading(); }, 10s));
  const int64_t stopped_us = std::chrono::duration_cast<std::chrono::microseconds>(
                                 std::chrono::system_clock::now().time_since_epoch())
                                 .count();
  // The lease as the server last stored it: its renewTime is the last successful renewal.
  auto list = c.server->list_objects("coordination.k8s.io/v1", "Lease", "kai-scheduler");
  ASSERT_TRUE(list.is_ok());
  const Json lease = Json::parse(list.value())["items"][0];
  auto renewed = model::parse_micro_time(lease["spec"].value("renewTime", ""));
  ASSERT_TRUE(renewed.is_ok()) << lease.dump();
  EXPECT_LT(stopped_us, renewed.value() + 3'000'000) << "acting stopped only after the lease could expire";

  // A pod created now is not bound while the leader is cut off.
  c.create(c.pod("team-a", "waits", "test", 1));
  std::this_thread::sleep_for(1500ms);
  EXPECT_TRUE(Cluster::node_of(c.get_pod("team-a", "waits")).empty());
  EXPECT_EQ(c.server->request_counts()["create pods/binding"], 0u);

  // The API server comes back: the replica takes its lease again and binds.
  c.server->set_faults({});
  ASSERT_TRUE(
      Cluster::eventually([&] { return !Cluster::node_of(c.get_pod("team-a", "waits")).empty(); }, 20s));
  d.stop();
}

}  // namespace
}  // namespace kai::e2e
