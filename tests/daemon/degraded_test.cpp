// Degraded modes (docs/degraded-modes.md): a full disk stops decisions, not the daemon, and it goes on
// by itself when space returns; /readyz says whether the daemon can act (log writable, API server
// answering, lists done). The free space is injected (DaemonOptions::test_free_disk), so no real disk
// is filled; the API-server outage is every request answered 500 and every watch cut.

#include <sys/wait.h>

#include <atomic>
#include <fstream>
#include <sstream>
#include <string>

#include "actors/daemon/daemon.hpp"
#include "k8s/http/http_client.hpp"
#include "tests/daemon/cluster_fixture.hpp"

namespace kai::e2e {
namespace {

using http::Endpoint;
using http::HttpClient;

constexpr uint64_t kMiB = 1u << 20;

// DaemonTest::TearDown ends every test here with expect_replay_matches on the daemon's log.
class DegradedModes : public DaemonTest {
 protected:
  void SetUp() override { cluster_.small(8); }
  void start(const std::function<void(daemon::DaemonOptions&)>& adjust = {}) {
    start_daemon([&](daemon::DaemonOptions& o) {
      o.metrics_port = 1;  // ephemeral
      o.min_free_disk = 256 * kMiB;
      o.test_free_disk = [this]() -> model::Result<uint64_t> { return free_.load(); };
      if (adjust) adjust(o);
    });
    if (!daemon_) return;
    Endpoint ep;
    ep.port = daemon_->metrics_port();
    ep.tls = false;
    client_ = std::make_unique<HttpClient>(ep);
  }
  http::Reply readyz() { return client_->request("GET", "/readyz"); }

  std::atomic<uint64_t> free_{1024 * kMiB};
  std::unique_ptr<HttpClient> client_;
};

TEST_F(DegradedModes, BelowTheDiskFloorNothingIsDecidedAndItResumesWhenSpaceReturns) {
  start();
  ASSERT_TRUE(daemon_);
  cluster_.create(cluster_.pod("team-a", "before", "test", 1));
  ASSERT_TRUE(Cluster::eventually([&] { return bound("team-a", "before"); }));
  ASSERT_TRUE(Cluster::eventually([&] { return readyz().status == 200; })) << readyz().body;

  free_ = 10 * kMiB;
  ASSERT_TRUE(Cluster::eventually([&] { return readyz().status == 503; })) << readyz().body;
  const auto full = readyz();
  EXPECT_NE(full.body.find("disk full: 10.0 MiB free"), std::string::npos) << full.body;
  EXPECT_NE(full.body.find("256.0 MiB needed"), std::string::npos) << full.body;
  EXPECT_EQ(client_->request("GET", "/healthz").status, 200);  // alive all the same
  EXPECT_EQ(client_->request("GET", "/metrics").status, 200);
  // While the disk is full: a pod created (its ADDED cannot be logged) and a bound one deleted.
  cluster_.create(cluster_.pod("team-a", "during", "test", 1));
  ASSERT_TRUE(cluster_.server->delete_object("v1", "Pod", "team-a", "before").is_ok());
  const uint64_t cycles = daemon_->cycles();
  std::this_thread::sleep_for(1500ms);  // 30 periods
  EXPECT_EQ(daemon_->cycles(), cycles) << "a cycle ran below the disk floor";
  EXPECT_FALSE(bound("team-a", "during"));

  free_ = 1024 * kMiB;
  // The pod whose ADDED was dropped is listed again and bound: nothing acknowledged was lost.
  ASSERT_TRUE(Cluster::eventually([&] { return bound("team-a", "during"); })) << readyz().body;
  ASSERT_TRUE(Cluster::eventually([&] { return readyz().status == 200; })) << readyz().body;
  EXPECT_GT(daemon_->cycles(), cycles);
}

TEST_F(DegradedModes, StartingOnAFullDiskWaitsReadOnlyAndStartsWhenSpaceReturns) {
  // A log with something in it first, as after a run.
  start();
  ASSERT_TRUE(daemon_);
  cluster_.create(cluster_.pod("team-a", "first", "test", 1));
  ASSERT_TRUE(Cluster::eventually([&] { return bound("team-a", "first"); }));
  daemon_->stop();
  daemon_.reset();

  free_ = 1 * kMiB;
  start();
  ASSERT_TRUE(daemon_);
  const auto waiting = readyz();
  EXPECT_EQ(waiting.status, 503);
  EXPECT_NE(waiting.body.find("disk full: 1048576 bytes free"), std::string::npos) << waiting.body;
  EXPECT_NE(waiting.body.find("open read-only"), std::string::npos) << waiting.body;
  EXPECT_EQ(client_->request("GET", "/healthz").status, 200);
  cluster_.create(cluster_.pod("team-a", "second", "test", 1));
  std::this_thread::sleep_for(1500ms);
  EXPECT_FALSE(bound("team-a", "second"));
  EXPECT_EQ(daemon_->cycles(), 0u);

  free_ = 1024 * kMiB;
  ASSERT_TRUE(Cluster::eventually([&] { return bound("team-a", "second"); })) << readyz().body;
  ASSERT_TRUE(Cluster::eventually([&] { return readyz().status == 200; })) << readyz().body;
}

TEST_F(DegradedModes, ReadyzIsNotReadyWhileTheApiServerFailsAndReadyAfter) {
  start([](daemon::DaemonOptions& o) { o.api_contact_window = 2s; });
  ASSERT_TRUE(daemon_);
  cluster_.create(cluster_.pod("team-a", "p1", "test", 1));
  ASSERT_TRUE(Cluster::eventually([&] { return bound("team-a", "p1"); }));
  ASSERT_TRUE(Cluster::eventually([&] { return readyz().status == 200; })) << readyz().body;
  // An idle cluster stays ready: the daemon asks the server something when it has been quiet.
  std::this_thread::sleep_for(3s);
  EXPECT_EQ(readyz().status, 200) << readyz().body;

  apiserver::Faults outage;
  outage.internal_errors = 1000000;
  cluster_.server->set_faults(outage);
  cluster_.server->drop_watches();
  const auto began = std::chrono::steady_clock::now();
  ASSERT_TRUE(Cluster::eventually([&] { return readyz().status == 503; }, 10s)) << readyz().body;
  const auto outage_seen = std::chrono::steady_clock::now() - began;
  const auto down = readyz();
  EXPECT_NE(down.body.find("API server not reached for"), std::string::npos) << down.body;
  EXPECT_LT(outage_seen, 6s);
  EXPECT_EQ(client_->request("GET", "/healthz").status, 200);

  cluster_.server->set_faults({});
  ASSERT_TRUE(Cluster::eventually([&] { return readyz().status == 200; }, 20s)) << readyz().body;
  cluster_.create(cluster_.pod("team-a", "p2", "test", 1));
  ASSERT_TRUE(Cluster::eventually([&] { return bound("team-a", "p2"); }));
}

std::string file_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The flag through the real binary and statvfs: a floor above any disk waits read-only, decides
// nothing and stops cleanly; a floor that is not a quantity is refused.
TEST(MinFreeDiskFlag, AFloorAboveTheDiskWaitsAndABadOneIsRefused) {
  Cluster c;
  c.small(4);
  const std::string log_dir = c.dir + "/event-log";
  const std::string out = c.dir + "/scheduler.log";
  // A log first, so that the wait opens it read-only.
  pid_t pid = c.spawn_scheduler({"--log-dir", log_dir, "--schedule-period", "30ms"}, out);
  c.create(c.pod("team-a", "p1", "test", 1));
  ASSERT_TRUE(Cluster::eventually([&] { return !Cluster::node_of(c.get_pod("team-a", "p1")).empty(); }));
  Cluster::stop_scheduler(pid, out);

  pid = c.spawn_scheduler({"--log-dir", log_dir, "--schedule-period", "30ms", "--min-free-disk", "8Pi"}, out);
  ASSERT_TRUE(Cluster::eventually(
      [&] { return file_text(out).find("the event log is open read-only") != std::string::npos; }, 10s))
      << file_text(out);
  EXPECT_NE(file_text(out).find("--min-free-disk is 9007199254740992"), std::string::npos) << file_text(out);
  c.create(c.pod("team-a", "p2", "test", 1));
  std::this_thread::sleep_for(1s);
  int status = 0;
  EXPECT_EQ(::waitpid(pid, &status, WNOHANG), 0) << "kai-scheduler exited on a full disk";
  EXPECT_TRUE(Cluster::node_of(c.get_pod("team-a", "p2")).empty());
  Cluster::stop_scheduler(pid, out);

  pid = c.spawn_scheduler({"--log-dir", log_dir, "--min-free-disk", "lots"}, out);
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 2) << file_text(out);
  EXPECT_NE(file_text(out).find("--min-free-disk lots"), std::string::npos) << file_text(out);
  expect_replay_matches(log_dir);
}

}  // namespace
}  // namespace kai::e2e
