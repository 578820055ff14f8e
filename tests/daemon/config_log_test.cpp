// The daemon logs its configuration body when it changes (docs/event-ordering.md "Configuration changes"), so that `kai-log replay`
// runs each cycle with the configuration the cycle's start names.

#include <fstream>
#include <utility>
#include <vector>

#include "actors/daemon/daemon.hpp"
#include "events/event.hpp"
#include "storage/event_log.hpp"
#include "actors/scheduler/core/behaviour_version.hpp"
#include "actors/scheduler/core/session_flags.hpp"
#include "tests/daemon/cluster_fixture.hpp"

namespace kai::e2e {
namespace {

struct LoggedConfigs {
  std::vector<events::ConfigChange> changes;
  /// For each CycleStart, how many ConfigChange records preceded it and the hash it names.
  std::vector<std::pair<size_t, uint64_t>> cycles;
};

LoggedConfigs configs_in(const std::string& dir) {
  LoggedConfigs out;
  for_each_event(dir, [&](const events::Event& e) {
    if (const auto* c = std::get_if<events::ConfigChange>(&e.payload)) out.changes.push_back(*c);
    if (const auto* s = std::get_if<events::CycleStart>(&e.payload))
      out.cycles.emplace_back(out.changes.size(), s->config_hash);
  });
  return out;
}

TEST(DaemonConfigLog, TheBodyIsLoggedBeforeTheCyclesThatUseItAndOnlyWhenItChanges) {
  Cluster cluster;
  cluster.small(4);
  const std::string custom = "actions: allocate\n";
  const std::string path = cluster.dir + "/scheduler-config.yaml";
  std::ofstream(path) << custom;

  // Each run schedules one pod, so that it runs (and logs) cycles with its configuration.
  auto run_once = [&](const std::string& config_path, const std::string& pod) {
    daemon::DaemonOptions o = cluster.daemon_options();
    o.config_path = config_path;
    daemon::Daemon d(o);
    auto s = d.start();
    ASSERT_TRUE(s.is_ok()) << s.message();
    cluster.create(cluster.pod("team-a", pod, "test", 1));
    EXPECT_TRUE(
        Cluster::eventually([&] { return !Cluster::node_of(cluster.get_pod("team-a", pod)).empty(); }));
    d.stop();
  };
  run_once(path, "p1");
  run_once(path, "p2");  // a restart with the same body adds nothing
  run_once("", "p3");    // back to KAI's defaults: the empty body is logged

  LoggedConfigs got = configs_in(cluster.dir + "/log");
  ASSERT_EQ(got.changes.size(), 2u);
  const std::string flags = core::encode_session_flags(core::SessionOptions{});
  const uint32_t v = core::kBehaviourVersion;
  EXPECT_EQ(got.changes[0], (events::ConfigChange{events::config_hash(custom, v, flags), custom, v, flags}));
  EXPECT_EQ(got.changes[1], (events::ConfigChange{events::config_hash("", v, flags), "", v, flags}));
  ASSERT_FALSE(got.cycles.empty());
  bool custom_cycles = false, default_cycles = false;
  for (const auto& [changes_before, hash] : got.cycles) {
    ASSERT_GE(changes_before, 1u) << "a cycle started before its configuration was logged";
    EXPECT_EQ(hash, got.changes[changes_before - 1].hash);
    (changes_before == 1 ? custom_cycles : default_cycles) = true;
  }
  EXPECT_TRUE(custom_cycles);
  EXPECT_TRUE(default_cycles);
  expect_replay_matches(cluster.dir + "/log");  // each cycle with its own configuration
}

}  // namespace
}  // namespace kai::e2e
