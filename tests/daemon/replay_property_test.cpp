// Replay equals live, as a property (docs/one-truth.md): the recorded side is the daemon's own actor
// path against kai-apiserver, with binds slowed by random amounts so that binder outcomes and watch
// confirmations land at random points between cycles, and random pods (whole GPUs, fractions, gangs)
// created and deleted at random times. Replay of the log gives every record again, and counterfactual
// replay with the recorded configuration places every pod as recorded; a log with one input changed
// (a node's capacity, the cycles' seed) does not replay.

#include <random>

#include "actors/daemon/daemon.hpp"
#include "tests/daemon/cluster_fixture.hpp"
#include "tools/kai-log/counterfactual.hpp"
#include "tools/kai-log/counterfactual_report.hpp"

namespace kai::e2e {
namespace {

/// Copies the log at `from` into a new log at `to`, record by record (the same sequence numbers),
/// passing each through `mutate`.
void copy_log(const std::string& from, const std::string& to, const std::function<void(events::Event&)>& mutate) {
  storage::EventLogOptions ro;
  ro.read_only = true;
  auto src = storage::EventLog::open(from, ro);
  ASSERT_TRUE(src.is_ok()) << src.message();
  std::vector<events::Event> all;
  ASSERT_TRUE(src.value()->read(1, UINT64_MAX, [&](uint64_t, const storage::Result<events::Event>& e) {
    EXPECT_TRUE(e.is_ok()) << e.message();
    if (e.is_ok()) all.push_back(e.value());
    return true;
  }));
  ASSERT_EQ(src.value()->retained_from(), 1u) << "the copy assumes an untrimmed log";
  for (auto& e : all) mutate(e);
  auto dst = storage::EventLog::open(to);
  ASSERT_TRUE(dst.is_ok()) << dst.message();
  auto r = dst.value()->append(std::move(all));
  ASSERT_TRUE(r.is_ok()) << r.message();
  ASSERT_EQ(r.value().first_seq, 1u);
}

/// Runs replay on `dir` and returns (exit code, output).
std::pair<int, std::string> replay_of(const std::string& dir) {
  storage::EventLogOptions o;
  o.read_only = true;
  auto log = storage::EventLog::open(dir, o);
  EXPECT_TRUE(log.is_ok()) << log.message();
  if (!log.is_ok()) return {-1, ""};
  std::ostringstream out, err;
  const int code = kailog::replay(*log.value(), {}, out, err);
  return {code, out.str()};
}

/// Counterfactual replay with the recorded configuration places every pod as the recording did: the
/// same node, in the same cycle, its time ending the same way (docs/counterfactual-replay.md).
void expect_counterfactual_reproduces(const std::string& dir) {
  storage::EventLogOptions o;
  o.read_only = true;
  auto log = storage::EventLog::open(dir, o);
  ASSERT_TRUE(log.is_ok()) << log.message();
  std::ostringstream err;
  auto result = kailog::run_counterfactual(*log.value(), {}, err);
  ASSERT_TRUE(result) << result.message() << err.str();
  EXPECT_EQ(result->added_cycles, 0u);
  for (const auto& p : result->pods) {
    EXPECT_EQ(p.counterfactual.node, p.recorded.node) << p.key;
    EXPECT_EQ(p.counterfactual.bind_cycle, p.recorded.bind_cycle) << p.key;
    EXPECT_EQ(kailog::to_string(p.counterfactual.end), kailog::to_string(p.recorded.end)) << p.key;
    EXPECT_EQ(p.counterfactual.end_ms, p.recorded.end_ms) << p.key;
  }
  EXPECT_EQ(kailog::summarize(*result).placed_differently, 0u);
}

TEST(ReplayProperty, TheDaemonsLogReplaysExactlyAndAChangedInputDoesNot) {
  for (uint32_t seed : {11u, 12u, 13u}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937 rng(seed);
    auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    Cluster c;
    c.namespace_("team-a");
    c.namespace_("kai-resource-reservation");
    const int nodes = pick(3, 5);
    for (int n = 0; n < nodes; ++n) c.node("n" + std::to_string(n), 4);
    c.queue("default", "", -1);
    c.queue("qa", "default", 8);
    c.queue("qb", "default", 8);
    daemon::DaemonOptions o = c.daemon_options();
    o.schedule_period = std::chrono::milliseconds(pick(20, 60));
    o.early_cycle_changes = static_cast<uint64_t>(pick(1, 6));
    daemon::Daemon d(o);
    ASSERT_TRUE(d.start().is_ok());

    int created = 0;
    for (int round = 0; round < 12; ++round) {
      apiserver::Faults f;
      f.match = "/binding";
      f.delay = std::chrono::milliseconds(pick(0, 80));  // outcomes arrive before or after the watch
      c.server->set_faults(f);
      const int batch = pick(1, 4);
      for (int i = 0; i < batch; ++i) {
        const std::string name = "p" + std::to_string(created++);
        const std::string queue = pick(0, 1) ? "qa" : "qb";
        switch (pick(0, 2)) {
          case 0:
            c.create(c.pod("team-a", name, queue, pick(1, 2)));
            break;
          case 1:
            c.create(c.pod("team-a", name, queue, 0, "", {{"gpu-fraction", pick(0, 1) ? "0.5" : "0.25"}}));
            break;
          default: {
            c.create({{"apiVersion", "scheduling.run.ai/v2alpha2"},
                      {"kind", "PodGroup"},
                      {"metadata", {{"name", name}, {"namespace", "team-a"}}},
                      {"spec", {{"minMember", 2}, {"queue", queue}}}});
            for (int m = 0; m < 2; ++m)
              c.create(c.pod("team-a", name + "-" + std::to_string(m), queue, 1, "", {{"pod-group-name", name}}));
          }
        }
      }
      if (pick(0, 3) == 0) {  // a running pod finishes: room for the next ones, stale gangs
        for (const auto& p : c.pods("team-a")) {
          if (Cluster::node_of(p).empty()) continue;
          (void)c.server->delete_object("v1", "Pod", "team-a", p["metadata"]["name"].get<std::string>());
          break;
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(pick(0, 150)));
    }
    std::this_thread::sleep_for(1500ms);  // the last binds end
    d.stop();

    const std::string log_dir = c.dir + "/log";
    auto [code, out] = replay_of(log_dir);
    EXPECT_EQ(code, 0) << out.substr(0, 4000);
    EXPECT_NE(out.find(" 0 differences"), std::string::npos) << out.substr(0, 4000);
    expect_counterfactual_reproduces(log_dir);

    // The node that got the most binds, with one GPU instead of four in every event of it.
    std::map<std::string, int> binds;
    bool fractions = false;
    for_each_event(log_dir, [&](const events::Event& e) {
      if (const auto* dec = std::get_if<events::DecisionEvent>(&e.payload)) {
        if (dec->decision.kind == events::DecisionKind::kBind) ++binds[dec->decision.node];
        fractions |= dec->decision.gpu_fraction > 0;
      }
    });
    ASSERT_FALSE(binds.empty()) << "nothing was bound: the property would be empty";
    const std::string busiest =
        std::max_element(binds.begin(), binds.end(), [](auto& a, auto& b) { return a.second < b.second; })->first;
    copy_log(log_dir, c.dir + "/capacity", [&](events::Event& e) {
      auto* w = std::get_if<events::WatchEvent>(&e.payload);
      if (w == nullptr || w->kind != "Node" || w->object_json.find("\"" + busiest + "\"") == std::string::npos)
        return;
      for (size_t at = 0; (at = w->object_json.find("\"nvidia.com/gpu\":\"4\"", at)) != std::string::npos;)
        w->object_json.replace(at, 20, "\"nvidia.com/gpu\":\"1\"");
    });
    auto [c1, o1] = replay_of(c.dir + "/capacity");
    EXPECT_EQ(c1, 1) << o1.substr(0, 2000);
    EXPECT_EQ(o1.find(" 0 differences"), std::string::npos) << "a node's capacity changed nothing: " << o1;

    if (fractions) {
      copy_log(log_dir, c.dir + "/seed", [](events::Event& e) {
        if (auto* s = std::get_if<events::CycleStart>(&e.payload)) s->seed += 2;
      });
      auto [c2, o2] = replay_of(c.dir + "/seed");
      EXPECT_EQ(c2, 1) << o2.substr(0, 2000);
      EXPECT_EQ(o2.find(" 0 differences"), std::string::npos) << "the seed changed nothing: " << o2;
    }
  }
}

}  // namespace
}  // namespace kai::e2e
