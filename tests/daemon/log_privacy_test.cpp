// The event log holds every pod of the cluster: its directory and files are the daemon user's alone,
// and the objects it keeps carry no environment variable values or kubectl's last-applied copy
// (docs: README.md "Operations").

#include <sys/stat.h>

#include <filesystem>
#include <set>
#include <string>

#include "actors/daemon/daemon.hpp"
#include "events/event.hpp"
#include "storage/event_log.hpp"
#include "tests/daemon/cluster_fixture.hpp"

namespace kai::e2e {
namespace {

namespace fs = std::filesystem;

constexpr const char* kSecret = "s3cret-token-value";

/// Runs a daemon until the pod `team-a/worker` (with a secret in its env and its last-applied copy)
/// is bound, with a snapshot after every few events; returns the log directory.
std::string run_daemon_with_a_secret(Cluster& cluster) {
  cluster.small(4);
  Json pod = cluster.pod("team-a", "worker", "test", 1);
  pod["spec"]["containers"][0]["env"] =
      Json::array({{{"name", "API_TOKEN"}, {"value", kSecret}},
                   {{"name", "POD_NAME"}, {"valueFrom", {{"fieldRef", {{"fieldPath", "metadata.name"}}}}}}});
  pod["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"] = pod.dump();
  daemon::DaemonOptions o = cluster.daemon_options();
  o.snapshots.every_events = 5;
  daemon::Daemon d(o);
  auto s = d.start();
  EXPECT_TRUE(s.is_ok()) << s.message();
  cluster.create(pod);
  EXPECT_TRUE(
      Cluster::eventually([&] { return !Cluster::node_of(cluster.get_pod("team-a", "worker")).empty(); }));
  d.stop();
  expect_replay_matches(o.log_dir);  // the redacted objects are what every cycle read
  return o.log_dir;
}

TEST(DaemonLogPrivacy, LoggedPodsHoldNoEnvValuesNorLastAppliedCopy) {
  Cluster cluster;
  const std::string dir = run_daemon_with_a_secret(cluster);
  storage::EventLogOptions ro;
  ro.read_only = true;
  auto log = storage::EventLog::open(dir, ro);
  ASSERT_TRUE(log.is_ok()) << log.message();
  int worker_events = 0;
  (void)log.value()->read(
      1, log.value()->last_seq(), [&](uint64_t seq, const storage::Result<events::Event>& e) {
        if (!e.is_ok()) return true;
        const auto* w = std::get_if<events::WatchEvent>(&e.value().payload);
        // The pod's own events (its PodGroup, written by the pod grouper, names it too).
        if (w == nullptr || w->kind != "Pod" || w->object_json.find("\"worker\"") == std::string::npos) return true;
        ++worker_events;
        EXPECT_EQ(w->object_json.find(kSecret), std::string::npos)
            << "event " << seq << ": " << w->object_json;
        EXPECT_EQ(w->object_json.find("last-applied-configuration"), std::string::npos) << "event " << seq;
        EXPECT_NE(w->object_json.find("API_TOKEN"), std::string::npos) << "the variable's name stays";
        return true;
      });
  EXPECT_GT(worker_events, 0);
}

TEST(DaemonLogPrivacy, EveryFileOfTheLogIsOwnerOnlyAfterFlushAndCompaction) {
  ::umask(022);  // a usual default: without the daemon's own umask the log would be 0755 / 0644
  Cluster cluster;
  const std::string dir = run_daemon_with_a_secret(cluster);
  {
    // A flush and a compaction (retention down to one byte) after a snapshot: every kind of file.
    auto log = storage::EventLog::open(dir);
    ASSERT_TRUE(log.is_ok()) << log.message();
    ASSERT_TRUE(log.value()->write_snapshot(log.value()->last_seq(), std::string(300000, 'x')).is_ok());
    storage::RetentionPolicy policy;
    policy.max_bytes = 1;
    policy.keep_snapshots = 1;
    auto r = log.value()->apply_retention(policy, 0);
    ASSERT_TRUE(r.is_ok()) << r.message();
  }
  std::set<std::string> kinds;
  struct stat st {};
  ASSERT_EQ(::stat(dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 077, 0u) << dir << " is " << std::oct << (st.st_mode & 0777);
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    ASSERT_EQ(::stat(e.path().c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 077, 0u) << e.path() << " is " << std::oct << (st.st_mode & 0777);
    const std::string name = e.path().filename().string();
    if (e.path().extension() == ".sst") kinds.insert("SST");
    if (e.path().extension() == ".log") kinds.insert("WAL");
    if (name.rfind("MANIFEST-", 0) == 0) kinds.insert("MANIFEST");
    if (name.rfind("LOG", 0) == 0) kinds.insert("LOG");
  }
  // No RocksDB LOG file: RocksDB logs to the process log (storage/rocksdb_info_log.hpp).
  EXPECT_EQ(kinds, (std::set<std::string>{"MANIFEST", "SST", "WAL"}));
}

}  // namespace
}  // namespace kai::e2e
