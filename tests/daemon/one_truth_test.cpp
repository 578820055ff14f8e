// One truth (docs/one-truth.md), end to end against kai-apiserver: a burst with binds in flight
// across cycles, gangs, fractions, reclaim and a SIGKILL replays without a difference; the job state
// KAI keeps on PodGroups is written and read back, so stale gangs are evicted after their grace and
// min-runtime protects a victim until it ends, also after a failover; a preemption delay holds back
// reclaim until it ends.

#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>

#include "actors/daemon/daemon.hpp"
#include "k8s/model/time.hpp"
#include "tests/daemon/cluster_fixture.hpp"

namespace kai::e2e {
namespace {

int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

Json get_pod_group(const Cluster& c, const std::string& ns, const std::string& name) {
  auto list = c.server->list_objects("scheduling.run.ai/v2alpha2", "PodGroup", ns);
  if (!list.is_ok()) return nullptr;
  const Json items = Json::parse(list.value())["items"];
  for (const auto& pg : items) {
    if (pg["metadata"]["name"] == name) return pg;
  }
  return nullptr;
}

std::string annotation(const Json& object, const std::string& key) {
  if (object.is_null()) return "";
  return object["metadata"].value("annotations", Json::object()).value(key, "");
}

void queue_with_min_runtime(Cluster& c, const std::string& name, double gpu_quota, const std::string& runtime) {
  c.create({{"apiVersion", "scheduling.run.ai/v2"},
            {"kind", "Queue"},
            {"metadata", {{"name", name}}},
            {"spec",
             {{"parentQueue", "default"},
              {"reclaimMinRuntime", runtime},
              {"resources",
               {{"gpu", {{"quota", gpu_quota}, {"limit", -1}, {"overQuotaWeight", 1}}},
                {"cpu", {{"quota", -1}, {"limit", -1}, {"overQuotaWeight", 1}}},
                {"memory", {{"quota", -1}, {"limit", -1}, {"overQuotaWeight", 1}}}}}}}});
}

int count_bound(const Cluster& c, const std::string& ns) {
  int n = 0;
  for (const auto& p : c.pods(ns)) n += !Cluster::node_of(p).empty();
  return n;
}

// 1,000+ pods at once over 128 nodes: whole-GPU pods, gangs, fractions; a second queue reclaiming
// its quota; a SIGKILL in the middle of the binds and a restart on the same log. Replay of that log
// recomputes every cycle's records exactly.
TEST(OneTruth, ABurstWithBindsInFlightAndASigkillReplaysWithoutADifference) {
  Cluster c;
  c.namespace_("team-a");
  c.namespace_("team-b");
  c.namespace_("kai-resource-reservation");
  for (int n = 0; n < 128; ++n) c.node("n" + std::to_string(n), 8);
  c.queue("default", "", -1);
  c.queue("team-a", "default", 512);
  c.queue("team-b", "default", 512);
  // Binds take a while on the server (5 ms each, 8 at once: about half a second for the 780 after
  // the kill's threshold), so that many are in flight across cycles and the kill lands among them.
  c.slow_binds(std::chrono::milliseconds(5));
  constexpr int kSingles = 900;
  for (int i = 0; i < kSingles; ++i) c.create(c.pod("team-a", "p-" + std::to_string(i), "team-a", 1));
  for (int g = 0; g < 10; ++g) {
    const std::string name = "gang-" + std::to_string(g);
    c.pod_group("team-a", name, "team-a", 4);
    for (int i = 0; i < 4; ++i)
      c.create(c.pod("team-a", name + "-" + std::to_string(i), "team-a", 2, "", {{"pod-group-name", name}}));
  }
  for (int i = 0; i < 40; ++i)
    c.create(c.pod("team-a", "frac-" + std::to_string(i), "team-a", 0, "", {{"gpu-fraction", "0.5"}}));
  const int total_a = kSingles + 40 + 40;

  const std::string log_dir = c.dir + "/burst-log";
  const std::string out = c.dir + "/burst.log";
  auto spawn = [&] {
    return c.spawn_scheduler({"--log-dir", log_dir, "--schedule-period", "50ms",
                              "--resource-reservation-allocation-timeout", "5s"},
                             out);
  };
  pid_t pid = spawn();
  ASSERT_TRUE(Cluster::eventually([&] { return count_bound(c, "team-a") >= 200; }, 120s));
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  EXPECT_LT(count_bound(c, "team-a"), total_a) << "the kill should land before every pod is bound";

  pid = spawn();
  ASSERT_TRUE(Cluster::eventually([&] { return count_bound(c, "team-a") == total_a; }, 240s))
      << count_bound(c, "team-a") << " of " << total_a;
  // team-b asks for its quota back from a full cluster: reclaim evicts team-a pods.
  for (int i = 0; i < 8; ++i) c.create(c.pod("team-b", "b-" + std::to_string(i), "team-b", 4));
  ASSERT_TRUE(Cluster::eventually([&] { return count_bound(c, "team-b") == 8; }, 120s));
  Cluster::stop_scheduler(pid, out);
  EXPECT_LT(count_bound(c, "team-a"), total_a) << "team-b got its pods without a reclaim: not the test";

  // Every pod was bound once (reclaimed pods are deleted, not recreated): no second bind was sent.
  EXPECT_EQ(c.server->request_counts()["create pods/binding"], static_cast<uint64_t>(total_a + 8));
  const std::string summary = expect_replay_matches(log_dir);
  EXPECT_NE(summary.find("replayed "), std::string::npos);
}

class JobState : public DaemonTest {
 protected:
  void SetUp() override {
    cluster_.namespace_("team-a");
    cluster_.namespace_("team-b");
    cluster_.queue("default", "", -1);
  }
  void start_daemon(std::chrono::seconds grace = 60s) {
    DaemonTest::start_daemon([grace](daemon::DaemonOptions& o) { o.stale_grace_period = grace; });
  }
};

// KAI evicts the rest of a gang that fell below minMember once its grace has passed; the gang beside
// it, whole, is untouched. The grace runs from the stale-since time the daemon logged and wrote.
TEST_F(JobState, TheRestOfAStaleGangIsEvictedAfterTheGraceAndAHealthyGangIsUntouched) {
  cluster_.node("n1", 8);
  cluster_.queue("test", "default", -1);
  start_daemon(3s);
  for (const std::string g : {"stale", "healthy"}) {
    cluster_.pod_group("team-a", g, "test", 2);
    for (int i = 0; i < 2; ++i)
      cluster_.create(
          cluster_.pod("team-a", g + "-" + std::to_string(i), "test", 1, "", {{"pod-group-name", g}}));
  }
  ASSERT_TRUE(Cluster::eventually([&] {
    return bound("team-a", "stale-0") && bound("team-a", "stale-1") && bound("team-a", "healthy-0") &&
           bound("team-a", "healthy-1");
  }));
  // KAI's job state on the PodGroup: when it last started.
  ASSERT_TRUE(Cluster::eventually([&] {
    return !annotation(get_pod_group(cluster_, "team-a", "stale"), "kai.scheduler/last-start-timestamp").empty();
  }));

  ASSERT_TRUE(cluster_.server->delete_object("v1", "Pod", "team-a", "stale-0").is_ok());
  const auto deleted_at = std::chrono::steady_clock::now();
  ASSERT_TRUE(Cluster::eventually([&] {
    return !annotation(get_pod_group(cluster_, "team-a", "stale"), "kai.scheduler/stale-podgroup-timestamp")
                .empty();
  }));
  // Not before the grace: the grace runs from the logged stale-since, not from each cycle.
  std::this_thread::sleep_for(1500ms);
  EXPECT_FALSE(cluster_.get_pod("team-a", "stale-1").is_null()) << "evicted within the grace";
  ASSERT_TRUE(Cluster::eventually([&] { return cluster_.get_pod("team-a", "stale-1").is_null(); }, 20s))
      << "the rest of the stale gang was not evicted";
  const auto after = std::chrono::steady_clock::now() - deleted_at;
  EXPECT_GE(after, 3s);
  EXPECT_TRUE(bound("team-a", "healthy-0") && bound("team-a", "healthy-1")) << "the healthy gang was touched";
}

// With reclaimMinRuntime a victim keeps its pods until it has run that long; then reclaim happens.
// A bare pod is bound before the PodGroup the grouper writes for it is seen: its last start, kept
// under the grouper's uid until then, ends on that PodGroup, as KAI (whose PodGroup comes first)
// keeps it.
TEST_F(JobState, ABarePodsLastStartEndsOnThePodGroupTheGrouperWrote) {
  cluster_.node("n1", 8);
  cluster_.queue("test", "default", -1);
  start_daemon(1s);
  cluster_.create(cluster_.pod("team-a", "bare", "test", 1));
  ASSERT_TRUE(Cluster::eventually([&] { return bound("team-a", "bare"); }));
  const std::string uid = cluster_.get_pod("team-a", "bare")["metadata"].value("uid", "");
  const std::string group = "pg-bare-" + uid;
  EXPECT_TRUE(Cluster::eventually([&] {
    return !annotation(get_pod_group(cluster_, "team-a", group), "kai.scheduler/last-start-timestamp")
                .empty();
  })) << get_pod_group(cluster_, "team-a", group).dump();
}

TEST_F(JobState, MinRuntimeProtectsTheVictimUntilItEnds) {
  cluster_.node("n1", 4);
  queue_with_min_runtime(cluster_, "qa", 0, "6s");
  cluster_.queue("qb", "default", 4);
  start_daemon();
  // Three bare pods (groups the scheduler names itself: their job state lives in the log only) and
  // one PodGroup of one pod (its job state is also written on the PodGroup).
  for (int i = 0; i < 3; ++i) cluster_.create(cluster_.pod("team-a", "a-" + std::to_string(i), "qa", 1));
  cluster_.pod_group("team-a", "qa-job", "qa", 1);
  cluster_.create(cluster_.pod("team-a", "a-3", "qa", 1, "", {{"pod-group-name", "qa-job"}}));
  ASSERT_TRUE(Cluster::eventually([&] { return count_bound(cluster_, "team-a") == 4; }));
  const int64_t started = unix_now();
  cluster_.create(cluster_.pod("team-b", "b-0", "qb", 2));
  // Protected until 6 s after qa's pods started (a second of slack for the clock's granularity).
  while (unix_now() < started + 5) {
    EXPECT_EQ(cluster_.pods("team-a").size(), 4u) << "reclaimed before the min runtime";
    std::this_thread::sleep_for(200ms);
  }
  ASSERT_TRUE(Cluster::eventually([&] { return bound("team-b", "b-0"); }, 20s)) << "never reclaimed";
  EXPECT_GE(unix_now(), started + 5);
  const std::string last_start =
      annotation(get_pod_group(cluster_, "team-a", "qa-job"), "kai.scheduler/last-start-timestamp");
  EXPECT_FALSE(last_start.empty()) << "the PodGroup carries no last start";
}

// A PodGroup's preemptionDelay (docs/kai-compatibility.md "Preemption delay"): qb's group may not
// reclaim until 4 s after its creation, and says why on its PodGroup; then it reclaims, and the
// victim's PodGroup carries its last eviction (KAI's kai.scheduler/last-eviction-timestamp).
TEST_F(JobState, APreemptionDelayHoldsBackReclaimUntilItEndsAndTheVictimsGroupRecordsItsEviction) {
  cluster_.node("n1", 2);
  cluster_.queue("qa", "default", 0);
  cluster_.queue("qb", "default", 2);
  start_daemon();
  cluster_.pod_group("team-a", "qa-job", "qa", 1);
  for (int i = 0; i < 2; ++i)
    cluster_.create(
        cluster_.pod("team-a", "a-" + std::to_string(i), "qa", 1, "", {{"pod-group-name", "qa-job"}}));
  ASSERT_TRUE(Cluster::eventually([&] { return count_bound(cluster_, "team-a") == 2; }));

  const int64_t created = unix_now();
  cluster_.create({{"apiVersion", "scheduling.run.ai/v2alpha2"},
                   {"kind", "PodGroup"},
                   {"metadata", {{"name", "qb-job"}, {"namespace", "team-b"}}},
                   {"spec", {{"minMember", 1}, {"queue", "qb"}, {"preemptionDelay", "4s"}}}});
  cluster_.create(cluster_.pod("team-b", "b-0", "qb", 1, "", {{"pod-group-name", "qb-job"}}));
  bool said_why = false;
  // Held back until 4 s after the PodGroup's creation (a second of slack for the clock's granularity).
  while (unix_now() < created + 3) {
    EXPECT_EQ(count_bound(cluster_, "team-a"), 2) << "reclaimed within the preemption delay";
    const Json pg = get_pod_group(cluster_, "team-b", "qb-job");
    const Json conditions =
        pg.is_null() ? Json() : pg.value("status", Json::object()).value("schedulingConditions", Json());
    if (conditions.is_array()) {
      for (const auto& c : conditions) {
        for (const auto& r : c.value("reasons", Json::array()))
          said_why |= r.value("reason", "") == "PreemptionDelayNotElapsed";
      }
    }
    std::this_thread::sleep_for(100ms);
  }
  ASSERT_TRUE(Cluster::eventually([&] { return bound("team-b", "b-0"); }, 20s)) << "never reclaimed";
  EXPECT_GE(unix_now(), created + 3);
  EXPECT_TRUE(said_why) << "the PodGroup never showed PreemptionDelayNotElapsed";
  ASSERT_TRUE(Cluster::eventually([&] {
    return !annotation(get_pod_group(cluster_, "team-a", "qa-job"), "kai.scheduler/last-eviction-timestamp")
                .empty();
  })) << "the victim's PodGroup carries no last eviction";
}

// The leader placed qa's pods and wrote their last start; it is killed; the standby that takes over
// protects the victim exactly as the leader would have.
TEST(OneTruthFailover, TheNewLeaderProtectsTheVictimUntilItsMinRuntimeEnds) {
  Cluster c;
  c.namespace_("team-a");
  c.namespace_("team-b");
  c.namespace_("kai-scheduler");
  c.node("n1", 4);
  c.queue("default", "", -1);
  queue_with_min_runtime(c, "qa", 0, "10s");
  c.queue("qb", "default", 4);
  auto spawn = [&](const std::string& identity) {
    return c.spawn_scheduler(
        {"--log-dir", c.dir + "/log-" + identity, "--schedule-period", "50ms", "--leader-elect",
         "--leader-elect-identity", identity, "--leader-elect-lease-duration", "2s",
         "--leader-elect-renew-deadline", "1500ms", "--leader-elect-retry-period", "250ms"},
        c.dir + "/" + identity + ".log");
  };
  pid_t first = spawn("first");
  ASSERT_TRUE(Cluster::eventually([&] {
    auto list = c.server->list_objects("coordination.k8s.io/v1", "Lease", "kai-scheduler");
    return list.is_ok() && list.value().find("\"holderIdentity\":\"first\"") != std::string::npos;
  }));
  pid_t second = spawn("second");
  for (int i = 0; i < 3; ++i) c.create(c.pod("team-a", "a-" + std::to_string(i), "qa", 1));
  c.pod_group("team-a", "qa-job", "qa", 1);
  c.create(c.pod("team-a", "a-3", "qa", 1, "", {{"pod-group-name", "qa-job"}}));
  ASSERT_TRUE(Cluster::eventually([&] { return count_bound(c, "team-a") == 4; }));
  const int64_t started = unix_now();
  ASSERT_TRUE(Cluster::eventually([&] {
    return !annotation(get_pod_group(c, "team-a", "qa-job"), "kai.scheduler/last-start-timestamp").empty();
  }));
  ::kill(first, SIGKILL);
  int status = 0;
  ::waitpid(first, &status, 0);
  c.create(c.pod("team-b", "b-0", "qb", 2));
  while (unix_now() < started + 9) {
    EXPECT_EQ(c.pods("team-a").size(), 4u) << "the new leader reclaimed before the min runtime";
    std::this_thread::sleep_for(200ms);
  }
  ASSERT_TRUE(Cluster::eventually([&] { return !Cluster::node_of(c.get_pod("team-b", "b-0")).empty(); }, 30s))
      << "the new leader never reclaimed";
  Cluster::stop_scheduler(second, c.dir + "/second.log");
  expect_replay_matches(c.dir + "/log-second");
}


// A pending pod of a group the scheduler named itself: its reasons are logged when they change (not
// every cycle), `kai-log why ns/pod` finds them through the pod, and a pod recreated under the same
// name is told apart from the old one by its UID.
TEST(OneTruthAudit, WhyFindsAPendingPodsReasonsAndTellsPodsOfOneNameApart) {
  Cluster c;
  c.small(1);
  daemon::DaemonOptions o = c.daemon_options();
  auto d = std::make_unique<daemon::Daemon>(o);
  ASSERT_TRUE(d->start().is_ok());
  c.create(c.pod("team-a", "big", "test", 2));
  ASSERT_TRUE(Cluster::eventually([&] { return !Cluster::condition_message(c.get_pod("team-a", "big")).empty(); }));
  const std::string first_uid = c.get_pod("team-a", "big")["metadata"]["uid"];
  const uint64_t cycles_before = d->cycles();
  ASSERT_TRUE(Cluster::eventually([&] { return d->cycles() >= cycles_before + 20; }));  // 20 cycles pending
  ASSERT_TRUE(c.server->delete_object("v1", "Pod", "team-a", "big").is_ok());
  c.create(c.pod("team-a", "big", "test", 3));
  const std::string second_uid = c.get_pod("team-a", "big")["metadata"]["uid"];
  ASSERT_NE(first_uid, second_uid);
  const uint64_t cycles_mid = d->cycles();
  ASSERT_TRUE(Cluster::eventually([&] { return d->cycles() >= cycles_mid + 10; }));
  d->stop();
  const std::string log_dir = c.dir + "/log";

  // One record per pod while its reasons stay the same, whatever the number of cycles.
  int first_records = 0, second_records = 0;
  for_each_event(log_dir, [&](const events::Event& e) {
    if (const auto* u = std::get_if<events::UnschedulableEvent>(&e.payload)) {
      for (const auto& p : u->pods) {
        first_records += p.uid == first_uid;
        second_records += p.uid == second_uid;
      }
    }
  });
  EXPECT_EQ(first_records, 1);
  EXPECT_EQ(second_records, 1);

  const std::string why = run_kai_log("-d " + log_dir + " why team-a/big");
  EXPECT_NE(why.find("is unschedulable"), std::string::npos) << why;
  EXPECT_NE(why.find("pg-big-" + second_uid), std::string::npos) << "not the newest pod's group: " << why;
  EXPECT_EQ(why.find("pg-big-" + first_uid), std::string::npos) << "the old pod's records mixed in: " << why;
  EXPECT_NE(why.find("1 records of other pods named team-a/big not shown (uid " + first_uid), std::string::npos)
      << why;
  const std::string old = run_kai_log("-d " + log_dir + " why team-a/big --uid " + first_uid);
  EXPECT_NE(old.find("pg-big-" + first_uid), std::string::npos) << old;
  expect_replay_matches(log_dir);
}


// A cycle runs at the earliest deadline even when nothing else changes: with a 30 s period and no
// watch change after the gang went stale, the eviction comes at the end of the grace, not the period.
TEST(OneTruthDeadlines, AStaleGangsGraceEndRunsACycleBeforeThePeriodIsUp) {
  Cluster c;
  c.small(4);
  daemon::DaemonOptions o = c.daemon_options();
  o.schedule_period = std::chrono::milliseconds(30000);
  o.early_cycle_changes = 1;  // watch changes start cycles; nothing changes during the grace
  o.stale_grace_period = 2s;
  daemon::Daemon d(o);
  ASSERT_TRUE(d.start().is_ok());
  c.pod_group("team-a", "g", "test", 2);
  for (int i = 0; i < 2; ++i)
    c.create(c.pod("team-a", "g-" + std::to_string(i), "test", 1, "", {{"pod-group-name", "g"}}));
  ASSERT_TRUE(Cluster::eventually([&] { return count_bound(c, "team-a") == 2; }));
  ASSERT_TRUE(c.server->delete_object("v1", "Pod", "team-a", "g-0").is_ok());
  const auto deleted_at = std::chrono::steady_clock::now();
  ASSERT_TRUE(Cluster::eventually([&] { return c.get_pod("team-a", "g-1").is_null(); }, 20s))
      << "not evicted before the period";
  EXPECT_LT(std::chrono::steady_clock::now() - deleted_at, 15s);
  d.stop();
  expect_replay_matches(c.dir + "/log");
}

// The scheduler name is a cycle input: a log written under two names replays under each.
TEST(OneTruth, ARestartUnderAnotherSchedulerNameReplaysWithoutADifference) {
  Cluster c;
  c.small(4);
  for (const std::string name : {"kai-scheduler", "other-scheduler"}) {
    daemon::DaemonOptions o = c.daemon_options();
    o.scheduler_name = name;
    daemon::Daemon d(o);
    ASSERT_TRUE(d.start().is_ok());
    Json p = c.pod("team-a", "for-" + name, "test", 1);
    p["spec"]["schedulerName"] = name;
    c.create(p);
    ASSERT_TRUE(Cluster::eventually([&] { return !Cluster::node_of(c.get_pod("team-a", "for-" + name)).empty(); }));
    d.stop();
  }
  expect_replay_matches(c.dir + "/log");
}


// A daemon of this build goes on with a log of the previous schema (tests/fixtures/log-v4): it
// restores the old snapshot, appends its own records after the old ones, and replay compares its
// cycles while reporting the old ones as skipped.
TEST(OneTruthUpgrade, TheDaemonContinuesALogOfThePreviousSchema) {
  Cluster c;
  c.small(4);
  std::filesystem::copy(source_dir() + "/tests/fixtures/log-v4", c.dir + "/log");
  daemon::Daemon d(c.daemon_options());
  ASSERT_TRUE(d.start().is_ok());
  c.create(c.pod("team-a", "p", "test", 1));
  ASSERT_TRUE(Cluster::eventually([&] { return !Cluster::node_of(c.get_pod("team-a", "p")).empty(); }));
  d.stop();
  const std::string summary = expect_replay_matches(c.dir + "/log");
  EXPECT_NE(summary.find("5 cycles skipped (recorded by an older scheduling behaviour)"), std::string::npos)
      << summary;
}

}  // namespace
}  // namespace kai::e2e
