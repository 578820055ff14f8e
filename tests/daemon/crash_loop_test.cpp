// A crash loop, end to end (docs/event-ordering.md "Restart: unconfirmed binds"): kai-scheduler is SIGKILLed every 1-4 s (30 restarts by default;
// KAI_CRASH_LOOP_RESTARTS sets another number) while whole-GPU, fraction and gang pods arrive and
// binds are slow (1 s on the server). Without help, it ends with every pod bound exactly once, no GPU over-committed,
// every fraction pod's group held by one reservation pod, no orphaned reservation pod, and a log
// that replays without a difference.

#include <signal.h>
#include <sys/wait.h>

#include <cstdlib>
#include <map>
#include <random>
#include <set>

#include "tests/daemon/cluster_fixture.hpp"

namespace kai::e2e {
namespace {

int restarts_wanted() {
  const char* env = std::getenv("KAI_CRASH_LOOP_RESTARTS");
  return env != nullptr && std::atoi(env) > 0 ? std::atoi(env) : 30;
}

TEST(CrashLoop, SigkillEveryFewSecondsEndsWithEveryPodBoundOnceAndNoOrphanedReservation) {
  Cluster c;
  c.namespace_("team-a");
  c.namespace_("kai-resource-reservation");
  for (int n = 0; n < 4; ++n) c.node("n" + std::to_string(n), 8);
  c.test_queues();
  apiserver::Faults slow;  // binds take long enough for kills to land between a decision and its outcome
  slow.match = "/binding";
  slow.delay = std::chrono::milliseconds(1000);
  c.server->set_faults(slow);

  const std::string log_dir = c.dir + "/crash-log";
  const std::string out = c.dir + "/crash.log";
  auto spawn = [&] {
    return c.spawn_scheduler({"--log-dir", log_dir, "--schedule-period", "50ms", "--snapshot-events", "200",
                              "--resource-reservation-allocation-timeout", "5s"},
                             out);
  };
  // Pods arrive in waves across the kills: 12 whole-GPU pods, 3 gangs of 3, 16 half-GPU pods (29 GPUs
  // of 32).
  std::vector<Json> waves;
  for (int i = 0; i < 12; ++i) waves.push_back(c.pod("team-a", "whole-" + std::to_string(i), "test", 1));
  for (int i = 0; i < 16; ++i) {
    waves.push_back(c.pod("team-a", "frac-" + std::to_string(i), "test", 0, "", {{"gpu-fraction", "0.5"}}));
  }
  for (int g = 0; g < 3; ++g) {
    for (int i = 0; i < 3; ++i) {
      const std::string group = "gang-" + std::to_string(g);
      waves.push_back(c.pod("team-a", group + "-" + std::to_string(i), "test", 1, "", {{"pod-group-name", group}}));
    }
  }
  std::mt19937 rng(17);
  std::shuffle(waves.begin(), waves.end(), rng);
  for (int g = 0; g < 3; ++g) c.pod_group("team-a", "gang-" + std::to_string(g), "test", 3);
  const size_t total = waves.size();

  const int restarts = restarts_wanted();
  size_t created = 0;
  for (int k = 0; k < restarts; ++k) {
    const pid_t pid = spawn();
    const size_t batch = (total - created + (restarts - k) / 2) / std::max(1, (restarts - k) / 2);
    for (size_t i = 0; i < batch && created < total; ++i) c.create(waves[created++]);
    std::this_thread::sleep_for(std::chrono::milliseconds(1000 + rng() % 3000));
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
  }
  while (created < total) c.create(waves[created++]);

  const pid_t pid = spawn();
  auto pods_bound = [&] {
    size_t n = 0;
    for (const auto& p : c.pods("team-a")) n += !Cluster::node_of(p).empty();
    return n;
  };
  auto orphans = [&] {
    std::set<std::pair<std::string, std::string>> used;  // (node, group) of bound fraction pods
    for (const auto& p : c.pods("team-a")) {
      const std::string g = p["metadata"].value("labels", Json::object()).value("runai-gpu-group", "");
      if (!g.empty() && !Cluster::node_of(p).empty()) used.insert({Cluster::node_of(p), g});
    }
    std::vector<std::string> out;
    std::map<std::pair<std::string, std::string>, int> held;
    for (const auto& r : c.pods("kai-resource-reservation")) {
      const std::string g = r["metadata"].value("labels", Json::object()).value("runai-gpu-group", "");
      const std::pair<std::string, std::string> key{Cluster::node_of(r), g};
      if (!used.count(key) || ++held[key] > 1) out.push_back(r["metadata"].value("name", ""));
    }
    return out;
  };
  ASSERT_TRUE(Cluster::eventually([&] { return pods_bound() == total && orphans().empty(); }, 120s))
      << pods_bound() << " of " << total << " bound; reservation pods without a group in use or doubled: "
      << orphans().size();
  Cluster::stop_scheduler(pid, out);

  // Every pod bound exactly once. A bind a kill cut off in flight is logged unconfirmed by the restart
  // and its node held until the watch shows the pod (docs/event-ordering.md "Restart: unconfirmed
  // binds"), so a second binding request reaches the server only when that hold ran out first. Such a
  // request is answered 409, logged as bound where the pod is, and nothing of the pod changes.
  std::set<std::string> abandoned_pods;
  int answered_409 = 0;
  for_each_event(log_dir, [&](const events::Event& e) {
    const auto* o = std::get_if<events::BinderOutcome>(&e.payload);
    if (o == nullptr) return;
    if (o->outcome == events::Outcome::kAbandoned || o->outcome == events::Outcome::kUnconfirmed) {
      abandoned_pods.insert(o->pod);
    }
    if (o->reason.find("the bind answered 409") == std::string::npos) return;
    ++answered_409;
    EXPECT_EQ(o->outcome, events::Outcome::kBound) << o->pod << ": " << o->reason;
    EXPECT_TRUE(abandoned_pods.count(o->pod)) << o->pod << " was sent a second bind without a kill in between";
  });
  EXPECT_EQ(c.server->request_counts()["create pods/binding"], static_cast<uint64_t>(total + answered_409));
  std::map<std::string, double> gpus_on;
  for (const auto& p : c.pods("team-a")) {
    const auto& ann = p["metadata"].value("annotations", Json::object());
    const std::string fraction = ann.value("gpu-fraction", "");
    gpus_on[Cluster::node_of(p)] += fraction.empty() ? 1.0 : 0.0;
  }
  std::map<std::string, int> groups_on;
  std::set<std::pair<std::string, std::string>> reserved;  // (node, group)
  for (const auto& r : c.pods("kai-resource-reservation")) {
    ++groups_on[Cluster::node_of(r)];
    reserved.insert({Cluster::node_of(r), r["metadata"].value("labels", Json::object()).value("runai-gpu-group", "")});
  }
  for (const auto& p : c.pods("team-a")) {  // and every fraction pod's device is held by its group's reservation pod
    const std::string g = p["metadata"].value("labels", Json::object()).value("runai-gpu-group", "");
    if (g.empty()) continue;
    EXPECT_TRUE(reserved.count({Cluster::node_of(p), g})) << p["metadata"].value("name", "") << ": no reservation pod";
  }
  for (const auto& [node, whole] : gpus_on) EXPECT_LE(whole + groups_on[node], 8.0) << node << " over-committed";
  int abandoned = 0;  // decisions a kill interrupted before their outcome
  for_each_event(log_dir, [&](const events::Event& e) {
    const auto* o = std::get_if<events::BinderOutcome>(&e.payload);
    abandoned += o != nullptr &&
                 (o->outcome == events::Outcome::kAbandoned || o->outcome == events::Outcome::kUnconfirmed);
  });
  std::printf("crash loop: %d kills, %zu pods, %d decisions abandoned by a kill, %d binds cut off in flight "
              "answered 409 after the restart\n",
              restarts, total, abandoned, answered_409);
  EXPECT_GT(abandoned, 0) << "no kill landed between a decision and its outcome: not the test";
  expect_replay_matches(log_dir);
}

}  // namespace
}  // namespace kai::e2e
