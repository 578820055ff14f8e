// A kept session equals a built one (actors/scheduler/core/session_keeper.hpp): over random clusters
// and random steps of what a live cluster does between cycles (binds confirmed, pods finishing or
// deleted, PodGroups written, now and then a node or a new pod), each cycle is run twice on the
// same input, once with the keeper and once built afresh, and everything it records and leaves in
// its session must be the same.
#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <random>
#include <sstream>
#include <string>

#include "actors/scheduler/core/cycle.hpp"
#include "actors/scheduler/core/grouping_memo.hpp"
#include "actors/scheduler/core/session_keeper.hpp"
#include "events/event_json.hpp"
#include "events/projection.hpp"
#include "k8s/model/kinds.hpp"
#include "k8s/model/time.hpp"
#include "k8s/model/well_known_names.hpp"
#include "tests/core/node_usage_text.hpp"
#include "tools/kai-gen/generator.hpp"

namespace {

using namespace kai::core;
namespace model = kai::model;
namespace events = kai::events;

constexpr int64_t kStart = 1767225600;

/// The cluster as the daemon's cuts give it: objects never change in place; a changed object is a
/// new one at the same position. Every version stays alive, so no address is reused.
struct LiveCluster {
  model::ClusterObjects base;
  model::ObjectRefs refs;
  std::deque<model::Pod> pods;
  std::deque<model::PodGroup> pod_groups;
  std::deque<model::Node> nodes;
  std::deque<model::Queue> queues;

  model::Pod& change_pod(size_t i) {
    pods.push_back(*refs.pods[i]);
    refs.pods[i] = &pods.back();
    return pods.back();
  }
  model::PodGroup& change_pod_group(size_t k) {
    pod_groups.push_back(*refs.pod_groups[k]);
    refs.pod_groups[k] = &pod_groups.back();
    return pod_groups.back();
  }
};

std::string session_state(const Session& ssn) {
  std::ostringstream out;
  out.precision(17);
  auto qq = [&](const QueueQuantities& q) { out << q.gpu << "," << q.cpu << "," << q.memory << ";"; };
  for (const auto& n : ssn.nodes) kai::core::testing::print_node_usage(out, ssn, n);
  for (const auto& t : ssn.tasks) {
    out << "task " << t.key << " " << t.uid << " " << t.job << " " << t.pod_set << " " << static_cast<int>(t.status)
        << " " << t.node << " " << t.placed_portion << " " << t.constraints << " " << t.ghost << " " << t.ghost_of;
    kai::core::testing::print_resources(out, ssn, t.req);
    for (const auto& g : t.gpu_groups) out << " " << g;
    out << "\n";
  }
  for (const auto& j : ssn.jobs) {
    out << "job " << j.key << " " << j.uid << " " << j.queue << " " << j.priority << " " << j.preemptible << " "
        << j.min_member << " " << j.active_allocated << " " << j.pending << " " << j.last_start.value_or(-1) << " "
        << j.stale_since.value_or(-1);
    for (uint32_t t : j.tasks) out << " t" << t;
    for (const auto& r : j.invalid) out << " | " << r.reason << ": " << r.message;
    for (const auto& r : j.fit_errors) out << " || " << r.reason << ": " << r.message;
    out << "\n";
  }
  for (const auto& q : ssn.queues) {
    out << "queue " << q.name << " ";
    for (const auto* x : {&q.fair_share, &q.allocated, &q.allocated_non_preemptible, &q.request, &q.usage}) qq(*x);
    out << "\n";
  }
  for (const auto& [job, updates] : ssn.annotation_updates) {
    for (const auto& [k, v] : updates) out << "annotate " << job << " " << k << "=" << v.value_or("-") << "\n";
  }
  for (const auto& w : ssn.warnings) out << "warning " << w << "\n";
  return out.str();
}

std::string records_of(const CycleResult& r, uint64_t cycle) {
  std::string out;
  for (const auto& p : cycle_records(r, cycle, 0)) out += events::to_json_line(events::Event{1, 0, events::kSchemaVersion, p}) + "\n";
  for (const auto& p : r.pending) out += "pending " + p.pod + " " + p.message + "\n";
  return out;
}

/// The first line where two texts differ, for a readable failure.
std::string first_difference(const std::string& a, const std::string& b) {
  std::istringstream sa(a), sb(b);
  std::string la, lb;
  while (true) {
    const bool ga = static_cast<bool>(std::getline(sa, la));
    const bool gb = static_cast<bool>(std::getline(sb, lb));
    if (!ga && !gb) return "(none)";
    if (!ga || !gb || la != lb) return "kept: \"" + (ga ? la : "<end>") + "\"\nbuilt: \"" + (gb ? lb : "<end>") + "\"";
  }
}

/// What happens between two cycles, at random: most of it keeps the session, some of it does not.
void step(LiveCluster& c, const events::ScheduleRecords& records, std::mt19937_64& rng, int64_t now) {
  std::uniform_real_distribution<double> u(0, 1);
  std::map<std::string, size_t> at;
  for (size_t i = 0; i < c.refs.pods.size(); ++i) at[model::object_key(c.refs.pods[i]->meta)] = i;
  for (const auto& [seq, assumed] : records.assumed) {
    const events::Decision& d = assumed.decision;
    auto it = at.find(d.pod);
    if (it == at.end() || u(rng) < 0.3) continue;
    if (d.kind == events::DecisionKind::kBind) {
      model::Pod& p = c.change_pod(it->second);
      p.node_name = d.node;
      if (d.gpu_groups.size() == 1) p.meta.labels[model::kGpuGroupLabel] = d.gpu_groups[0];
      if (u(rng) < 0.5) p.phase = "Running";
    } else if (d.kind == events::DecisionKind::kEvict) {
      c.change_pod(it->second).meta.deletion_timestamp = now;
    }
  }
  for (size_t i = 0; i < c.refs.pods.size(); ++i) {
    const model::Pod& p = *c.refs.pods[i];
    if (p.phase == "Running" && u(rng) < 0.03) c.change_pod(i).phase = "Succeeded";
    if (p.meta.deletion_timestamp && !p.node_name.empty() && u(rng) < 0.2) c.change_pod(i).phase = "Failed";
  }
  for (size_t k = 0; k < c.refs.pod_groups.size(); ++k) {
    const double r = u(rng);
    if (r < 0.05) {
      c.change_pod_group(k).meta.annotations[model::kLastStartAnnotation] = model::format_rfc3339(now - 30);
    } else if (r < 0.1) {
      c.change_pod_group(k).meta.resource_version += "1";  // a status write: nothing the session reads
    }
  }
  const double r = u(rng);
  if (r < 0.1 && !c.refs.nodes.empty()) {
    const size_t n = static_cast<size_t>(u(rng) * c.refs.nodes.size()) % c.refs.nodes.size();
    c.nodes.push_back(*c.refs.nodes[n]);
    c.nodes.back().unschedulable = !c.nodes.back().unschedulable;
    c.refs.nodes[n] = &c.nodes.back();
  } else if (r < 0.2 && !c.refs.pods.empty()) {
    model::Pod p = *c.refs.pods[0];
    p.meta.name += "-again";
    p.meta.uid += "-again";
    p.node_name.clear();
    p.phase = "Pending";
    c.pods.push_back(std::move(p));
    c.refs.pods.push_back(&c.pods.back());
  } else if (r < 0.35 && !c.refs.nodes.empty()) {
    // A kubelet's status update that changes nothing the model keeps: the session is kept.
    const size_t n = static_cast<size_t>(u(rng) * c.refs.nodes.size()) % c.refs.nodes.size();
    c.nodes.push_back(*c.refs.nodes[n]);
    c.nodes.back().meta.resource_version += "1";
    c.refs.nodes[n] = &c.nodes.back();
  }
  // The queue controller's status writes: the session is kept.
  for (size_t q = 0; q < c.refs.queues.size(); ++q) {
    if (u(rng) >= 0.1) continue;
    c.queues.push_back(*c.refs.queues[q]);
    c.queues.back().meta.resource_version += "1";
    c.queues.back().resources_status.allocated["nvidia.com/gpu"] += 1000;
    c.refs.queues[q] = &c.queues.back();
  }
}

class KeptSessions : public ::testing::TestWithParam<uint64_t> {};

TEST_P(KeptSessions, EqualBuiltOnesAfterEveryStep) {
  kai::gen::ClusterSpec spec = kai::gen::ClusterSpec::scaled(0.004);
  spec.seed = GetParam();
  spec.pending_groups = 12;
  LiveCluster c;
  c.base = kai::gen::generate(spec);
  c.refs = model::ObjectRefs::of(c.base);
  std::mt19937_64 rng(GetParam() * 6151);
  events::ScheduleRecords records;
  SessionKeeper keeper;
  uint64_t seq = 0;
  int decided = 0;
  for (uint64_t cycle = 1; cycle <= 10; ++cycle) {
    const int64_t now = kStart + static_cast<int64_t>(cycle) * 7;
    CycleInput in;
    in.objects = c.refs;
    in.records = &records;
    in.options.config.actions = SchedulerConfig::defaults().actions;
    in.options.now = now;
    in.options.now_ms = now * 1000 + 250;
    in.options.seed = cycle * 31 + 1;
    in.cycle_id = cycle;
    in.keeper = &keeper;
    CycleResult kept = run_cycle(in);
    in.keeper = nullptr;
    const CycleResult built = run_cycle(in);
    ASSERT_EQ(records_of(kept, cycle), records_of(built, cycle))
        << "cycle " << cycle << ": " << first_difference(records_of(kept, cycle), records_of(built, cycle));
    const std::string a = session_state(*kept.session);
    const std::string b = session_state(*built.session);
    ASSERT_EQ(a, b) << "cycle " << cycle << " (" << keeper.last_rebuild_reason() << "): " << first_difference(a, b);
    decided += static_cast<int>(kept.decisions.size());
    std::vector<events::Payload> batch{events::CycleStart{cycle, 0, cycle, now, in.options.seed, "kai-scheduler", 0,
                                                          in.options.now_ms}};
    for (auto& p : cycle_records(kept, cycle, 0)) batch.push_back(std::move(p));
    for (auto& p : batch) ASSERT_TRUE(events::apply_record(records, events::Event{++seq, 0, events::kSchemaVersion, p}));
    keeper.keep(std::move(kept.session), std::move(kept.refs), kept.patched, nullptr);
    step(c, records, rng, now);
  }
  EXPECT_GT(decided, 0) << "nothing was decided: the property is vacuous";
  EXPECT_GT(keeper.kept(), 0U) << "no cycle kept its session: the property is vacuous";
}

// A LeaderWorkerSet started LeaderReady sizes its group by whether the leader is bound
// (workload_groupers.cpp), which the keeper's comparison of a pod's grouping fields does not see:
// such a cluster builds every session.
TEST(KeptSessions, ALeaderReadyLeaderWorkerSetBuildsEverySession) {
  auto kept_with = [](const std::string& startup_policy) {
    kai::gen::ClusterSpec spec = kai::gen::ClusterSpec::scaled(0.004);
    spec.seed = 5;
    LiveCluster c;
    c.base = kai::gen::generate(spec);
    model::WorkloadOwner lws;
    lws.meta.namespace_ = "default";
    lws.meta.name = "serving";
    lws.meta.uid = "uid-serving";
    lws.group = "leaderworkerset.x-k8s.io";
    lws.kind = "LeaderWorkerSet";
    lws.startup_policy = startup_policy;
    c.base.owners.push_back(lws);
    c.refs = model::ObjectRefs::of(c.base);
    size_t mine = 0;
    while (c.refs.pods[mine]->scheduler_name != "kai-scheduler") ++mine;
    SessionKeeper keeper;
    for (uint64_t cycle = 1; cycle <= 2; ++cycle) {
      CycleInput in;
      in.objects = c.refs;
      in.options.now = kStart;
      in.cycle_id = cycle;
      in.keeper = &keeper;
      CycleResult r = run_cycle(in);
      keeper.keep(std::move(r.session), std::move(r.refs), r.patched, nullptr);
      c.change_pod(mine).meta.resource_version += "1";
    }
    return keeper.kept();
  };
  EXPECT_EQ(kept_with("LeaderCreated"), 1U);
  EXPECT_EQ(kept_with("LeaderReady"), 0U);
}

// The grouping memo keys its entries by pod address (actors/scheduler/core/grouping_memo.hpp). The
// pods a cycle patches with its assumed decisions are copies the cut does not own: the memo holds
// them until its next grouping, or a later copy at a freed one's address would take its entry (with
// a kept session between, the daemon grouped pods into other pods' groups before this was held).
TEST(GroupingMemo, HoldsTheCyclesPatchedPodsUntilItsNextGrouping) {
  kai::gen::ClusterSpec spec = kai::gen::ClusterSpec::scaled(0.004);
  spec.seed = 3;
  const model::ClusterObjects objects = kai::gen::generate(spec);
  GroupingMemo memo;
  const std::shared_ptr<const void> alive(&objects, [](const void*) {});
  events::ScheduleRecords records;
  CycleInput in;
  in.objects = model::ObjectRefs::of(objects);
  in.records = &records;
  in.options.now = kStart;
  in.options.grouping_memo = &memo;
  in.cycle_id = 1;
  memo.hold(alive);
  CycleResult first = run_cycle(in);
  ASSERT_FALSE(first.decisions.empty());
  uint64_t seq = 0;
  for (auto& p : cycle_records(first, 1, 0)) {
    ASSERT_TRUE(events::apply_record(records, events::Event{++seq, 0, events::kSchemaVersion, p}));
  }
  in.cycle_id = 2;
  memo.hold(alive);
  CycleResult second = run_cycle(in);
  ASSERT_FALSE(second.patched->empty()) << "the assumed binds should patch their pods";
  const std::weak_ptr<std::deque<model::Pod>> patched = second.patched;
  second = CycleResult{};
  EXPECT_FALSE(patched.expired());
}

// 16 seeds: each takes about 3 s of CPU under ASan, and CI runs them all (30 passed when written).
INSTANTIATE_TEST_SUITE_P(Seeds, KeptSessions, ::testing::Range<uint64_t>(1, 17),
                         [](const auto& info) { return "seed" + std::to_string(info.param); });

}  // namespace
