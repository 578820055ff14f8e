// SIGKILL the kai-scheduler process in the middle of binding and start it again on the same event
// log: it resumes, no pod is bound twice, and the end state equals a run without the restart.

#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <thread>

#include "storage/event_log.hpp"
#include "storage/restore.hpp"
#include "tests/daemon/cluster_fixture.hpp"

namespace kai::e2e {
namespace {

/// One binder worker, so that slow binds queue behind each other and the kill lands among them.
pid_t spawn_scheduler(const Cluster& c, const std::string& log_dir, const std::string& out) {
  return c.spawn_scheduler({"--log-dir", log_dir, "--schedule-period", "30ms", "--binder-workers", "1"},
                           out);
}

/// Namespace team-a, nodes n0 to n3 with 8 GPUs each, queues default -> test.
void team_a_on_four_nodes(Cluster& c) {
  c.namespace_("team-a");
  for (int n = 0; n < 4; ++n) c.node("n" + std::to_string(n), 8);
  c.test_queues();
}

TEST(Restart, SigkillMidLoadResumesWithoutDoubleBinds) {
  Cluster c;
  team_a_on_four_nodes(c);
  const std::string log_dir = c.dir + "/event-log";
  const std::string out = c.dir + "/scheduler.log";
  // Binds are slow enough (50 ms each on the server, one at a time: 1.5 s for all) that the kill
  // lands in the middle of them.
  c.slow_binds(std::chrono::milliseconds(50));
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

  // The decisions the kill left without an outcome are held (events::kUnconfirmedBindHoldMs, 30 s)
  // before they are decided again: the killed run may have sent them.
  pid = spawn_scheduler(c, log_dir, out);
  ASSERT_TRUE(Cluster::eventually([&] { return bound_count() == kPods; }, 120s));
  Cluster::stop_scheduler(pid, out);

  // No pod was bound twice: one binding request per pod reached the server.
  EXPECT_EQ(c.server->request_counts()["create pods/binding"], static_cast<uint64_t>(kPods));
  // Same end state as without the restart: every pod on a node, no node over its 8 GPUs.
  std::map<std::string, int> per_node;
  for (const auto& p : c.pods("team-a")) ++per_node[Cluster::node_of(p)];
  for (const auto& [node, n] : per_node) EXPECT_LE(n, 8) << node;
  // The log says what happened to the decisions the kill interrupted: a binder outcome, or the watch
  // showed the pod bound first and the decision was settled by it (events/projection.cpp).
  int decisions = 0, outcomes = 0;
  for_each_event(log_dir, [&](const events::Event& e) {
    decisions += std::holds_alternative<events::DecisionEvent>(e.payload);
    outcomes += std::holds_alternative<events::BinderOutcome>(e.payload);
    if (const auto* s = std::get_if<events::AssumedSettled>(&e.payload))
      outcomes += static_cast<int>(s->decision_seqs.size());
  });
  ASSERT_FALSE(HasFatalFailure());
  EXPECT_GE(decisions, kPods);
  EXPECT_GE(outcomes, kPods);
  expect_replay_matches(log_dir);
}

}  // namespace
}  // namespace kai::e2e

namespace kai::e2e {
namespace {

// A restart rebuilds the state from the newest snapshot plus the log after it; each kind's watch then
// goes on from the last resourceVersion the log holds, so that only what changed while the
// scheduler was down reaches the log, and no cycle runs before every kind caught up. When the API
// server no longer keeps the changes since then (410 Expired), the kind is listed and the list is
// diffed against the restored objects instead: the same changes, as a list's difference.
void restart_catches_up_with_what_changed_meanwhile(bool history_compacted) {
  Cluster c;
  team_a_on_four_nodes(c);
  const std::string log_dir = c.dir + "/event-log";
  const std::string out = c.dir + "/scheduler.log";
  const std::vector<std::string> flags = {"--log-dir",         log_dir, "--schedule-period", "30ms",
                                          "--snapshot-events", "20"};
  constexpr int kPods = 20;
  for (int i = 0; i < kPods; ++i) c.create(c.pod("team-a", "p-" + std::to_string(i), "test", 1));
  // Running, and named by the pod grouper's annotation (written behind the bind): nothing of the
  // scheduler's own is left to change the pods while it is down.
  auto running = [&](size_t want) {
    size_t n = 0;
    for (const auto& p : c.pods("team-a")) {
      n += p["status"].value("phase", "") == "Running" &&
           !p["metadata"].value("annotations", Json::object()).value("pod-group-name", "").empty();
    }
    return n == want && c.pods("team-a").size() == want;
  };
  auto open_read_only = [&] {
    storage::EventLogOptions o;
    o.read_only = true;
    auto log = storage::EventLog::open(log_dir, o);
    EXPECT_TRUE(log.is_ok()) << log.message();
    return std::move(log).value();
  };

  pid_t pid = c.spawn_scheduler(flags, out);
  ASSERT_TRUE(Cluster::eventually([&] { return running(kPods); }, 60s));
  std::this_thread::sleep_for(300ms);  // the last annotations' watch events on their way into the log
  // While the scheduler runs, its compactions may delete a file a read-only open is about to read
  // (RocksDB's read-only mode does not guard against that): a failed open is tried again.
  ASSERT_TRUE(Cluster::eventually([&] {
    storage::EventLogOptions o;
    o.read_only = true;
    auto log = storage::EventLog::open(log_dir, o);
    return log.is_ok() && !log.value()->snapshots().value().empty();
  }));
  Cluster::stop_scheduler(pid, out);
  const uint64_t stopped_at = open_read_only()->last_seq();

  // While it is down: one pod goes, two come.
  ASSERT_TRUE(c.server->delete_object("v1", "Pod", "team-a", "p-0").is_ok());
  ASSERT_TRUE(Cluster::eventually([&] { return c.get_pod("team-a", "p-0").is_null(); }));
  c.create(c.pod("team-a", "late-1", "test", 1));
  c.create(c.pod("team-a", "late-2", "test", 1));
  if (history_compacted) c.server->compact_history();
  c.server->reset_request_counts();

  pid = c.spawn_scheduler(flags, out);
  ASSERT_TRUE(Cluster::eventually([&] { return running(kPods + 1); }, 60s));
  Cluster::stop_scheduler(pid, out);

  std::ifstream in(out);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_NE(text.str().find("restored the state at log position"), std::string::npos) << text.str();
  // The stop took a snapshot at the log's end (or the newest periodic one was there already): the
  // restart read no event after it.
  EXPECT_TRUE(text.str().find("snapshot at stop taken") != std::string::npos ||
              text.str().find("snapshot at stop not needed") != std::string::npos)
      << text.str();
  EXPECT_NE(text.str().find(" + 0 events in "), std::string::npos) << text.str();
  // Resumed: no kind listed again. Compacted: every kind the log had listed is listed again.
  const auto requests = c.server->request_counts();
  auto count = [&](const std::string& what) {
    const auto it = requests.find(what);
    return it == requests.end() ? uint64_t{0} : it->second;
  };
  for (const char* resource : {"pods", "nodes", "queues.scheduling.run.ai"}) {
    if (history_compacted) {
      EXPECT_GE(count(std::string("list ") + resource), 1u) << resource;
    } else {
      EXPECT_EQ(count(std::string("list ") + resource), 0u) << resource << " listed again";
    }
    EXPECT_GE(count(std::string("watch ") + resource), 1u) << resource;
  }

  auto log = open_read_only();
  std::map<std::string, std::map<events::WatchType, int>> until_first_cycle;  // kind -> type -> events
  bool cycle = false;
  (void)log->read(stopped_at + 1, log->last_seq(), [&](uint64_t, const storage::Result<events::Event>& e) {
    if (!e.is_ok()) return true;
    if (std::holds_alternative<events::CycleStart>(e.value().payload)) cycle = true;
    if (const auto* w = std::get_if<events::WatchEvent>(&e.value().payload); w != nullptr && !cycle) {
      ++until_first_cycle[w->kind][w->type];
    }
    return true;
  });
  EXPECT_TRUE(cycle);
  // Cycle ids go on across the restart: an id names one cycle in the whole log.
  uint64_t last_before = 0, first_after = 0;
  (void)log->read(1, log->last_seq(), [&](uint64_t seq, const storage::Result<events::Event>& e) {
    if (!e.is_ok()) return true;
    if (const auto* c = std::get_if<events::CycleStart>(&e.value().payload)) {
      if (seq <= stopped_at) last_before = std::max(last_before, c->cycle_id);
      if (seq > stopped_at && first_after == 0) first_after = c->cycle_id;
    }
    return true;
  });
  EXPECT_GT(last_before, 0u);
  EXPECT_GT(first_after, last_before);
  // Before the first cycle: exactly the two new pods and the deleted one (the watch may also show the
  // deleted pod's last update, a list only its absence), then a bookmark per kind.
  auto& pods = until_first_cycle["Pod"];
  EXPECT_EQ(pods[events::WatchType::kAdded], 2);
  EXPECT_EQ(pods[events::WatchType::kDeleted], 1);
  EXPECT_LE(pods[events::WatchType::kModified], history_compacted ? 0 : 1);
  EXPECT_EQ(until_first_cycle["Node"][events::WatchType::kAdded], 0);
  for (const char* kind : {"Node", "Pod", "Queue", "PodGroup", "PriorityClass", "BindRequest"}) {
    EXPECT_GE(until_first_cycle[kind][events::WatchType::kBookmark], 1) << kind << " caught up before the cycle";
  }

  // The snapshots are sound, and restoring from them equals folding the whole log.
  auto v = log->verify();
  ASSERT_TRUE(v.is_ok());
  EXPECT_TRUE(v.value().ok());
  EXPECT_GE(v.value().snapshots, 1u);
  auto restored = storage::restore_state(*log);
  ASSERT_TRUE(restored.is_ok()) << restored.message();
  EXPECT_GT(restored.value().snapshot_seq, 0u);
  EXPECT_FALSE(restored.value().upgraded) << "this build's snapshot format";
  events::ClusterState folded;
  (void)log->read(1, log->last_seq(), [&](uint64_t, const storage::Result<events::Event>& e) {
    if (e.is_ok()) (void)events::apply(folded, e.value());
    return true;
  });
  folded.seq = log->last_seq();
  EXPECT_TRUE(restored.value().state == folded);
  EXPECT_EQ(folded.pods.size(), static_cast<size_t>(kPods + 1));
  expect_replay_matches(log_dir);  // across the restart, from a snapshot
}

TEST(Restart, RestoresFromASnapshotAndWatchesOnFromWhereTheLogEnds) {
  restart_catches_up_with_what_changed_meanwhile(false);
}

TEST(Restart, ListsWhatChangedMeanwhileWhenTheServerNoLongerKeepsIt) {
  restart_catches_up_with_what_changed_meanwhile(true);
}

}  // namespace
}  // namespace kai::e2e

namespace kai::e2e {
namespace {

// A bind the killed run sent is carried out by the API server after the restart
// (docs/event-ordering.md "Restart: unconfirmed binds"). Until the watch shows it, the restarted
// scheduler holds its node: a pod that now comes first in the queue is not given the same GPU.
TEST(Restart, ABindTheKilledRunSentLandsAfterTheRestartAndItsGpuIsNotGivenTwice) {
  Cluster c;
  c.namespace_("team-a");
  c.node("n0", 1);
  c.test_queues();
  c.priority_class("low", 50);
  c.priority_class("high", 200);
  const std::string log_dir = c.dir + "/event-log";
  const std::string out = c.dir + "/scheduler.log";
  // Allocate only: the test is about who is given the free GPU, not about preemption.
  const std::string config = c.dir + "/allocate-only.yaml";
  std::ofstream(config) << "actions: \"allocate\"\n";
  const std::vector<std::string> flags = {"--log-dir", log_dir, "--schedule-period", "30ms", "--config", config};
  c.slow_binds(std::chrono::milliseconds(5000));
  c.create(c.pod("team-a", "first", "test", 1, "low"));

  pid_t pid = c.spawn_scheduler(flags, out);
  ASSERT_TRUE(Cluster::eventually([&] { return c.server->request_counts()["delayed"] >= 1; }, 30s))
      << "first's bind never reached the server";
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  // Without the hold, the restarted scheduler finds both pods pending and gives n0 to `second`
  // (higher priority) while first's bind is still on its way.
  c.create(c.pod("team-a", "second", "test", 1, "high"));

  pid = c.spawn_scheduler(flags, out);
  ASSERT_TRUE(Cluster::eventually([&] { return Cluster::node_of(c.get_pod("team-a", "first")) == "n0"; }, 30s))
      << "the killed run's bind should land";
  std::this_thread::sleep_for(std::chrono::milliseconds(7000));  // a bind of `second` sent meanwhile would land
  Cluster::stop_scheduler(pid, out);
  EXPECT_EQ(Cluster::node_of(c.get_pod("team-a", "second")), "") << "n0's one GPU was given twice";
  EXPECT_EQ(c.server->request_counts()["create pods/binding"], 1u) << "first was sent a second bind";

  int unconfirmed = 0, settled = 0;
  uint64_t first_decision = 0;
  for_each_event(log_dir, [&](const events::Event& e) {
    if (const auto* d = std::get_if<events::DecisionEvent>(&e.payload); d != nullptr && d->decision.pod == "team-a/first") {
      first_decision = e.seq;
    }
    if (const auto* o = std::get_if<events::BinderOutcome>(&e.payload)) {
      unconfirmed += o->outcome == events::Outcome::kUnconfirmed && o->pod == "team-a/first";
    }
    if (const auto* s = std::get_if<events::AssumedSettled>(&e.payload)) {
      settled += std::count(s->decision_seqs.begin(), s->decision_seqs.end(), first_decision);
    }
  });
  EXPECT_EQ(unconfirmed, 1) << "the restart logs first's bind as unconfirmed";
  EXPECT_EQ(settled, 1) << "the watch showing first bound ends its hold";
  expect_replay_matches(log_dir);
}

}  // namespace
}  // namespace kai::e2e
