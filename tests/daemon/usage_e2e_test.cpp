// Time-based fair share through the daemon (docs/time-based-fair-share.md "The daemon"), end to end
// against kai-apiserver: KAI's documented example (16 GPUs, two queues with no quota and weight 1,
// 16-GPU single-pod jobs, a 10-minute sliding window) alternates as KAI's plot shows with the usage
// history kept in the event log only, across a restart from a snapshot; /metrics, `kai-log usage`
// and `kai-sim --log` show the usage; replay of the log has 0 differences.

#include <fstream>
#include <map>
#include <sstream>

#include "actors/daemon/daemon.hpp"
#include "k8s/http/http_client.hpp"
#include "tests/daemon/cluster_fixture.hpp"

namespace kai::e2e {
namespace {

constexpr int64_t kStart = 1'800'000'000;  // a whole minute: each cycle evaluates usage at its own time
constexpr int64_t kStep = 60;              // one cycle per minute, as kai-sim --now-step 1m

class TimeBasedFairShare : public DaemonTest {
 protected:
  void SetUp() override {
    cluster_.namespace_("ns1");
    cluster_.node("n1", 16);
    cluster_.queue("team-a", "", 0);
    cluster_.queue("team-b", "", 0);
    for (int i = 0; i < 4; ++i) {
      for (const std::string q : {"a", "b"}) {
        cluster_.create(cluster_.pod("ns1", q + "-" + std::to_string(i), "team-" + q, 16));
      }
    }
    config_path_ = cluster_.dir + "/config.yaml";
    std::ofstream(config_path_) << R"(actions: allocate, reclaim
usageDBConfig:
  clientType: eventlog
  usageParams: {windowSize: 10m, windowType: sliding, fetchInterval: 1m, extraParams: {queryResolution: 1m}}
)";
  }

  /// Starts the daemon on the cluster's log; its clock moves a minute per cycle and goes on from where
  /// the last run left it. Cycles wait for the previous one's binds and evictions (lockstep), as
  /// kai-sim's rounds apply each round before the next.
  void start() {
    start_daemon([this](daemon::DaemonOptions& o) {
      o.config_path = config_path_;
      o.test_clock = [calls = calls_] { return kStart + kStep * (*calls)++; };
      o.test_seed = 1;
      o.lockstep = true;
      o.early_cycle_changes = 0;
      o.schedule_period = std::chrono::milliseconds(20);
      o.snapshots.every_events = 10;  // the restart restores from a snapshot, not from the whole log
      o.metrics_port = 1;             // ephemeral
    });
  }

  /// Who holds the 16 GPUs from each minute on ("." = neither), from the allocation records the
  /// daemon logged (not from the folded history, which forgets what the window no longer reaches).
  std::string holders(int minutes) {
    std::map<std::string, std::vector<events::AllocationStep>> steps;
    for_each_event(cluster_.dir + "/log", [&](const events::Event& e) {
      if (const auto* a = std::get_if<events::AllocationChange>(&e.payload)) {
        for (const auto& q : a->queues) steps[q.queue].push_back(q.step);
      }
    });
    auto held = [&](const std::string& queue, int64_t t_ms) {
      double v = 0;
      for (const auto& s : steps[queue]) {
        if (s.at_ms <= t_ms) v = s.gpu;
      }
      return v;
    };
    std::string line;
    for (int i = 0; i < minutes; ++i) {
      const int64_t t = (kStart + i * kStep) * 1000;
      line += held("team-a", t) == 16 ? "a" : held("team-b", t) == 16 ? "b" : ".";
    }
    return line;
  }

  std::string config_path_;
  std::shared_ptr<int64_t> calls_ = std::make_shared<int64_t>(0);
};

TEST_F(TimeBasedFairShare, KaisTwoQueueExampleAlternatesThroughTheDaemonAcrossARestart) {
  start();
  // Minute 6: team-b has held the cluster since minute 2.
  ASSERT_TRUE(Cluster::eventually([&] { return *calls_ >= 6; }, 120s)) << "clock calls: " << *calls_;
  daemon_->stop();
  daemon_.reset();
  EXPECT_EQ(holders(6), "a.bbbb");

  // The restart reads the history back from its snapshot and the log after it: team-a reclaims at
  // minute 11, after team-b's whole window, not at once (as it would with the history lost).
  start();
  ASSERT_TRUE(Cluster::eventually([&] { return *calls_ >= 23; }, 120s)) << "clock calls: " << *calls_;
  // The usage as KAI's proportion plugin reports it: team-b held the cluster 9 of the window's 10
  // minutes by minute 21, team-a 9 by then too (minutes 12-20).
  http::Endpoint ep;
  ep.port = daemon_->metrics_port();
  ep.tls = false;
  http::HttpClient metrics(ep);
  const std::string text = metrics.request("GET", "/metrics").body;
  const std::string series =
      "kai_queue_gpu_usage{queue_display_name=\"\",queue_metadata_name=\"team-a\",queue_name=\"team-a\"} ";
  const size_t at = text.find(series);
  ASSERT_NE(at, std::string::npos) << text.substr(0, 3000);
  const double team_a_usage = std::stod(text.substr(at + series.size(), 20));
  EXPECT_GT(team_a_usage, 0.5) << "team-a held the cluster most of the last window";
  EXPECT_LE(team_a_usage, 1.0);
  daemon_->stop();
  daemon_.reset();
  // As kai-sim gives it for the same rounds (tests/scenarios/timebased/two-queues-alternate.yaml,
  // tests/core/queue_usage_test.cpp), and as KAI's plot shows.
  EXPECT_EQ(holders(23), "a.bbbbbbbbb.aaaaaaaaa.b");
  expect_replay_matches(cluster_.dir + "/log");

  // kai-log usage: at minute 11 team-b had held the cluster for the whole window (usage 1), which
  // is when team-a reclaimed.
  std::map<std::string, double> team_b;  // evaluation time -> GPU usage
  std::map<std::string, double> team_a;
  std::string last_a;
  const std::string usage_lines = run_kai_log("--log-dir " + cluster_.dir + "/log usage");
  std::istringstream lines(usage_lines);
  for (std::string l; std::getline(lines, l);) {
    const Json j = Json::parse(l, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << l;
    (j["queue"] == "team-b" ? team_b : team_a)[j["at"].get<std::string>()] = j["usage"]["gpu"].get<double>();
    if (j["queue"] == "team-a") last_a = j["at"];
  }
  EXPECT_DOUBLE_EQ(team_b["2027-01-15T08:11:00Z"], 1.0) << usage_lines;
  EXPECT_DOUBLE_EQ(team_a["2027-01-15T08:11:00Z"], 0.0) << usage_lines;

  // kai-sim --log: the session the daemon would run at its last logged cycle, with the usage the log
  // holds (the same kai-log shows for that fetch step).
  const std::string sim = run_command(std::string(KAI_SIM_BIN) + " --log " + cluster_.dir + "/log");
  const Json out = Json::parse(sim.substr(sim.find('{')), nullptr, false);
  ASSERT_FALSE(out.is_discarded()) << sim;
  bool found = false;
  for (const auto& q : out["queues"]) {
    if (q["name"] != "team-a") continue;
    found = true;
    EXPECT_DOUBLE_EQ(q["usage"]["gpu"].get<double>(), team_a[last_a]) << sim;
  }
  EXPECT_TRUE(found) << sim;
}

TEST_F(TimeBasedFairShare, WithoutUsageDbConfigTheFirstQueueKeepsTheCluster) {
  std::ofstream(config_path_) << "actions: allocate, reclaim\n";
  start();
  ASSERT_TRUE(Cluster::eventually([&] { return *calls_ >= 15; }, 120s)) << "clock calls: " << *calls_;
  daemon_->stop();
  daemon_.reset();
  int evictions = 0;
  for_each_event(cluster_.dir + "/log", [&](const events::Event& e) {
    const auto* d = std::get_if<events::DecisionEvent>(&e.payload);
    evictions += d != nullptr && d->decision.kind == events::DecisionKind::kEvict;
    EXPECT_FALSE(std::holds_alternative<events::AllocationChange>(e.payload)) << "a history without usageDBConfig";
  });
  EXPECT_EQ(evictions, 0);
  expect_replay_matches(cluster_.dir + "/log");
}

}  // namespace
}  // namespace kai::e2e
