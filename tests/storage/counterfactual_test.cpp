// Counterfactual replay on a small hand-written log (docs/counterfactual-replay.md): one 2-GPU node,
// queues team-a and team-b (quota 1 GPU each), a cycle every 10 s from T0 to T0+100 s.
//
// The recording: a-1 and a-2 (team-a, 1 GPU each, created at T0-1) bind in the cycle at T0; b-1
// (team-b) arrives at T0+15; the cycle at T0+20 reclaims a-2 (deleted at T0+21) and the one at T0+30
// binds b-1; a-1 completes at T0+61 (a 61 s run), b-1 at T0+91 (61 s).
//
// Each test works its figures out by hand from those times (comments), then checks the report.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "actors/scheduler/core/behaviour_version.hpp"
#include "actors/scheduler/core/session_flags.hpp"
#include "k8s/model/codec.hpp"
#include "k8s/model/time.hpp"
#include "storage/event_log.hpp"
#include "tests/shell/run_command.hpp"
#include "tests/storage/temp_dir.hpp"
#include "tools/kai-log/counterfactual.hpp"
#include "tools/kai-log/counterfactual_report.hpp"
#include "tools/kai-log/recorded_history.hpp"

namespace kai::kailog {
namespace {

using nlohmann::json;

constexpr int64_t kT0 = 1'800'000'000;  // Unix seconds

json node_json() {
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata", {{"name", "n1"}, {"uid", "node-n1"}}},
          {"status",
           {{"allocatable", {{"cpu", "32"}, {"memory", "256Gi"}, {"pods", "110"}, {"nvidia.com/gpu", "2"}}},
            {"capacity", {{"cpu", "32"}, {"memory", "256Gi"}, {"pods", "110"}, {"nvidia.com/gpu", "2"}}},
            {"conditions", json::array({{{"type", "Ready"}, {"status", "True"}}})}}}};
}

json queue_json(const std::string& name, const std::string& parent, double quota, double limit = -1) {
  json spec = {{"resources",
                {{"gpu", {{"quota", quota}, {"limit", limit}, {"overQuotaWeight", 1}}},
                 {"cpu", {{"quota", -1}, {"limit", -1}, {"overQuotaWeight", 1}}},
                 {"memory", {{"quota", -1}, {"limit", -1}, {"overQuotaWeight", 1}}}}}};
  if (!parent.empty()) spec["parentQueue"] = parent;
  return {{"apiVersion", "scheduling.run.ai/v2"},
          {"kind", "Queue"},
          {"metadata", {{"name", name}, {"uid", "queue-" + name}}},
          {"spec", spec}};
}

json pod_json(const std::string& name, const std::string& queue, int64_t created, const std::string& node = "",
              const std::string& phase = "Pending", const std::string& owner = "") {
  json spec = {{"schedulerName", "kai-scheduler"},
               {"containers", json::array({{{"name", "main"},
                                            {"image", "busybox"},
                                            {"resources", {{"limits", {{"nvidia.com/gpu", "1"}}}}}}})}};
  if (!node.empty()) spec["nodeName"] = node;
  json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata",
               {{"name", name},
                {"namespace", "ns"},
                {"uid", "uid-" + name},
                {"creationTimestamp", model::format_rfc3339(created)},
                {"labels", {{"kai.scheduler/queue", queue}}}}},
              {"spec", spec},
              {"status", {{"phase", phase}}}};
  if (!owner.empty()) {
    pod["metadata"]["ownerReferences"] =
        json::array({{{"apiVersion", "batch/v1"}, {"kind", "Job"}, {"name", owner}, {"uid", "uid-" + owner}}});
  }
  return pod;
}

/// Appends the recording, one record at a time with its own clock.
class Recording {
 public:
  explicit Recording(const std::string& dir) : log_(std::move(storage::EventLog::open(dir)).value()) {}

  void watch(events::WatchType type, const std::string& kind, const json& object, int64_t at_s) {
    append(events::WatchEvent{kind, type, object.dump(), std::to_string(++rv_)}, at_s * 1000);
  }
  void cycle(uint64_t id, int64_t at_s) {
    events::CycleStart c;
    c.cycle_id = id;
    c.config_hash = events::config_hash("", core::kBehaviourVersion, core::encode_session_flags(core::SessionOptions{}));
    c.log_position = last_;
    c.now = at_s;
    c.now_ms = at_s * 1000;
    c.seed = 1;
    append(c, at_s * 1000);
  }
  void decide(uint64_t cycle, events::DecisionKind kind, const std::string& pod, int64_t at_s) {
    events::DecisionEvent d;
    d.cycle_id = cycle;
    d.decision.kind = kind;
    d.decision.action = kind == events::DecisionKind::kEvict ? "reclaim" : "allocate";
    d.decision.pod = "ns/" + pod;
    d.decision.pod_uid = "uid-" + pod;
    d.decision.node = "n1";
    append(d, at_s * 1000);
  }
  storage::EventLog& log() { return *log_; }
  /// `node`, queue default and its child team-a (1 GPU of quota), before T0: the small tests' cluster.
  void small_cluster(const json& node) {
    watch(events::WatchType::kAdded, "Node", node, kT0 - 5);
    watch(events::WatchType::kAdded, "Queue", queue_json("default", "", -1), kT0 - 5);
    watch(events::WatchType::kAdded, "Queue", queue_json("team-a", "default", 1), kT0 - 5);
  }

 private:
  void append(events::Payload p, int64_t at_ms) {
    auto r = log_->append({events::Event{0, at_ms * 1000, events::kSchemaVersion, std::move(p)}});
    ASSERT_TRUE(r) << r.message();
    last_ = r->last_seq;
  }
  std::unique_ptr<storage::EventLog> log_;
  uint64_t last_ = 0;
  int rv_ = 0;
};

/// The story of the file's comment.
void record_story(Recording& r) {
  using events::WatchType;
  r.watch(WatchType::kAdded, "Node", node_json(), kT0 - 5);
  r.watch(WatchType::kAdded, "Queue", queue_json("default", "", -1), kT0 - 5);
  r.watch(WatchType::kAdded, "Queue", queue_json("team-a", "default", 1), kT0 - 5);
  r.watch(WatchType::kAdded, "Queue", queue_json("team-b", "default", 1), kT0 - 5);
  r.watch(WatchType::kAdded, "Pod", pod_json("a-1", "team-a", kT0 - 1), kT0 - 1);
  r.watch(WatchType::kAdded, "Pod", pod_json("a-2", "team-a", kT0 - 1), kT0 - 1);
  uint64_t cycle = 0;
  for (int64_t t = kT0; t <= kT0 + 100; t += 10) {
    r.cycle(++cycle, t);
    if (t == kT0) {
      r.decide(cycle, events::DecisionKind::kBind, "a-1", t);
      r.decide(cycle, events::DecisionKind::kBind, "a-2", t);
      r.watch(WatchType::kModified, "Pod", pod_json("a-1", "team-a", kT0 - 1, "n1", "Running"), t + 1);
      r.watch(WatchType::kModified, "Pod", pod_json("a-2", "team-a", kT0 - 1, "n1", "Running"), t + 1);
    } else if (t == kT0 + 10) {
      r.watch(WatchType::kAdded, "Pod", pod_json("b-1", "team-b", kT0 + 15), kT0 + 15);
    } else if (t == kT0 + 20) {
      r.decide(cycle, events::DecisionKind::kEvict, "a-2", t);
      r.watch(WatchType::kDeleted, "Pod", pod_json("a-2", "team-a", kT0 - 1, "n1", "Running"), t + 1);
    } else if (t == kT0 + 30) {
      r.decide(cycle, events::DecisionKind::kBind, "b-1", t);
      r.watch(WatchType::kModified, "Pod", pod_json("b-1", "team-b", kT0 + 15, "n1", "Running"), t + 1);
    } else if (t == kT0 + 60) {
      r.watch(WatchType::kModified, "Pod", pod_json("a-1", "team-a", kT0 - 1, "n1", "Succeeded"), t + 1);
    } else if (t == kT0 + 90) {
      r.watch(WatchType::kModified, "Pod", pod_json("b-1", "team-b", kT0 + 15, "n1", "Succeeded"), t + 1);
    }
  }
}

std::unique_ptr<storage::EventLog> open_read_only(const std::string& dir) {
  storage::EventLogOptions o;
  o.read_only = true;
  auto log = storage::EventLog::open(dir, o);
  EXPECT_TRUE(log) << log.message();
  return log ? std::move(log).value() : nullptr;
}

/// The counterfactual of the log in `dir` (an empty result, and a failure, when it fails).
CounterfactualResult run_on(const std::string& dir, const CounterfactualOptions& options) {
  auto log = open_read_only(dir);
  if (!log) return {};
  std::ostringstream err;
  auto r = run_counterfactual(*log, options, err);
  EXPECT_TRUE(r) << r.message() << err.str();
  return r ? std::move(r).value() : CounterfactualResult{};
}

const PodComparison& pod(const CounterfactualResult& r, const std::string& name) {
  for (const auto& p : r.pods)
    if (p.key == "ns/" + name) return p;
  ADD_FAILURE() << name << " is not in the report";
  static const PodComparison none;
  return none;
}

const QueueComparison& queue(const CounterfactualReport& r, const std::string& name) {
  for (const auto& q : r.queues)
    if (q.queue == name) return q;
  ADD_FAILURE() << name << " is not in the report";
  static const QueueComparison none;
  return none;
}

class Counterfactual : public ::testing::Test {
 protected:
  void SetUp() override {
    Recording r(dir_.str());
    record_story(r);
  }
  CounterfactualResult run(const CounterfactualOptions& options) { return run_on(dir_.str(), options); }
  storage::testing::TempDir dir_;
};

TEST_F(Counterfactual, TheRecordedColumnIsWhatTheLogShows) {
  const auto result = run({});
  ASSERT_EQ(result.cycles, 11u);
  EXPECT_EQ(result.from_ms, kT0 * 1000);
  EXPECT_EQ(result.to_ms, (kT0 + 100) * 1000);
  const auto report = summarize(result);
  // team-a: a-1 0..61 s, a-2 0..21 s (evicted, deleted at 21): 82 GPU-seconds; one eviction.
  const auto& a = queue(report, "team-a");
  EXPECT_NEAR(a.recorded.gpu_hours, 82.0 / 3600, 1e-9);
  EXPECT_EQ(a.recorded.ends.at(PodEnd::kEvicted), 1u);
  EXPECT_EQ(a.recorded.ends.at(PodEnd::kCompleted), 1u);
  // Waits: created at T0-1, bound at T0 (the deciding cycle's clock): 1 s each.
  EXPECT_DOUBLE_EQ(a.recorded.wait_p50_s, 1.0);
  // team-b: b-1 30..91 s; waited 15 s.
  const auto& b = queue(report, "team-b");
  EXPECT_NEAR(b.recorded.gpu_hours, 61.0 / 3600, 1e-9);
  EXPECT_DOUBLE_EQ(b.recorded.wait_p50_s, 15.0);
  EXPECT_DOUBLE_EQ(b.recorded.wait_p95_s, 15.0);
  EXPECT_EQ(pod(result, "b-1").recorded.bind_cycle, 4u);
  EXPECT_TRUE(pod(result, "a-1").run_time_known);
  EXPECT_FALSE(pod(result, "a-2").run_time_known);  // evicted: its run time is censored
}

TEST_F(Counterfactual, WithoutReclaimTeamBWaitsForACompletion) {
  CounterfactualOptions o;
  o.config_text = "actions: allocate\n";
  const auto result = run(o);
  const auto report = summarize(result);
  // No reclaim: a-2 keeps its GPU to the window's end (its run time is unknown: censored, 0..100 s);
  // a-1 completes at 61 s as recorded, seen by the cycle at 70 s, which binds b-1 (waited 70-15 =
  // 55 s); b-1's recorded 61 s run would end at 131 s, after the window: it runs 70..100 s.
  const auto& a = queue(report, "team-a");
  EXPECT_NEAR(a.counterfactual.gpu_hours, (61.0 + 100.0) / 3600, 1e-9);
  EXPECT_EQ(a.counterfactual.ends.count(PodEnd::kEvicted), 0u);
  EXPECT_EQ(a.counterfactual.ends.at(PodEnd::kRunningAtEnd), 1u);
  const auto& b = queue(report, "team-b");
  EXPECT_NEAR(b.counterfactual.gpu_hours, 30.0 / 3600, 1e-9);
  EXPECT_DOUBLE_EQ(b.counterfactual.wait_p50_s, 55.0);
  EXPECT_EQ(pod(result, "b-1").counterfactual.bind_cycle, 8u);
  EXPECT_EQ(pod(result, "b-1").counterfactual.end, PodEnd::kRunningAtEnd);
  EXPECT_EQ(report.censored, 1u);  // a-2
  EXPECT_EQ(report.placed_differently, 1u);  // b-1: cycle 8, not 4
  // The allocation series at T0+50: recorded a-1 + b-1 = (1, 1); counterfactual a-1 + a-2 = (2, 0).
  bool seen = false;
  for (const auto& s : report.allocation) {
    if (s.ms != (kT0 + 50) * 1000) continue;
    seen = true;
    EXPECT_EQ(s.gpus.at("team-a"), std::make_pair(1.0, 2.0));
    EXPECT_EQ(s.gpus.at("team-b"), std::make_pair(1.0, 0.0));
  }
  EXPECT_TRUE(seen) << "a window of 11 cycles is sampled at its 11 cycle times";
}

TEST_F(Counterfactual, WithTeamALimitedToOneGpuItsSecondPodWaits) {
  CounterfactualOptions o;
  auto objects = model::decode_snapshot(queue_json("team-a", "default", 1, 1).dump());
  ASSERT_TRUE(objects) << objects.message();
  o.queues = objects->queues;
  const auto result = run(o);
  const auto report = summarize(result);
  // team-a may hold 1 GPU: the cycle at T0 binds a-1 only. b-1 takes the free GPU at 20 s (waited
  // 5 s) and, running its recorded 61 s, completes at 81 s. a-1 completes at 61 s; the cycle at
  // 70 s binds a-2 (waited 71 s), which runs to the window's end (censored). Nobody is evicted.
  const auto& a = queue(report, "team-a");
  EXPECT_NEAR(a.counterfactual.gpu_hours, (61.0 + 30.0) / 3600, 1e-9);
  EXPECT_DOUBLE_EQ(a.counterfactual.wait_p50_s, 1.0);
  EXPECT_DOUBLE_EQ(a.counterfactual.wait_p95_s, 71.0);
  const auto& b = queue(report, "team-b");
  EXPECT_NEAR(b.counterfactual.gpu_hours, 61.0 / 3600, 1e-9);
  EXPECT_DOUBLE_EQ(b.counterfactual.wait_p50_s, 5.0);
  EXPECT_EQ(pod(result, "b-1").counterfactual.end, PodEnd::kCompleted);
  EXPECT_EQ(pod(result, "a-2").counterfactual.bind_cycle, 8u);
  for (const auto& q : report.queues) EXPECT_EQ(q.counterfactual.ends.count(PodEnd::kEvicted), 0u) << q.queue;
}

TEST_F(Counterfactual, DefaultRuntimeEndsCensoredRuns) {
  CounterfactualOptions o;
  o.config_text = "actions: allocate\n";
  o.default_runtime_ms = 30'000;
  const auto result = run(o);
  // a-2 (censored) runs 30 s from T0, so the cycle at 30 s binds b-1 (waited 15 s).
  EXPECT_EQ(pod(result, "a-2").counterfactual.end, PodEnd::kCompleted);
  EXPECT_EQ(pod(result, "a-2").counterfactual.end_ms, (kT0 + 30) * 1000);
  EXPECT_EQ(pod(result, "b-1").counterfactual.bind_cycle, 4u);
}

TEST_F(Counterfactual, TheWindowSelectsCycles) {
  CounterfactualOptions o;
  o.from_ms = (kT0 + 25) * 1000;
  o.to_ms = (kT0 + 65) * 1000;
  const auto result = run(o);
  EXPECT_EQ(result.cycles, 4u);  // 30, 40, 50, 60
  // a-1 was running when the window began (bound before it): it is not a wait of the window.
  const auto report = summarize(result);
  EXPECT_EQ(queue(report, "team-a").recorded.waits, 0u);
  EXPECT_NEAR(queue(report, "team-a").recorded.gpu_hours, 36.0 / 3600, 1e-9);  // a-1, 25..61 s
  o.from_ms = (kT0 + 200) * 1000;
  o.to_ms.reset();
  auto log = open_read_only(dir_.str());
  ASSERT_TRUE(log);
  std::ostringstream err;
  auto none = run_counterfactual(*log, o, err);
  ASSERT_FALSE(none);
  EXPECT_NE(none.message().find("no recorded cycle"), std::string::npos) << none.message();
}

TEST_F(Counterfactual, TheReportRendersAsTableCsvAndJson) {
  CounterfactualOptions o;
  o.config_text = "actions: allocate\n";
  const auto result = run(o);
  const auto report = summarize(result);
  const std::string table = render_table(report);
  EXPECT_NE(table.find("team-b"), std::string::npos) << table;
  EXPECT_NE(table.find("15.0 -> 55.0"), std::string::npos) << table;  // b-1's wait, recorded -> counterfactual
  const std::string csv = render_csv(report);
  EXPECT_EQ(csv.rfind("queue,world,metric,time,value\n", 0), 0u) << csv;
  EXPECT_NE(csv.find("team-b,counterfactual,wait_p50_s,,55.000\n"), std::string::npos) << csv;
  EXPECT_NE(csv.find("team-a,recorded,ended_evicted,,1\n"), std::string::npos) << csv;
  EXPECT_NE(csv.find("team-a,counterfactual,ended_running_at_end,,1\n"), std::string::npos) << csv;
  // a-1 completed and a-2 was evicted as recorded; without reclaim a-2 and b-1 run to the end.
  EXPECT_NE(table.find("completed 2 -> 1, deleted 0 -> 0, evicted 1 -> 0, running at end 0 -> 2, never bound 0 -> 0"),
            std::string::npos)
      << table;
  const auto j = json::parse(render_json(report));
  EXPECT_EQ(j["summary"]["placedDifferently"], 1);
  EXPECT_EQ(j["queues"].size(), 2u);
  EXPECT_EQ(j["pods"].size(), 3u);
  EXPECT_EQ(j["allocation"].size(), 11u);
}

TEST_F(Counterfactual, TheCommandLineRefusesBadInputWithAReason) {
  const std::string base = std::string(KAI_LOG_BIN) + " --log-dir " + dir_.str() + " replay ";
  auto r = test_shell::run_command(base + "--queues /nonexistent.yaml 2>&1");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.out.find("--queues /nonexistent.yaml: cannot be read"), std::string::npos) << r.out;
  r = test_shell::run_command(base + "--counterfactual --from yesterday 2>&1");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.out.find("--from"), std::string::npos) << r.out;
  r = test_shell::run_command(base + "--format csv 2>&1");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.out.find("needs --counterfactual"), std::string::npos) << r.out;
  r = test_shell::run_command(base + "--counterfactual --format csv");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("team-a,recorded,gpu_hours,,0.0228\n"), std::string::npos) << r.out;
}

TEST(CounterfactualHistory, PodsAControllerRecreatedWithin30sOfAnEvictionAreFlagged) {
  storage::testing::TempDir dir;
  {
    Recording r(dir.str());
    using events::WatchType;
    r.small_cluster(node_json());
    r.watch(WatchType::kAdded, "Pod", pod_json("x-1", "team-a", kT0 - 1, "n1", "Running", "job-x"), kT0 - 1);
    r.cycle(1, kT0);
    r.decide(1, events::DecisionKind::kEvict, "x-1", kT0);
    r.watch(WatchType::kDeleted, "Pod", pod_json("x-1", "team-a", kT0 - 1, "n1", "Running", "job-x"), kT0 + 1);
    r.watch(WatchType::kAdded, "Pod", pod_json("x-2", "team-a", kT0 + 5, "", "Pending", "job-x"), kT0 + 5);
    r.watch(WatchType::kAdded, "Pod", pod_json("x-3", "team-a", kT0 + 45, "", "Pending", "job-x"), kT0 + 45);
    r.watch(WatchType::kAdded, "Pod", pod_json("y-1", "team-a", kT0 + 6, "", "Pending", "job-y"), kT0 + 6);
    r.cycle(2, kT0 + 50);
  }
  auto log = open_read_only(dir.str());
  ASSERT_TRUE(log);
  std::ostringstream err;
  auto h = read_recorded_history(*log, err);
  ASSERT_TRUE(h) << h.message();
  EXPECT_TRUE(h->pods.at("uid-x-1").evicted.has_value());
  EXPECT_EQ(h->pods.at("uid-x-1").evict_cycle, 1u);
  EXPECT_TRUE(h->pods.at("uid-x-2").recreated_after_eviction);   // same owner, 5 s after
  EXPECT_FALSE(h->pods.at("uid-x-3").recreated_after_eviction);  // 45 s after
  EXPECT_FALSE(h->pods.at("uid-y-1").recreated_after_eviction);  // another owner
  EXPECT_EQ(h->eviction_latency_ms(), 1000);
  auto result = run_counterfactual(*log, {}, err);
  ASSERT_TRUE(result) << result.message();
  EXPECT_EQ(summarize(*result).recreated_after_eviction, 1u);
}

TEST(CounterfactualWakes, APodFinishingOnlyInTheSimulationWakesACycleTheRecordingNeverRan) {
  // One GPU. p-1 runs from the cycle at T0 to the end (its run time is not in the recording); p-2
  // arrives at T0+5 and waits. The recorded daemon, idle, ran its next cycle only at T0+100.
  storage::testing::TempDir dir;
  json one_gpu = node_json();
  one_gpu["status"]["allocatable"]["nvidia.com/gpu"] = "1";
  one_gpu["status"]["capacity"]["nvidia.com/gpu"] = "1";
  {
    Recording r(dir.str());
    using events::WatchType;
    r.small_cluster(one_gpu);
    r.watch(WatchType::kAdded, "Pod", pod_json("p-1", "team-a", kT0 - 1), kT0 - 1);
    r.cycle(1, kT0);
    r.decide(1, events::DecisionKind::kBind, "p-1", kT0);
    r.watch(WatchType::kModified, "Pod", pod_json("p-1", "team-a", kT0 - 1, "n1", "Running"), kT0 + 1);
    r.watch(WatchType::kAdded, "Pod", pod_json("p-2", "team-a", kT0 + 5), kT0 + 5);
    r.cycle(2, kT0 + 10);
    r.cycle(3, kT0 + 100);
  }
  CounterfactualOptions options;
  options.default_runtime_ms = 20'000;
  const auto result = run_on(dir.str(), options);
  // p-1 finishes at T0+20 in the simulation: a cycle runs then and binds p-2 (waited 15 s), not at
  // the recording's next cycle (T0+100); p-2 finishes at T0+40, a second added cycle.
  EXPECT_EQ(result.added_cycles, 2u);
  const auto& p2 = pod(result, "p-2");
  ASSERT_TRUE(p2.counterfactual.bind_ms.has_value());
  EXPECT_EQ(*p2.counterfactual.bind_ms, (kT0 + 20) * 1000);
  EXPECT_EQ(p2.counterfactual.bind_cycle, 2u) << "an added cycle carries the number of the recorded one before it";
  EXPECT_DOUBLE_EQ(queue(summarize(result), "team-a").counterfactual.wait_p95_s, 15.0);
  EXPECT_FALSE(p2.recorded.bind_ms.has_value());
}

TEST(CounterfactualDeletion, APodItsUserIsDeletingIsNotEvictedByTheSimulation) {
  storage::testing::TempDir dir;
  {
    Recording r(dir.str());
    using events::WatchType;
    r.small_cluster(node_json());
    r.watch(WatchType::kAdded, "Pod", pod_json("z-1", "team-a", kT0 - 1), kT0 - 1);
    r.cycle(1, kT0);
    r.decide(1, events::DecisionKind::kBind, "z-1", kT0);
    r.watch(WatchType::kModified, "Pod", pod_json("z-1", "team-a", kT0 - 1, "n1", "Running"), kT0 + 1);
    r.cycle(2, kT0 + 10);
    json deleting = pod_json("z-1", "team-a", kT0 - 1, "n1", "Running");
    deleting["metadata"]["deletionTimestamp"] = model::format_rfc3339(kT0 + 12);
    r.watch(WatchType::kModified, "Pod", deleting, kT0 + 12);  // graceful: terminating until 25 s
    r.cycle(3, kT0 + 20);
    r.watch(WatchType::kDeleted, "Pod", deleting, kT0 + 25);
    r.cycle(4, kT0 + 30);
  }
  const auto result = run_on(dir.str(), {});
  const auto& z = pod(result, "z-1");
  EXPECT_EQ(z.counterfactual.end, PodEnd::kDeletedByUser);
  EXPECT_EQ(z.counterfactual.end_ms, (kT0 + 25) * 1000);
  EXPECT_EQ(z.recorded.end, PodEnd::kDeletedByUser);
}

}  // namespace
}  // namespace kai::kailog
