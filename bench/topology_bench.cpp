// Topology-aware placement (docs/topology.md; bench/README.md "Topology"): a 3-level topology of 10
// zones x 50 racks x 10 nodes x 8 GPUs (5,000 nodes). One attempt of an 8 x 8-GPU gang that requires
// a rack, on a cluster where most nodes are full; and kai-gen's cluster with its nodes in the same
// layout, the five actions with none or 10 % of the pending groups requiring a rack. Argument of the
// gang attempt: nodes (a multiple of 500); of the session: per-mille of the 5,000-node mix. And the
// same five actions with every tenth pending pod requiring anti-affinity on kubernetes.io/hostname
// (docs/pod-constraints.md).
#include <benchmark/benchmark.h>

#include <map>
#include <memory>
#include <random>

#include "actors/scheduler/core/action.hpp"
#include "actors/scheduler/core/actions/allocate.hpp"
#include "actors/scheduler/core/session.hpp"
#include "tools/kai-gen/generator.hpp"

namespace {

using kai::core::Session;
using kai::core::SessionOptions;

constexpr int kNodesPerRack = 10;
constexpr int kRacksPerZone = 50;
constexpr const char* kZone = "topology.kubernetes.io/zone";
constexpr const char* kRack = "topology.kubernetes.io/rack";

/// Node `i`'s zone and rack labels in the 10 x 50 x 10 layout.
void place_in_layout(kai::model::Node& node, int64_t i) {
  node.meta.labels[kZone] = "zone-" + std::to_string(i / (kRacksPerZone * kNodesPerRack));
  node.meta.labels[kRack] = "rack-" + std::to_string((i / kNodesPerRack) % kRacksPerZone);
  node.meta.labels["kubernetes.io/hostname"] = node.meta.name;
}

kai::model::Topology layout() {
  kai::model::Topology t;
  t.meta.name = "layout";
  t.meta.uid = "uid-layout";
  t.levels = {{kZone, "zone"}, {kRack, "rack"}, {"kubernetes.io/hostname", ""}};
  return t;
}

kai::model::Pod gpu_pod(const std::string& name, int gpus) {
  kai::model::Pod p;
  p.meta.namespace_ = "bench";
  p.meta.name = name;
  p.meta.uid = "uid-" + name;
  p.scheduler_name = "kai-scheduler";
  kai::model::Container ctr;
  ctr.requests = {{"cpu", 4000}, {"memory", 32LL * 1024 * 1024 * 1024 * 1000}, {"nvidia.com/gpu", gpus * 1000}};
  p.containers.push_back(ctr);
  return p;
}

/// `n` nodes of 8 GPUs in the layout; 70 % of them full of running 8-GPU pods (a seeded draw), except
/// in every 25th rack, where one node in ten is; and one pending gang of 8 x 8 GPUs requiring a rack.
const kai::model::ClusterObjects& gang_cluster(int64_t n) {
  static std::map<int64_t, std::unique_ptr<kai::model::ClusterObjects>> cache;
  auto& slot = cache[n];
  if (slot) return *slot;
  slot = std::make_unique<kai::model::ClusterObjects>();
  auto& c = *slot;
  c.queues.push_back(kai::gen::quota_queue("root", "", -1));
  c.queues.push_back(kai::gen::quota_queue("team", "root", -1));
  c.topologies.push_back(layout());
  std::mt19937_64 rng(7);
  for (int64_t i = 0; i < n; ++i) {
    kai::model::Node node;
    node.meta.name = "node-" + std::to_string(100000 + i);
    node.allocatable = {{"cpu", 128000}, {"memory", 1024LL * 1024 * 1024 * 1024 * 1000}, {"pods", 110000},
                        {"nvidia.com/gpu", 8000}};
    node.conditions.push_back({"Ready", "True"});
    place_in_layout(node, i);
    const bool sparse_rack = (i / kNodesPerRack) % 25 == 0;
    const bool full = sparse_rack ? i % kNodesPerRack == 0 : rng() % 10 < 7;
    if (full) {
      auto p = gpu_pod("run-" + std::to_string(i), 8);
      p.node_name = node.meta.name;
      p.phase = "Running";
      p.meta.labels["kai.scheduler/queue"] = "team";
      c.pods.push_back(p);
    }
    c.nodes.push_back(node);
  }
  kai::model::PodGroup pg;
  pg.meta.namespace_ = "bench";
  pg.meta.name = "rack-gang";
  pg.meta.uid = "uid-rack-gang";
  pg.min_member = 8;
  pg.queue = "team";
  pg.topology_constraint = {"layout", "rack", ""};
  c.pod_groups.push_back(pg);
  for (int i = 0; i < 8; ++i) {
    auto p = gpu_pod("gang-" + std::to_string(i), 8);
    p.meta.annotations["pod-group-name"] = "rack-gang";
    p.phase = "Pending";
    c.pods.push_back(p);
  }
  return c;
}

SessionOptions allocate_only() {
  SessionOptions o;
  o.config.actions = {"allocate"};
  o.now = 1767225600;
  return o;
}

/// One attempt of the 8 x 8-GPU rack gang (placed, then discarded).
void BM_TopologyGangAttempt(benchmark::State& state) {
  const auto& objects = gang_cluster(state.range(0));
  Session ssn(objects, allocate_only());
  uint32_t job = 0;
  for (uint32_t j = 0; j < ssn.jobs.size(); ++j) {
    if (ssn.jobs[j].name == "rack-gang") job = j;
  }
  int64_t placed = 0;
  for (auto _ : state) {
    kai::core::Statement stmt(ssn);
    bool pipelined = false;
    placed += kai::core::allocate_job(ssn, stmt, job, pipelined);
    stmt.discard();
  }
  state.counters["placed_fraction"] = static_cast<double>(placed) / static_cast<double>(state.iterations());
  state.counters["nodes"] = static_cast<double>(ssn.nodes.size());
}

/// kai-gen's cluster at `per_mille`, its nodes in the layout; every tenth pending group requires a
/// rack when `constrained`.
const kai::model::ClusterObjects& session_cluster(int64_t per_mille, bool constrained) {
  static std::map<std::pair<int64_t, bool>, std::unique_ptr<kai::model::ClusterObjects>> cache;
  auto& slot = cache[{per_mille, constrained}];
  if (slot) return *slot;
  slot = std::make_unique<kai::model::ClusterObjects>(
      kai::gen::generate(kai::gen::ClusterSpec::scaled(static_cast<double>(per_mille) / 1000.0)));
  auto& c = *slot;
  for (size_t i = 0; i < c.nodes.size(); ++i) place_in_layout(c.nodes[i], static_cast<int64_t>(i));
  c.topologies.push_back(layout());
  if (constrained) {
    for (size_t i = 0; i < c.pod_groups.size(); i += 10) c.pod_groups[i].topology_constraint = {"layout", "rack", ""};
  }
  return c;
}

/// Times the five default actions on `objects`, session build excluded; returns the decisions of the
/// last iteration.
int64_t time_five_actions(benchmark::State& state, const kai::model::ClusterObjects& objects) {
  SessionOptions options = allocate_only();
  options.config.actions = kai::core::SchedulerConfig::defaults().actions;
  int64_t decisions = 0;
  for (auto _ : state) {
    state.PauseTiming();
    auto ssn = std::make_unique<Session>(objects, options);
    state.ResumeTiming();
    kai::core::run_actions(*ssn, options.config.actions);
    benchmark::DoNotOptimize(ssn->decisions.data());
    state.PauseTiming();
    decisions = static_cast<int64_t>(ssn->decisions.size());
    ssn.reset();
    state.ResumeTiming();
  }
  return decisions;
}

/// The five default actions, session build excluded; argument 2: 1 = 10 % of the groups constrained.
void BM_TopologySession(benchmark::State& state) {
  const auto& objects = session_cluster(state.range(0), state.range(1) != 0);
  state.counters["decisions"] = static_cast<double>(time_five_actions(state, objects));
  state.counters["nodes"] = static_cast<double>(objects.nodes.size());
}

/// kai-gen's cluster at `per_mille`, every pod labelled with one of 1,000 app names; with `anti` 1,
/// every tenth pending pod requires anti-affinity to its own app on kubernetes.io/hostname; with 2,
/// to an app no pod has (the same bookkeeping, no placement changed: what the constraint costs
/// apart from the different placements it causes).
const kai::model::ClusterObjects& anti_affinity_cluster(int64_t per_mille, int64_t anti) {
  static std::map<std::pair<int64_t, int64_t>, std::unique_ptr<kai::model::ClusterObjects>> cache;
  auto& slot = cache[{per_mille, anti}];
  if (slot) return *slot;
  slot = std::make_unique<kai::model::ClusterObjects>(
      kai::gen::generate(kai::gen::ClusterSpec::scaled(static_cast<double>(per_mille) / 1000.0)));
  auto& c = *slot;
  for (size_t i = 0; i < c.nodes.size(); ++i) place_in_layout(c.nodes[i], static_cast<int64_t>(i));
  size_t pending = 0;
  for (size_t i = 0; i < c.pods.size(); ++i) {
    kai::model::Pod& p = c.pods[i];
    const std::string app = "app-" + std::to_string(i % 1000);
    p.meta.labels["bench-app"] = app;
    if (!anti || !p.node_name.empty() || p.phase != "Pending" || pending++ % 10 != 0) continue;
    kai::model::PodAffinityTerm term;
    term.label_selector = kai::model::LabelSelector{{{"bench-app", anti == 2 ? "no-" + app : app}}, {}};
    term.topology_key = "kubernetes.io/hostname";
    p.pod_anti_affinity.required.push_back(term);
  }
  return c;
}

/// The five default actions, session build excluded; argument 2: 1 = every tenth pending pod has
/// required anti-affinity on kubernetes.io/hostname, 2 = the same to an app no pod has.
void BM_AntiAffinitySession(benchmark::State& state) {
  const auto& objects = anti_affinity_cluster(state.range(0), state.range(1));
  state.counters["decisions"] = static_cast<double>(time_five_actions(state, objects));
  state.counters["pods"] = static_cast<double>(objects.pods.size());
}

/// The session build alone (Session's constructor), where the index of placed pods' own terms is made.
void BM_AntiAffinitySessionBuild(benchmark::State& state) {
  const auto& objects = anti_affinity_cluster(state.range(0), state.range(1));
  SessionOptions options = allocate_only();
  for (auto _ : state) {
    auto ssn = std::make_unique<Session>(objects, options);
    benchmark::DoNotOptimize(ssn->tasks.data());
    state.PauseTiming();
    ssn.reset();
    state.ResumeTiming();
  }
}

}  // namespace

BENCHMARK(BM_AntiAffinitySession)
    ->ArgNames({"permille", "anti"})
    ->Args({20, 0})
    ->Args({20, 1})
    ->Args({1000, 0})
    ->Args({1000, 1})
    ->Args({1000, 2})
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_AntiAffinitySessionBuild)->ArgNames({"permille", "anti"})->Args({1000, 0})->Args({1000, 1})->Unit(benchmark::kMillisecond);
BENCHMARK(BM_TopologyGangAttempt)->Arg(500)->Arg(5000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_TopologySession)
    ->ArgNames({"permille", "constrained"})
    ->Args({20, 0})
    ->Args({20, 1})
    ->Args({1000, 0})
    ->Args({1000, 1})
    ->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
