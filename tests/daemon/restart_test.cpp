// SIGKILL the kai-scheduler process in the middle of binding and start it again on the same event
// log: it resumes, no pod is bound twice, and the end state equals a run without the restart.

#include <signal.h>
#include <sys/wait.h>

#include "storage/event_log.hpp"
#include "tests/daemon/cluster_fixture.hpp"

namespace kai::e2e {
namespace {

pid_t spawn_scheduler(const Cluster& c, const std::string& log_dir, const std::string& out) {
  return c.spawn_scheduler({"--log-dir", log_dir, "--schedule-period", "30ms"}, out);
}

TEST(Restart, SigkillMidLoadResumesWithoutDoubleBinds) {
  Cluster c;
  c.namespace_("team-a");
  for (int n = 0; n < 4; ++n) c.node("n" + std::to_string(n), 8);
  c.queue("default", "", -1);
  c.queue("test", "default", -1);
  const std::string log_dir = c.dir + "/event-log";
  const std::string out = c.dir + "/scheduler.log";
  // Binds are slow enough (20 ms each on the server) that the kill lands in the middle of them.
  apiserver::Faults slow;
  slow.match = "/binding";
  slow.delay = std::chrono::milliseconds(20);
  c.server->set_faults(slow);
  constexpr int kPods = 30;
  for (int i = 0; i < kPods; ++i) c.create(c.pod("team-a", "p-" + std::to_string(i), "test", 1));
  auto bound_count = [&] {
    int n = 0;
    for (const auto& p : c.pods("team-a")) n += !Cluster::node_of(p).empty();
    return n;
  };

  pid_t pid = spawn_scheduler(c, log_dir, out);
  ASSERT_TRUE(Cluster::eventually([&] { return bound_count() >= 3; }));
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  const int before = bound_count();
  EXPECT_LT(before, kPods) << "the kill should land before every pod is bound";

  pid = spawn_scheduler(c, log_dir, out);
  ASSERT_TRUE(Cluster::eventually([&] { return bound_count() == kPods; }, 60s));
  ::kill(pid, SIGTERM);
  ::waitpid(pid, &status, 0);

  // No pod was bound twice: one binding request per pod reached the server.
  EXPECT_EQ(c.server->request_counts()["create pods/binding"], static_cast<uint64_t>(kPods));
  // Same end state as without the restart: every pod on a node, no node over its 8 GPUs.
  std::map<std::string, int> per_node;
  for (const auto& p : c.pods("team-a")) ++per_node[Cluster::node_of(p)];
  for (const auto& [node, n] : per_node) EXPECT_LE(n, 8) << node;
  // The log says what happened to the decisions the kill interrupted.
  auto log = storage::EventLog::open(log_dir, [] {
    storage::EventLogOptions o;
    o.read_only = true;
    return o;
  }());
  ASSERT_TRUE(log.is_ok()) << log.message();
  int decisions = 0, outcomes = 0;
  (void)log.value()->read(1, log.value()->last_seq(), [&](uint64_t, const storage::Result<events::Event>& e) {
    if (!e.is_ok()) return true;
    decisions += std::holds_alternative<events::DecisionEvent>(e.value().payload);
    outcomes += std::holds_alternative<events::BinderOutcome>(e.value().payload);
    return true;
  });
  EXPECT_GE(decisions, kPods);
  EXPECT_GE(outcomes, kPods);
}

}  // namespace
}  // namespace kai::e2e
