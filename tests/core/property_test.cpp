// Properties over random clusters (docs/determinism-and-replay.md): discard() restores the session exactly; no
// node resource and no GPU device is over-committed after a session; gangs are all-or-nothing.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <map>
#include <random>
#include <sstream>

#include "actors/scheduler/core/action.hpp"
#include "actors/scheduler/core/actions/allocate.hpp"
#include "actors/scheduler/core/actions/eviction_common.hpp"
#include "actors/scheduler/core/node_fit.hpp"
#include "actors/scheduler/core/plugins/builtin.hpp"
#include "actors/scheduler/core/pod_status.hpp"
#include "actors/scheduler/core/scheduler_config.hpp"
#include "actors/scheduler/core/session.hpp"
#include "tests/core/node_usage_text.hpp"
#include "tools/kai-gen/generator.hpp"

namespace {

using namespace kai::core;

/// A random small cluster: the kai-gen mix at 20 nodes, with some running pods terminating and some
/// nodes tainted, cordoned or not ready.
kai::model::ClusterObjects random_cluster(uint64_t seed) {
  kai::gen::ClusterSpec spec = kai::gen::ClusterSpec::scaled(0.004);
  spec.seed = seed;
  spec.pending_groups = 12;
  auto objects = kai::gen::generate(spec);
  std::mt19937_64 rng(seed * 7919);
  std::uniform_real_distribution<double> u(0, 1);
  for (auto& p : objects.pods) {
    if (p.phase == "Running" && u(rng) < 0.15) p.meta.deletion_timestamp = 1767225600;
  }
  // Vary the shared-GPU requests: some by memory, some on two devices.
  for (auto& p : objects.pods) {
    if (p.phase != "Pending" || !p.meta.annotations.count("gpu-fraction")) continue;
    const double r = u(rng);
    if (r < 0.3) {
      p.meta.annotations.erase("gpu-fraction");
      p.meta.annotations["gpu-memory"] = "30000";
    } else if (r < 0.5) {
      p.meta.annotations["gpu-fraction-num-devices"] = "2";
    }
  }
  // Some running shared pods alone on their device name no GPU group (as one bound before the label
  // was written): the session names their devices itself.
  std::map<std::string, int> sharers;
  for (const auto& p : objects.pods) {
    if (auto it = p.meta.labels.find("runai-gpu-group"); it != p.meta.labels.end()) ++sharers[it->second];
  }
  for (auto& p : objects.pods) {
    auto it = p.meta.labels.find("runai-gpu-group");
    if (it != p.meta.labels.end() && sharers[it->second] == 1 && u(rng) < 0.3) p.meta.labels.erase(it);
  }
  for (auto& n : objects.nodes) {
    const double r = u(rng);
    if (r < 0.05) n.unschedulable = true;
    if (r >= 0.05 && r < 0.1) n.taints.push_back({"dedicated", "infra", "NoSchedule"});
    if (r >= 0.1 && r < 0.13) n.conditions[0].status = "False";
  }
  return objects;
}

SessionOptions allocate_options() {
  SessionOptions o;
  o.config.actions = {"allocate"};
  o.now = 1767225600;
  return o;
}

std::string fingerprint(const Session& ssn) {
  std::ostringstream out;
  for (const auto& n : ssn.nodes) kai::core::testing::print_node_usage(out, ssn, n);
  for (const auto& t : ssn.tasks) {
    out << t.key << ":" << static_cast<int>(t.status) << ":" << t.node << ":" << t.placed_portion;
    for (const auto& g : t.gpu_groups) out << ":" << g;
    out << "\n";
  }
  for (const auto& q : ssn.queues) {
    out << q.name << ":" << q.allocated.gpu << "," << q.allocated.cpu << "," << q.allocated.memory << ","
        << q.request.gpu << "," << q.request.cpu << "," << q.request.memory << "\n";
  }
  return out.str();
}

class RandomClusters : public ::testing::TestWithParam<uint64_t> {};

TEST_P(RandomClusters, DiscardRestoresTheSessionExactly) {
  const auto objects = random_cluster(GetParam());
  Session ssn(objects, allocate_options());
  const std::string before = fingerprint(ssn);
  for (uint32_t j = 0; j < ssn.jobs.size(); ++j) {
    if (!ssn.jobs[j].invalid.empty() || !ssn.has_pending_tasks(ssn.jobs[j])) continue;
    Statement stmt(ssn);
    bool pipelined = false;
    allocate_job(ssn, stmt, j, pipelined);
    stmt.discard();
    ASSERT_EQ(fingerprint(ssn), before) << "after discarding job " << ssn.jobs[j].key;
  }
}

TEST_P(RandomClusters, NothingIsOverCommitted) {
  const auto objects = random_cluster(GetParam());
  Session ssn(objects, allocate_options());
  allocate_action(ssn);
  for (uint32_t n = 0; n < ssn.nodes.size(); ++n) {
    const NodeInfo& node = ssn.nodes[n];
    // Now (everything but pipelined pods) and later (everything but releasing pods).
    Resources now, later;
    std::map<std::string, std::pair<int64_t, int64_t>> device_now_later;
    for (const auto& t : ssn.tasks) {
      if (t.node != static_cast<int32_t>(n) || !is_active_used(t.status)) continue;
      if (t.status != PodStatus::kPipelined) now += t.req;
      if (t.status != PodStatus::kReleasing) later += t.req;
      for (const auto& g : t.gpu_groups) {
        if (t.status != PodStatus::kPipelined) device_now_later[g].first += t.placed_portion;
        if (t.status != PodStatus::kReleasing) device_now_later[g].second += t.placed_portion;
      }
    }
    int64_t whole_now = now.milli_gpu / 1000, whole_later = later.milli_gpu / 1000;
    for (const auto& [g, portions] : device_now_later) {
      EXPECT_LE(portions.first, 1000) << node.name << " device " << g;
      EXPECT_LE(portions.second, 1000) << node.name << " device " << g;
      whole_now += portions.first > 0;
      whole_later += portions.second > 0;
    }
    EXPECT_TRUE(now.fits_in(node.allocatable)) << node.name;
    EXPECT_TRUE(later.fits_in(node.allocatable)) << node.name;
    EXPECT_LE(whole_now, node.gpu_count) << node.name;
    EXPECT_LE(whole_later, node.gpu_count) << node.name;
  }
}

TEST_P(RandomClusters, GangsAreAllOrNothing) {
  const auto objects = random_cluster(GetParam());
  Session ssn(objects, allocate_options());
  std::vector<int32_t> before(ssn.jobs.size());
  for (uint32_t j = 0; j < ssn.jobs.size(); ++j) before[j] = ssn.active_allocated_count(ssn.jobs[j]);
  allocate_action(ssn);
  for (uint32_t j = 0; j < ssn.jobs.size(); ++j) {
    const JobInfo& job = ssn.jobs[j];
    const int32_t after = ssn.active_allocated_count(job);
    if (after == before[j]) continue;
    EXPECT_GE(after, job.min_member) << job.key << " was partly placed";
  }
}

TEST_P(RandomClusters, SameSeedGivesTheSameDecisions) {
  const auto objects = random_cluster(GetParam());
  auto run = [&] {
    Session ssn(objects, allocate_options());
    allocate_action(ssn);
    std::ostringstream out;
    for (const auto& d : ssn.decisions) {
      out << d.seq << d.pod << d.node;
      for (const auto& g : d.gpu_groups) out << g;
      out << "\n";
    }
    return out.str();
  };
  EXPECT_EQ(run(), run());
}

/// allocate's decisions on `objects`, one line each, after `set_up` has adjusted the session.
std::string allocate_decisions(const kai::model::ClusterObjects& objects, const SessionOptions& options,
                               const std::function<void(Session&)>& set_up) {
  Session ssn(objects, options);
  set_up(ssn);
  allocate_action(ssn);
  std::ostringstream out;
  for (const auto& d : ssn.decisions) {
    out << d.seq << " " << d.pod << " " << kai::events::to_string(d.kind) << " " << d.node << "\n";
  }
  return out.str();
}

TEST_P(RandomClusters, GpuFastPathDecidesLikeScoringEveryNode) {
  const auto objects = random_cluster(GetParam());
  auto run = [&](bool fast) {
    return allocate_decisions(objects, allocate_options(), [fast](Session& ssn) { ssn.gpu_fast_path = fast; });
  };
  EXPECT_EQ(run(true), run(false));
}

/// random_cluster with nodes without GPUs beside the GPU nodes (one without allocatable CPU), the GPU
/// nodes' CPU cut at random and the CPU-only pending pods asking varied CPU (some none), so that
/// CPU-only tasks meet every part of their ranking: idle or releasing, nodes with or without GPUs,
/// free CPU, name.
kai::model::ClusterObjects cpu_varied_cluster(uint64_t seed) {
  auto objects = random_cluster(seed);
  std::mt19937_64 rng(seed * 104729);
  std::uniform_int_distribution<int64_t> cpu(100, 40000);
  std::uniform_real_distribution<double> u(0, 1);
  for (auto& n : objects.nodes) {
    if (u(rng) < 0.5) n.allocatable["cpu"] -= cpu(rng) * 3;
  }
  const size_t gpu_nodes = objects.nodes.size();
  for (size_t i = 0; i < 8; ++i) {
    kai::model::Node n = objects.nodes[i % gpu_nodes];
    n.meta.name = "cpu-node-" + std::to_string(7 - i);  // names out of list order
    n.meta.uid = "uid-" + n.meta.name;
    n.meta.labels.erase("nvidia.com/gpu.memory");
    n.meta.labels.erase("nvidia.com/gpu.count");
    n.allocatable.erase("nvidia.com/gpu");
    n.allocatable["cpu"] = i == 0 ? 0 : u(rng) < 0.5 ? cpu(rng) / 2 : cpu(rng) * 3;
    n.capacity = n.allocatable;
    objects.nodes.push_back(std::move(n));
  }
  // Half the pending pods become CPU-only, more than the nodes without GPUs hold.
  for (auto& p : objects.pods) {
    if (p.phase != "Pending") continue;
    const bool gpu = p.meta.annotations.count("gpu-memory") || p.meta.annotations.count("gpu-fraction") ||
                     std::any_of(p.containers.begin(), p.containers.end(),
                                 [](const auto& c) { return c.requests.count("nvidia.com/gpu") > 0; });
    if (gpu && u(rng) < 0.5) continue;
    p.meta.annotations.erase("gpu-fraction");
    p.meta.annotations.erase("gpu-fraction-num-devices");
    p.meta.annotations.erase("gpu-memory");
    for (auto& c : p.containers) {
      c.requests.erase("nvidia.com/gpu");
      c.limits.erase("nvidia.com/gpu");
      c.requests["cpu"] = u(rng) < 0.1 ? 0 : cpu(rng) / 4;
    }
  }
  return objects;
}

/// allocate with KAI's default plugins, or without resourcetype (one order over nodes with and
/// without GPUs).
SessionOptions allocate_options_with_resource_type(bool resource_type) {
  SessionOptions options = allocate_options();
  if (!resource_type) {
    std::erase_if(options.config.plugins,
                  [](const PluginConfig& p) { return p.name == kai::core::plugins::kResourceTypeName; });
  }
  return options;
}

// CPU-only tasks placed by walking the CPU indexes land where scoring every node puts them, with
// resourcetype (nodes without GPUs first) and without it (one order over both kinds of node).
TEST_P(RandomClusters, CpuFastPathDecidesLikeScoringEveryNode) {
  const auto objects = cpu_varied_cluster(GetParam());
  for (const bool resource_type : {true, false}) {
    const SessionOptions options = allocate_options_with_resource_type(resource_type);
    auto run = [&](bool fast) {
      return allocate_decisions(objects, options, [fast](Session& ssn) {
        EXPECT_TRUE(ssn.cpu_fast_path);
        ssn.cpu_fast_path = fast;
      });
    };
    EXPECT_EQ(run(true), run(false)) << (resource_type ? "with" : "without") << " resourcetype";
  }
}

int64_t evictions_seen = 0;

/// Every pending group moves to one queue that deserves every GPU; the other queues deserve none, so
/// what they run is reclaimable.
void make_reclaim_likely(kai::model::ClusterObjects& objects) {
  const std::string owner = objects.pod_groups.front().queue;
  for (auto& pg : objects.pod_groups) pg.queue = owner;
  for (auto& q : objects.queues) {
    const bool on_owner_path = q.meta.name == owner || owner.rfind(q.meta.name + "-", 0) == 0;
    q.gpu = on_owner_path ? kai::model::QueueResource{-1, 1, -1} : kai::model::QueueResource{0, 0, -1};
  }
}

SessionOptions all_actions() {
  SessionOptions o = allocate_options();
  o.config.actions = SchedulerConfig::defaults().actions;
  return o;
}

// The proportion plugin answers a reclaim probe (one victim task, still placed) by a shortcut
// (proportion.cpp, reclaimable_probe); it must answer as its general check does, for every waiting
// group against every placed task, and the five actions must decide the same.
TEST_P(RandomClusters, ReclaimProbesAnswerAsTheGeneralCheck) {
  auto objects = random_cluster(GetParam());
  if (GetParam() % 2 == 0) make_reclaim_likely(objects);
  auto options = [](bool by_tables) {
    SessionOptions o = all_actions();
    for (auto& plugin : o.config.plugins) {
      if (plugin.name == "proportion" && by_tables) plugin.arguments["probeByTables"] = "true";
    }
    return o;
  };
  Session fast(objects, options(false));
  Session general(objects, options(true));
  ASSERT_EQ(fast.reclaim_validator_fns.size(), 1U);
  int probes = 0, allowed = 0;
  for (uint32_t j = 0; j < fast.jobs.size(); ++j) {
    const JobInfo& job = fast.jobs[j];
    if (job.queue == kNoQueue || !fast.has_pending_tasks(job)) continue;
    const QueueQuantities request = fast.queue_request_of(fast.tasks_to_allocate(job));
    for (uint32_t t = 0; t < fast.tasks.size(); ++t) {
      if (!is_active_allocated(fast.tasks[t].status) || fast.tasks[t].job == j) continue;
      const bool a = fast.reclaim_validator_fns[0](job, request, {&t, 1}, true);
      const bool b = general.reclaim_validator_fns[0](general.jobs[j], request, {&t, 1}, true);
      ASSERT_EQ(a, b) << job.key << " probing " << fast.tasks[t].key;
      ++probes;
      allowed += a;
    }
  }
  EXPECT_GT(probes, 0);
  RecordProperty("allowed", allowed);
  auto decisions = [&](bool by_tables) {
    Session ssn(objects, options(by_tables));
    run_actions(ssn, ssn.options().config.actions);
    std::ostringstream out;
    for (const auto& d : ssn.decisions) out << d.seq << " " << d.pod << " " << kai::events::to_string(d.kind) << " " << d.node << "\n";
    return out.str();
  };
  EXPECT_EQ(decisions(false), decisions(true));
}

TEST_P(RandomClusters, FairSharesFitTheirParentAndTheCluster) {
  const auto objects = random_cluster(GetParam());
  Session ssn(objects, all_actions());
  for (double QueueQuantities::*r :
       {&QueueQuantities::gpu, &QueueQuantities::cpu, &QueueQuantities::memory}) {
    // KAI gives each queue its deserved quota (up to what it asks) even when the quotas add up to
    // more than there is to divide (nodes not ready or cordoned): the bound is the larger of the two.
    auto quota_given = [&](const QueueInfo& q, double divided) {
      const double deserved = q.deserved.*r == -1 ? divided : q.deserved.*r;
      const double asked = q.max_allowed.*r == -1 ? q.request.*r : std::min(q.max_allowed.*r, q.request.*r);
      return std::max(0.0, std::min(deserved, asked));
    };
    double roots = 0, roots_quota = 0;
    for (const auto& q : ssn.queues) {
      EXPECT_GE(q.fair_share.*r, 0) << q.name;
      if (q.parent == kNoQueue) {
        roots += q.fair_share.*r;
        roots_quota += quota_given(q, ssn.cluster_total.*r);
      }
      double children = 0, children_quota = 0;
      for (uint32_t c : q.children) {
        children += ssn.queues[c].fair_share.*r;
        children_quota += quota_given(ssn.queues[c], q.fair_share.*r);
      }
      EXPECT_LE(children, std::max(q.fair_share.*r, children_quota) + 1e-6) << q.name;
    }
    EXPECT_LE(roots, std::max(ssn.cluster_total.*r, roots_quota) + 1e-6);
  }
}

TEST_P(RandomClusters, FullSessionNeverEvictsNonPreemptibleWorkAndOverCommitsNothing) {
  auto objects = random_cluster(GetParam());
  // Mix in non-preemptible work: every third running group gets a build-class priority.
  for (size_t i = 0; i < objects.pods.size(); i += 3) objects.pods[i].priority_class_name = "build";
  make_reclaim_likely(objects);
  Session ssn(objects, all_actions());
  run_actions(ssn, ssn.options().config.actions);
  for (const auto& d : ssn.decisions) {
    if (d.kind != kai::events::DecisionKind::kEvict) continue;
    for (const auto& t : ssn.tasks) {
      if (t.key == d.pod && !t.ghost) {
        EXPECT_TRUE(ssn.jobs[t.job].preemptible) << d.pod << " evicted by " << d.action;
      }
    }
  }
  for (uint32_t n = 0; n < ssn.nodes.size(); ++n) {
    Resources later;  // what the node holds once releasing pods are gone: pipelined pods count
    for (const auto& t : ssn.tasks) {
      if (t.node == static_cast<int32_t>(n) && is_active_used(t.status) &&
          t.status != PodStatus::kReleasing) {
        later += t.req;
      }
    }
    EXPECT_TRUE(later.fits_in(ssn.nodes[n].allocatable)) << ssn.nodes[n].name;
  }
  // The per-job counters every action reads agree with the tasks after all the actions' statements.
  for (const auto& job : ssn.jobs) {
    int32_t pending = 0, active = 0;
    for (uint32_t t : job.tasks) {
      pending += ssn.tasks[t].status == PodStatus::kPending;
      active += is_active_allocated(ssn.tasks[t].status);
    }
    EXPECT_EQ(job.pending, pending) << job.key;
    EXPECT_EQ(job.active_allocated, active) << job.key;
  }
  evictions_seen += std::count_if(ssn.decisions.begin(), ssn.decisions.end(),
                                  [](const auto& d) { return d.kind == kai::events::DecisionKind::kEvict; });
}

/// Everything a session decides, in order, and what it leaves each queue and job with, by name: the
/// parts of a session that must not depend on where an object stood in its list.
std::string outcome(const Session& ssn) {
  std::ostringstream out;
  for (const auto& d : ssn.decisions) {
    out << d.seq << " " << d.action << " " << kai::events::to_string(d.kind) << " " << d.pod << " " << d.node
        << " " << d.gpu_fraction << " " << d.reason << " " << d.by << " " << d.queue;
    for (const auto& g : d.gpu_groups) out << " " << g;
    out << "\n";
  }
  std::vector<std::string> rows;
  for (const auto& q : ssn.queues) {
    std::ostringstream row;
    row.precision(17);
    row << "queue " << q.name << " " << q.fair_share.gpu << " " << q.fair_share.cpu << " "
        << q.fair_share.memory << " " << q.allocated.gpu << " " << q.request.gpu;
    rows.push_back(row.str());
  }
  for (const auto& j : ssn.jobs) {
    std::ostringstream row;
    row << "job " << j.key << " " << j.active_allocated << " " << j.pending;
    for (const auto& r : j.invalid) row << " | " << r.reason << ": " << r.message;
    for (const auto& r : j.fit_errors) row << " | " << r.reason << ": " << r.message;
    rows.push_back(row.str());
  }
  std::sort(rows.begin(), rows.end());
  for (const auto& r : rows) out << r << "\n";
  return out.str();
}

/// Reorders some of a cluster's lists.
using Shuffle = std::function<void(kai::model::ClusterObjects&, std::mt19937_64&)>;

/// Runs all five actions on the seed's cluster as listed and on three shufflings of it; fails at the
/// first line of outcome() that differs. KAI_PRINT_OUTCOMES=1 prints both outcomes.
void expect_order_does_not_matter(uint64_t seed, const Shuffle& shuffle) {
  auto objects = random_cluster(seed);
  make_reclaim_likely(objects);
  auto run = [](const kai::model::ClusterObjects& cluster) {
    Session ssn(cluster, all_actions());
    run_actions(ssn, ssn.options().config.actions);
    return outcome(ssn);
  };
  const std::string listed = run(objects);
  ASSERT_NE(listed.find(" bind "), std::string::npos) << "nothing was decided: the property is vacuous";
  std::mt19937_64 rng(seed * 104729);
  for (int round = 0; round < 3; ++round) {
    auto shuffled = objects;
    shuffle(shuffled, rng);
    const std::string again = run(shuffled);
    if (again == listed) continue;
    std::istringstream a(listed), b(again);
    std::string la, lb;
    while (std::getline(a, la) && std::getline(b, lb) && la == lb) {
    }
    if (std::getenv("KAI_PRINT_OUTCOMES")) std::cerr << listed << "=====\n" << again;
    FAIL() << "shuffle " << round << ": in list order \"" << la << "\", shuffled \"" << lb << "\"";
  }
}

// A session kept between cycles appends what arrives instead of rebuilding in list order, so no
// decision may rest on the position an object had in its list (or the dense index the build gave it).
// It found four: a shared device chosen among equal ones by where its group was listed (now by group
// name), GPU sums that differed in their last bit with the order of their terms (now on a grid,
// actors/scheduler/core/queue_sums.hpp), reclaim's fair-share check consuming its victims by job
// index (now in victim order), and the device ids of running fraction pods naming no group drawn from
// the seed in pod order (now made from the pod's uid, gpu_group_ids.hpp).
TEST_P(RandomClusters, DecisionsDoNotDependOnTheOrderObjectsAreListedIn) {
  expect_order_does_not_matter(GetParam(), [](kai::model::ClusterObjects& c, std::mt19937_64& rng) {
    std::shuffle(c.pods.begin(), c.pods.end(), rng);
    std::shuffle(c.pod_groups.begin(), c.pod_groups.end(), rng);
    std::shuffle(c.nodes.begin(), c.nodes.end(), rng);
    std::shuffle(c.queues.begin(), c.queues.end(), rng);
    std::shuffle(c.owners.begin(), c.owners.end(), rng);
  });
}

// Guards the property above against passing vacuously: the seeds together must evict something.
// The clusters of the CPU fast path's test place CPU-only tasks on nodes of both kinds, so its
// comparisons are of placements that happened.
TEST(RandomClustersSummary, CpuVariedClustersPlaceCpuOnlyTasksOnBothKindsOfNode) {
  int64_t on_cpu_nodes = 0, on_gpu_nodes = 0;
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    const auto objects = cpu_varied_cluster(seed);  // the session points into them
    for (const bool resource_type : {true, false}) {
      Session ssn(objects, allocate_options_with_resource_type(resource_type));
      allocate_action(ssn);
      for (const auto& t : ssn.tasks) {
        if (t.status != PodStatus::kBinding || !t.is_cpu_only() || t.req.milli_cpu == 0) continue;
        ++(ssn.nodes[t.node].has_gpus() ? on_gpu_nodes : on_cpu_nodes);
      }
    }
  }
  EXPECT_GT(on_cpu_nodes, 100);
  EXPECT_GT(on_gpu_nodes, 100);
}

TEST(RandomClustersSummary, EvictionsHappen) {
  for (uint64_t seed = 1; seed <= 30 && evictions_seen == 0; ++seed) {
    auto objects = random_cluster(seed);
    make_reclaim_likely(objects);
    Session ssn(objects, all_actions());
    run_actions(ssn, ssn.options().config.actions);
    evictions_seen += std::count_if(ssn.decisions.begin(), ssn.decisions.end(), [](const auto& d) {
      return d.kind == kai::events::DecisionKind::kEvict;
    });
  }
  EXPECT_GT(evictions_seen, 0);
}

INSTANTIATE_TEST_SUITE_P(Seeds, RandomClusters, ::testing::Range<uint64_t>(1, 31),
                         [](const auto& info) { return "seed" + std::to_string(info.param); });

// The eviction actions' job census (actions/eviction_common.hpp) is kept while ssn.decisions does not
// change: after every action, on random clusters, the kept census equals one taken afresh.
bool same_census(const JobCensus& a, const JobCensus& b) {
  return a.ready_pending == b.ready_pending && a.running_preemptible == b.running_preemptible &&
         a.lowest_victim_priority == b.lowest_victim_priority && a.first_victim_job == b.first_victim_job;
}

/// Each queue's first victim as the census finds it is the first job of the full victim order.
void expect_first_victims_lead_the_pool(Session& ssn, const std::string& where) {
  const JobCensus& census = job_census(ssn);
  const auto pool = victim_pool(ssn);
  for (size_t q = 0; q < census.first_victim_job.size(); ++q) {
    const auto& entries = pool->by_queue[q];
    if (entries.empty()) {
      EXPECT_EQ(census.first_victim_job[q], -1) << where << ", queue " << ssn.queues[q].name;
    } else {
      EXPECT_EQ(census.first_victim_job[q], pool->entries[entries.front()].job)
          << where << ", queue " << ssn.queues[q].name;
    }
  }
}

TEST(EvictionCensus, KeptUntilACommitEqualsOneTakenAfreshAfterEveryAction) {
  size_t decided = 0, pending_seen = 0, victims_seen = 0;
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    kai::gen::ClusterSpec spec = kai::gen::ClusterSpec::scaled(0.004);
    spec.seed = seed;
    spec.pending_groups = 16;
    const auto objects = kai::gen::generate(spec);
    SessionOptions options;
    options.config.actions = SchedulerConfig::defaults().actions;
    options.now = 1767225600;
    Session ssn(objects, options);
    for (const std::string& action : options.config.actions) {
      (void)job_census(
          ssn);  // kept from here: a change the action makes without a decision would stay unseen
      run_actions(ssn, {action});
      const JobCensus kept = job_census(ssn);
      ssn.eviction_cache.reset();
      const JobCensus& fresh = job_census(ssn);
      EXPECT_TRUE(same_census(kept, fresh)) << "seed " << seed << ", after " << action;
      expect_first_victims_lead_the_pool(ssn, "seed " + std::to_string(seed) + ", after " + action);
      pending_seen += fresh.ready_pending.size();
      for (const auto& q : fresh.running_preemptible) victims_seen += q.size();
    }
    decided += ssn.decisions.size();
  }
  // The clusters exercise the census: pending jobs, possible victims, and commits that change both.
  EXPECT_GT(decided, 0U);
  EXPECT_GT(pending_seen, 0U);
  EXPECT_GT(victims_seen, 0U);
}

}  // namespace
