// What an operator sees of a running daemon: /readyz as the README states it, the metrics port
// without the admission webhooks, /get-snapshot on localhost, and `--log-level trace`
// (docs: README.md "kai-scheduler").

#include <sys/wait.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "actors/daemon/daemon.hpp"
#include "k8s/http/http_client.hpp"
#include "tests/daemon/cluster_fixture.hpp"

namespace kai::e2e {
namespace {

using http::Endpoint;
using http::HttpClient;

std::string file_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// DaemonTest::TearDown ends every test here with expect_replay_matches on the daemon's log.
class DaemonOperations : public DaemonTest {
 protected:
  void SetUp() override {
    cluster_.small(4);
    require_cycles_ = false;
  }
  /// An in-process daemon with its metrics port on an ephemeral port, and a client of that port.
  void start() {
    start_daemon([](daemon::DaemonOptions& o) { o.metrics_port = 1; });  // ephemeral
    if (!daemon_) return;
    Endpoint ep;
    ep.port = daemon_->metrics_port();
    ep.tls = false;
    client_ = std::make_unique<HttpClient>(ep);
  }
  std::unique_ptr<HttpClient> client_;
};

TEST_F(DaemonOperations, ReadyzSaysSyncedLeaderWithoutElection) {
  start();
  ASSERT_TRUE(Cluster::eventually([&] { return client_->request("GET", "/readyz").status == 200; }));
  EXPECT_EQ(client_->request("GET", "/readyz").body, "ok: synced; leader\n");
}

TEST_F(DaemonOperations, MetricsPortServesNoAdmissionWebhooksButTheLocalSnapshot) {
  start();
  for (const char* path : {"/mutate-pods", "/validate-pods", "/validate-queues", "/validate-podgroups"}) {
    // Only GETs are served there: an AdmissionReview is refused before any webhook sees it.
    const auto r = client_->request("POST", path, "{}");
    EXPECT_EQ(r.status, 405) << path << ": " << r.body;
  }
  ASSERT_TRUE(Cluster::eventually([&] { return client_->request("GET", "/get-snapshot").status == 200; }));
}

TEST_F(DaemonOperations, ReservationNamespaceAndServiceAccountAreCreatedAtStartWhenMissing) {
  auto names = [&](const std::string& kind, const std::string& ns) {
    std::set<std::string> out;
    auto list = cluster_.server->list_objects("v1", kind, ns);
    if (!list.is_ok()) return out;
    const Json parsed = Json::parse(list.value());
    for (const auto& item : parsed["items"]) out.insert(item["metadata"].value("name", ""));
    return out;
  };
  ASSERT_FALSE(names("Namespace", "").count("kai-resource-reservation"));
  start();
  EXPECT_TRUE(names("Namespace", "").count("kai-resource-reservation"));
  EXPECT_TRUE(names("ServiceAccount", "kai-resource-reservation").count("kai-resource-reservation"));
  // A second start finds both and creates nothing.
  daemon_->stop();
  daemon_.reset();
  start();
  EXPECT_EQ(names("ServiceAccount", "kai-resource-reservation").size(), 1u);
}

TEST_F(DaemonOperations, EveryBoundPodGetsOneScheduledEvent) {
  start();
  for (const char* name : {"first", "second"}) cluster_.create(cluster_.pod("team-a", name, "test", 1));
  auto scheduled = [&] {
    std::multiset<std::string> notes;
    auto list = cluster_.server->list_objects("events.k8s.io/v1", "Event", "team-a");
    if (!list.is_ok()) return notes;
    const Json parsed = Json::parse(list.value());
    for (const auto& e : parsed["items"]) {
      if (e.value("reason", "") == "Scheduled" && e.value("type", "") == "Normal")
        notes.insert(e.value("note", ""));
    }
    return notes;
  };
  const std::multiset<std::string> want = {"Successfully assigned team-a/first to n1",
                                           "Successfully assigned team-a/second to n1"};
  EXPECT_TRUE(Cluster::eventually([&] { return scheduled() == want; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // a few more cycles: still one each
  EXPECT_EQ(scheduled(), want);
}

TEST_F(DaemonOperations, TraceLevelLogsEveryWatchEventAndBadLevelsAreRefused) {
  const std::string out = cluster_.dir + "/trace.log";
  const pid_t pid =
      cluster_.spawn_scheduler({"--log-dir", cluster_.dir + "/log-trace", "--log-level", "trace"}, out);
  EXPECT_TRUE(
      Cluster::eventually([&] { return file_text(out).find("every kind listed") != std::string::npos; }));
  Cluster::stop_scheduler(pid, out);
  const std::string log = file_text(out);
  EXPECT_NE(log.find("watch Node ADDED"), std::string::npos) << log.substr(0, 3000);
  EXPECT_NE(log.find("watch Queue ADDED"), std::string::npos) << log.substr(0, 3000);

  const std::string bad = cluster_.dir + "/bad-level.log";
  const pid_t refused =
      cluster_.spawn_scheduler({"--log-dir", cluster_.dir + "/log-bad", "--log-level", "verbose"}, bad);
  // It must exit at once; one that accepted the level would run until killed.
  int status = 0;
  const bool exited =
      Cluster::eventually([&] { return ::waitpid(refused, &status, WNOHANG) == refused; }, 20s);
  if (!exited) {
    ::kill(refused, SIGKILL);
    ::waitpid(refused, &status, 0);
  }
  ASSERT_TRUE(exited) << "kai-scheduler --log-level verbose kept running: " << file_text(bad);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_NE(WEXITSTATUS(status), 0) << file_text(bad);
}

}  // namespace
}  // namespace kai::e2e
