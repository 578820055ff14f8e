// A kept session equals a built one (actors/scheduler/core/session_keeper.hpp): over random clusters
// and random steps of what a live cluster does between cycles (binds confirmed, pods finishing or
// deleted, PodGroups written, gangs arriving, pods relabelled, now and then a node), each cycle is run twice on the
// same input, once with the keeper and once built afresh, and everything it records and leaves in
// its session must be the same.
#include "actors/scheduler/core/session_keeper.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <deque>
#include <fstream>
#include <functional>
#include <random>
#include <set>
#include <sstream>
#include <string>

#include "actors/scheduler/core/cycle.hpp"
#include "actors/scheduler/core/gpu_group_users.hpp"
#include "actors/scheduler/core/grouping_memo.hpp"
#include "events/event_json.hpp"
#include "events/projection.hpp"
#include "k8s/model/codec.hpp"
#include "k8s/model/json_codec.hpp"
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
  /// kai-gen's cluster at 0.4 % of its default size, with `pending_groups` waiting groups (0: kai-gen's).
  void generate(uint64_t seed, int32_t pending_groups = 0) {
    kai::gen::ClusterSpec spec = kai::gen::ClusterSpec::scaled(0.004);
    spec.seed = seed;
    if (pending_groups != 0) spec.pending_groups = pending_groups;
    base = kai::gen::generate(spec);
    refs = model::ObjectRefs::of(base);
  }
};

std::string session_state(const Session& ssn) {
  std::ostringstream out;
  out.precision(17);
  auto qq = [&](const QueueQuantities& q) { out << q.gpu << "," << q.cpu << "," << q.memory << ";"; };
  for (const auto& n : ssn.nodes) kai::core::testing::print_node_usage(out, ssn, n);
  // A constraint signature is a cache's key, numbered by first use (session_builder_jobs.cpp): in
  // task order for a build, also after for a kept session whose jobs were laid out anew. Which tasks
  // share one is what matters: they are printed numbered in task order.
  std::map<int32_t, size_t> signature;
  for (const auto& t : ssn.tasks) {
    // The victim solver's ghosts are its scratch (cluster_info.hpp): never reported, they hold
    // nothing once rolled back, and a cycle that repeats its outcome makes none.
    if (t.ghost) continue;
    out << "task " << t.key << " " << t.uid << " " << t.job << " " << t.pod_set << " " << static_cast<int>(t.status)
        << " " << t.node << " " << t.placed_portion << " " << signature.emplace(t.constraints, signature.size()).first->second
        << " " << t.ghost << " " << t.ghost_of;
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

/// Writes that change nothing the actions read (statuses, resourceVersions): after a cycle that
/// decided nothing, the next one repeats its outcome (Session::repeat_last_outcome).
void unread_step(LiveCluster& c, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(0, 1);
  for (size_t i = 0; i < c.refs.pods.size(); ++i) {
    if (u(rng) < 0.05) c.change_pod(i).meta.resource_version += "1";
  }
  for (size_t k = 0; k < c.refs.pod_groups.size(); ++k) {
    if (u(rng) < 0.1) c.change_pod_group(k).meta.resource_version += "1";
  }
  if (!c.refs.nodes.empty()) {
    const size_t n = static_cast<size_t>(u(rng) * c.refs.nodes.size()) % c.refs.nodes.size();
    c.nodes.push_back(*c.refs.nodes[n]);
    c.nodes.back().meta.resource_version += "1";
    c.refs.nodes[n] = &c.nodes.back();
  }
}

/// What happens between two cycles, at random: most of it keeps the session, some of it does not.
/// Returns whether the step was one of unread writes only. With `arrival`, a new gang arrives.
bool step(LiveCluster& c, const events::ScheduleRecords& records, std::mt19937_64& rng, int64_t now, bool arrival) {
  std::uniform_real_distribution<double> u(0, 1);
  if (!arrival && u(rng) < 0.3) {
    unread_step(c, rng);
    return true;
  }
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
  // Pods and PodGroups come and go (the session lays its jobs out anew, session_relayout.cpp): a
  // new gang with its PodGroup, put among the others, or now and then a burst of them in one place
  // (more than the relayout looks ahead for: it then matches through a table); finished or deleted
  // pods removed; a pod relabelled into another group.
  const int gangs = !arrival && u(rng) < 0.1 ? 20 : arrival || u(rng) < 0.35 ? 1 : 0;
  const size_t burst_at = static_cast<size_t>(u(rng) * c.refs.pod_groups.size());
  for (int gang = 0; gang < gangs && !c.refs.pod_groups.empty(); ++gang) {
    const size_t k = gangs > 1 ? std::min(burst_at, c.refs.pod_groups.size() - 1)
                               : static_cast<size_t>(u(rng) * c.refs.pod_groups.size()) % c.refs.pod_groups.size();
    model::PodGroup pg = *c.refs.pod_groups[k];
    const std::string name = "arrival-" + std::to_string(c.pod_groups.size()) + "-" + std::to_string(now);
    pg.meta.name = name;
    pg.meta.uid = "uid-" + name;
    pg.meta.annotations.clear();
    pg.meta.creation_timestamp = now;
    pg.min_member = 1 + static_cast<int32_t>(u(rng) * 3);
    c.pod_groups.push_back(std::move(pg));
    c.refs.pod_groups.insert(c.refs.pod_groups.begin() + static_cast<std::ptrdiff_t>(k), &c.pod_groups.back());
    const model::Pod* like = nullptr;
    for (const model::Pod* p : c.refs.pods) {
      if (p->scheduler_name == "kai-scheduler" && !p->meta.owner_references.empty()) continue;
      if (p->scheduler_name == "kai-scheduler") like = p;
    }
    for (int m = 0; like != nullptr && m < c.pod_groups.back().min_member; ++m) {
      model::Pod p = *like;
      p.meta.namespace_ = c.pod_groups.back().meta.namespace_;
      p.meta.name = name + "-" + std::to_string(m);
      p.meta.uid = "uid-" + p.meta.name;
      p.meta.creation_timestamp = now;
      p.meta.annotations["pod-group-name"] = name;
      p.meta.labels.erase(model::kGpuGroupLabel);
      p.node_name.clear();
      p.phase = "Pending";
      p.conditions.clear();
      p.meta.deletion_timestamp.reset();
      c.pods.push_back(std::move(p));
      const size_t at = static_cast<size_t>(u(rng) * (c.refs.pods.size() + 1)) % (c.refs.pods.size() + 1);
      c.refs.pods.insert(c.refs.pods.begin() + static_cast<std::ptrdiff_t>(at), &c.pods.back());
    }
  }
  if (u(rng) < 0.35) {
    std::erase_if(c.refs.pods, [&](const model::Pod* p) {
      return (p->phase == "Succeeded" || p->phase == "Failed" || p->meta.deletion_timestamp) && u(rng) < 0.5;
    });
  }
  if (u(rng) < 0.15 && !c.refs.pods.empty()) {
    const size_t i = static_cast<size_t>(u(rng) * c.refs.pods.size()) % c.refs.pods.size();
    c.change_pod(i).meta.labels["kai.scheduler/queue"] = c.refs.queues.back()->meta.name;
  }
  if (u(rng) < 0.1 && !c.refs.pod_groups.empty()) {
    const size_t k = static_cast<size_t>(u(rng) * c.refs.pod_groups.size()) % c.refs.pod_groups.size();
    c.refs.pod_groups.erase(c.refs.pod_groups.begin() + static_cast<std::ptrdiff_t>(k));
  }
  // Pods of other schedulers come, change and go on the nodes: GPU reservation pods (for a
  // fraction pod's group, or an orphan's) and others (a DaemonSet's, say). A kept session follows
  // what they hold (SessionBuilder::replace_foreign_pod): a deletion is a refresh, an arrival or a
  // removal a relayout.
  for (size_t i = 0; i < c.refs.pods.size(); ++i) {
    const model::Pod& p = *c.refs.pods[i];
    if (!p.meta.name.starts_with("foreign-")) continue;
    const double r = u(rng);
    if (r < 0.15 && !p.meta.deletion_timestamp) c.change_pod(i).meta.deletion_timestamp = now;
    if (r >= 0.15 && r < 0.2) c.change_pod(i).phase = "Failed";
  }
  if (u(rng) < 0.2) {
    std::erase_if(c.refs.pods, [&](const model::Pod* p) { return p->meta.name.starts_with("foreign-") && u(rng) < 0.4; });
  }
  if (u(rng) < 0.5 && !c.refs.nodes.empty()) {
    const std::string name = "foreign-" + std::to_string(c.pods.size()) + "-" + std::to_string(now);
    model::Pod p;
    p.meta.name = name;
    p.meta.uid = "uid-" + name;
    p.meta.creation_timestamp = now;
    p.scheduler_name = "default-scheduler";
    p.phase = "Running";
    p.node_name = c.refs.nodes[static_cast<size_t>(u(rng) * c.refs.nodes.size()) % c.refs.nodes.size()]->meta.name;
    model::Container container;
    container.name = "main";
    if (u(rng) < 0.7) {
      p.meta.namespace_ = model::kReservationNamespace;
      std::string group = "orphan-" + name;
      const size_t from = static_cast<size_t>(u(rng) * c.refs.pods.size());
      for (size_t k = 0; k < c.refs.pods.size(); ++k) {
        const model::Pod& sharer = *c.refs.pods[(from + k) % c.refs.pods.size()];
        auto label = sharer.meta.labels.find(model::kGpuGroupLabel);
        if (sharer.node_name.empty() || sharer.meta.namespace_ == model::kReservationNamespace ||
            label == sharer.meta.labels.end() || u(rng) < 0.3) {
          continue;
        }
        group = label->second;
        p.node_name = sharer.node_name;
        break;
      }
      p.meta.labels[model::kGpuGroupLabel] = group;
      container.requests["nvidia.com/gpu"] = 1000;
    } else {
      p.meta.namespace_ = "kube-system";
      container.requests["cpu"] = 500;
      container.requests["memory"] = int64_t{1073741824} * 1000;  // 1 GiB, in thousandths of a byte
    }
    container.limits = container.requests;
    p.containers.push_back(std::move(container));
    c.pods.push_back(std::move(p));
    const size_t at = static_cast<size_t>(u(rng) * (c.refs.pods.size() + 1)) % (c.refs.pods.size() + 1);
    c.refs.pods.insert(c.refs.pods.begin() + static_cast<std::ptrdiff_t>(at), &c.pods.back());
  }
  // The queue controller's status writes: the session is kept.
  for (size_t q = 0; q < c.refs.queues.size(); ++q) {
    if (u(rng) >= 0.1) continue;
    c.queues.push_back(*c.refs.queues[q]);
    c.queues.back().meta.resource_version += "1";
    c.queues.back().resources_status.allocated["nvidia.com/gpu"] += 1000;
    c.refs.queues[q] = &c.queues.back();
  }
  return false;
}

/// The watch's echo of some of a cycle's status writes: each PodGroup or Queue patched is replaced
/// by a copy with the patch applied (each with probability `p`: a write not echoed stays awaited).
/// Returns how many were echoed.
int echo_statuses(LiveCluster& c, const std::vector<events::StatusWrite>& writes, std::mt19937_64& rng,
                  double p = 0.7) {
  std::uniform_real_distribution<double> u(0, 1);
  int echoed = 0;
  for (const auto& w : writes) {
    if (w.settled || w.patch_json.empty() || u(rng) >= p) continue;
    const bool group = w.kind == "PodGroup";
    size_t at = group ? c.refs.pod_groups.size() : c.refs.queues.size();
    for (size_t i = 0; i < at; ++i) {
      const auto& meta = group ? c.refs.pod_groups[i]->meta : c.refs.queues[i]->meta;
      if ((group ? model::object_key(meta) : meta.name) == w.object) at = i;
    }
    if (at == (group ? c.refs.pod_groups.size() : c.refs.queues.size())) continue;
    nlohmann::json j = group ? model::encode(*c.refs.pod_groups[at]) : model::encode(*c.refs.queues[at]);
    j.merge_patch(nlohmann::json::parse(w.patch_json));
    model::ClusterObjects decoded;
    if (!model::decode_object_into(j, decoded).is_ok()) continue;
    if (group) {
      c.change_pod_group(at) = decoded.pod_groups.at(0);
    } else {
      c.queues.push_back(decoded.queues.at(0));
      c.refs.queues[at] = &c.queues.back();
    }
    ++echoed;
  }
  return echoed;
}

/// The input of cycle `cycle` on the live cluster with the keeper (kai-gen's defaults, the clock 7 s
/// a cycle from kStart).
CycleInput kept_cycle_input(const LiveCluster& c, const events::ScheduleRecords& records,
                            SessionKeeper& keeper, uint64_t cycle, uint64_t seed) {
  const int64_t now = kStart + static_cast<int64_t>(cycle) * 7;
  CycleInput in;
  in.objects = c.refs;
  in.records = &records;
  in.options.config.actions = SchedulerConfig::defaults().actions;
  in.options.now = now;
  in.options.now_ms = now * 1000 + 250;
  in.options.seed = seed;
  in.cycle_id = cycle;
  in.keeper = &keeper;
  return in;
}

/// Logs the cycle's records as the daemon does: its CycleStart, then what it decided.
void apply_cycle(events::ScheduleRecords& records, const CycleInput& in, const CycleResult& r,
                 uint64_t& seq) {
  std::vector<events::Payload> batch{events::CycleStart{
      in.cycle_id, 0, in.cycle_id, in.options.now, in.options.seed, "kai-scheduler", 0, in.options.now_ms}};
  for (auto& p : cycle_records(r, in.cycle_id, 0)) batch.push_back(std::move(p));
  for (auto& p : batch)
    ASSERT_TRUE(events::apply_record(records, events::Event{++seq, 0, events::kSchemaVersion, p}));
}

class KeptSessions : public ::testing::TestWithParam<uint64_t> {};

TEST_P(KeptSessions, EqualBuiltOnesAfterEveryStep) {
  LiveCluster c;
  c.generate(GetParam(), 12);
  std::mt19937_64 rng(GetParam() * 6151);
  events::ScheduleRecords records;
  SessionKeeper keeper;
  uint64_t seq = 0;
  int decided = 0;
  int repeated = 0;
  int echoed = 0;  // status writes the next cycle's objects show (the status pass's memo follows them)
  int deadlines = 0;  // cycles with a deadline to come (the kept deadline index answered)
  int group_writes = 0;         // PodGroup writes asked (the groups found needing nothing were skipped)
  int group_users_changed = 0;  // cycles whose pods used other GPU groups than the last cycle's
  std::optional<GpuGroupUsers> users_before;
  // Whether the next cycle must repeat the last one's outcome: it decided nothing and wrote no
  // annotation, the step since changed nothing the actions read, no deadline of it has come, and no
  // group is backing off (Session::repeat_last_outcome).
  bool last_quiet = false, unread = false;
  std::optional<int64_t> last_deadline;
  // Random steps, then three that change nothing the actions read.
  constexpr uint64_t kRandomSteps = 8, kCycles = 11;
  // The grouping memo, as the daemon keeps it beside the keeper: a relayout then groups only the
  // pods that came or changed (regrouping.hpp). The cluster's objects outlive it.
  GroupingMemo memo;
  const std::shared_ptr<const void> alive(&c, [](const void*) {});
  for (uint64_t cycle = 1; cycle <= kCycles; ++cycle) {
    const int64_t now = kStart + static_cast<int64_t>(cycle) * 7;
    CycleInput in = kept_cycle_input(c, records, keeper, cycle, cycle * 31 + 1);
    in.options.grouping_memo = &memo;
    memo.hold(alive);
    const uint64_t kept_before = keeper.kept();
    CycleResult kept = run_cycle(in);
    in.options.grouping_memo = nullptr;
    // The memo's entries name only this cycle's pods (the cut's, or the copies the cycle patched):
    // older objects may be freed once the memo holds this cycle's (regrouping.hpp).
    const std::set<const model::Pod*> alive_pods(kept.refs.pods.begin(), kept.refs.pods.end());
    for (const model::Pod* p : memo.pods())
      ASSERT_TRUE(alive_pods.count(p)) << "cycle " << cycle << ": an entry of a pod gone";
    const bool should_repeat = keeper.kept() > kept_before && last_quiet && unread && records.bind_failures.empty() &&
                               (!last_deadline || in.options.now_ms < (*last_deadline - 1) * 1000);
    EXPECT_EQ(kept.outcome_repeated, should_repeat) << "cycle " << cycle;
    in.keeper = nullptr;
    const CycleResult built = run_cycle(in);
    ASSERT_EQ(records_of(kept, cycle), records_of(built, cycle))
        << "cycle " << cycle << ": " << first_difference(records_of(kept, cycle), records_of(built, cycle));
    ASSERT_EQ(kept.next_deadline, built.next_deadline) << "cycle " << cycle;
    // Positions a relayout renumbers rather than finds again.
    ASSERT_EQ(kept.session->reservation_pod_positions(kept.refs),
              built.session->reservation_pod_positions(built.refs))
        << "cycle " << cycle;
    // The GPU groups the pods use, which the kept session counts as pods come, change and go
    // (asked here at every cycle, so that every refresh and relayout follows them).
    const GpuGroupUsers& users = kept.session->gpu_group_users(kept.refs);
    ASSERT_TRUE(users == GpuGroupUsers(kept.refs.pods)) << "cycle " << cycle;
    group_users_changed += users_before && !(*users_before == users) ? 1 : 0;
    users_before = users;
    deadlines += kept.next_deadline.has_value() ? 1 : 0;
    const std::string a = session_state(*kept.session);
    const std::string b = session_state(*built.session);
    ASSERT_EQ(a, b) << "cycle " << cycle << " (" << keeper.last_rebuild_reason() << "): " << first_difference(a, b);
    for (const auto& w : kept.group_writes) group_writes += w.settled ? 0 : 1;
    decided += static_cast<int>(kept.decisions.size());
    repeated += kept.outcome_repeated ? 1 : 0;
    // A reservation pod's clean-up is laid over its pod by the next cycle (assumed): a change of a
    // pod of another scheduler, which the actions read.
    last_quiet = kept.decisions.empty() && kept.cleanups.empty() && kept.session->annotation_updates.empty();
    last_deadline = kept.next_deadline;
    apply_cycle(records, in, kept, seq);
    if (::testing::Test::HasFatalFailure()) return;
    keeper.keep(std::move(kept.session), std::move(kept.refs), kept.patched, nullptr);
    echoed += echo_statuses(c, kept.status_writes, rng);
    if (cycle < kRandomSteps) {
      unread = step(c, records, rng, now, cycle == 3);
    } else {
      unread_step(c, rng);
      unread = true;
    }
  }
  EXPECT_GT(decided, 0) << "nothing was decided: the property is vacuous";
  EXPECT_GT(echoed, 0) << "no status write reached the objects: the property is vacuous there";
  RecordProperty("echoed", echoed);
  EXPECT_GT(deadlines, 0) << "no cycle had a deadline to come: the property is vacuous there";
  EXPECT_GT(group_users_changed, 0) << "the GPU groups in use never changed: the property is vacuous there";
  RecordProperty("group_users_changed", group_users_changed);
  RecordProperty("group_writes", group_writes);
  RecordProperty("deadlines", deadlines);
  EXPECT_GT(keeper.kept(), 0U) << "no cycle kept its session: the property is vacuous";
  RecordProperty("repeated", repeated);
  EXPECT_GT(keeper.regrouped(), 0U) << "no kept session was laid out anew: the property is vacuous there";
  RecordProperty("regrouped", static_cast<int>(keeper.regrouped()));
  RecordProperty("continued", static_cast<int>(memo.continued()));
  EXPECT_GT(memo.continued(), 0U)
      << "no relayout grouped only the pods that changed: the property is vacuous there";
}

/// The status pass of a kept session visits only the groups that may have something to write
/// (actors/scheduler/core/status_memo.hpp). Changes in place, which keep the session without laying
/// it out anew, must reach it: pods finishing in groups whose status was in sync, PodGroup statuses
/// and Queue statuses changed by someone else, writes echoed or left awaited. Each cycle's records
/// equal a built session's.
TEST(KeptSessions, TheStatusPassFollowsChangesInPlace) {
  LiveCluster c;
  c.generate(kai::gen::ClusterSpec::scaled(0.004).seed, 12);
  std::mt19937_64 rng(97);
  std::uniform_real_distribution<double> u(0, 1);
  events::ScheduleRecords records;
  SessionKeeper keeper;
  uint64_t seq = 0;
  int kept_writes = 0;  // PodGroup status writes of kept cycles after the first two
  uint64_t regrouped_before = 0;
  for (uint64_t cycle = 1; cycle <= 12; ++cycle) {
    CycleInput in = kept_cycle_input(c, records, keeper, cycle, cycle);
    CycleResult kept = run_cycle(in);
    if (cycle == 3) regrouped_before = keeper.regrouped();
    in.keeper = nullptr;
    const CycleResult built = run_cycle(in);
    ASSERT_EQ(records_of(kept, cycle), records_of(built, cycle))
        << "cycle " << cycle << ": " << first_difference(records_of(kept, cycle), records_of(built, cycle));
    ASSERT_EQ(kept.next_deadline, built.next_deadline) << "cycle " << cycle;
    if (cycle > 2) {
      kept_writes +=
          static_cast<int>(std::count_if(kept.status_writes.begin(), kept.status_writes.end(),
                                         [](const auto& w) { return w.kind == "PodGroup" && !w.settled; }));
    }
    apply_cycle(records, in, kept, seq);
    if (::testing::Test::HasFatalFailure()) return;
    keeper.keep(std::move(kept.session), std::move(kept.refs), kept.patched, nullptr);
    echo_statuses(c, kept.status_writes, rng, cycle % 3 == 0 ? 0.5 : 1.0);
    if (cycle < 3) continue;  // statuses settle first
    // The cycle's binds confirmed, some running pods finished, some statuses changed by others.
    std::map<std::string, size_t> at;
    for (size_t i = 0; i < c.refs.pods.size(); ++i) at[model::object_key(c.refs.pods[i]->meta)] = i;
    for (const auto& [s, assumed] : records.assumed) {
      auto it = at.find(assumed.decision.pod);
      if (it == at.end() || assumed.decision.kind != events::DecisionKind::kBind) continue;
      model::Pod& p = c.change_pod(it->second);
      p.node_name = assumed.decision.node;
      p.phase = "Running";
      if (assumed.decision.gpu_groups.size() == 1)
        p.meta.labels[model::kGpuGroupLabel] = assumed.decision.gpu_groups[0];
    }
    for (size_t i = 0; i < c.refs.pods.size(); ++i) {
      if (c.refs.pods[i]->phase == "Running" && u(rng) < 0.04) c.change_pod(i).phase = "Succeeded";
    }
    for (size_t k = 0; k < c.refs.pod_groups.size(); ++k) {
      if (u(rng) < 0.03) c.change_pod_group(k).resources_status.requested["cpu"] += 1000;
    }
    for (size_t q = 0; q < c.refs.queues.size(); ++q) {
      if (u(rng) >= 0.1) continue;
      c.queues.push_back(*c.refs.queues[q]);
      c.queues.back().resources_status.allocated["cpu"] += 1000;
      c.refs.queues[q] = &c.queues.back();
    }
  }
  EXPECT_GT(keeper.kept(), 8U) << "the sessions were not kept: the property is vacuous";
  EXPECT_EQ(keeper.regrouped(), regrouped_before)
      << "a session was laid out anew after the third cycle, which starts the status pass afresh";
  EXPECT_GT(kept_writes, 10) << "kept cycles wrote no PodGroup status: the property is vacuous";
  RecordProperty("kept_writes", kept_writes);
}

/// The objects of a scenario file (tests/scenarios/README.md), without its Scenario document.
model::ClusterObjects scenario_objects(const std::string& relative) {
  const char* root = std::getenv("KAI_SOURCE_DIR");
  std::ifstream in(std::string(root != nullptr ? root : KAI_DEFAULT_SOURCE_DIR) + "/tests/scenarios/" + relative);
  std::string text, doc, line;
  auto flush = [&] {
    if (doc.find("kind: Scenario") == std::string::npos) text += "---\n" + doc;
    doc.clear();
  };
  while (std::getline(in, line)) {
    if (line == "---") {
      flush();
    } else {
      doc += line + "\n";
    }
  }
  flush();
  auto objects = model::decode_snapshot(text);
  EXPECT_TRUE(objects) << objects.message();
  return objects ? std::move(objects).value() : model::ClusterObjects{};
}

// A kept session whose last cycle decided nothing, and whose refresh changed nothing the actions
// read, repeats that cycle's outcome without running the actions (Session::repeat_last_outcome),
// until a deadline of that cycle comes or something the actions read changes. Two team-b jobs hold
// the only node's GPUs, protected by a 10-minute reclaimMinRuntime until 12:05; team-a's job waits.
TEST(RepeatedOutcomes, AQuietCycleRepeatsUntilAVictimsProtectionEndsOrSomethingItReadsChanges) {
  LiveCluster c;
  c.base = scenario_objects("reclaim/min-runtime-ends-as-the-clock-moves.yaml");
  c.refs = model::ObjectRefs::of(c.base);
  ASSERT_EQ(c.refs.pods.size(), 3U);
  const int64_t noon = model::parse_rfc3339("2026-01-01T12:00:00Z").value();
  events::ScheduleRecords records;
  SessionKeeper keeper;
  uint64_t seq = 0;
  uint64_t cycle = 0;
  // Runs a cycle at `now_ms` kept and built, checks they agree, and keeps the session.
  auto run = [&](int64_t now_ms) {
    CycleInput in;
    in.objects = c.refs;
    in.records = &records;
    in.options.config.actions = SchedulerConfig::defaults().actions;
    in.options.now = now_ms / 1000;
    in.options.now_ms = now_ms;
    in.options.seed = ++cycle * 31 + 1;
    in.cycle_id = cycle;
    in.keeper = &keeper;
    CycleResult kept = run_cycle(in);
    in.keeper = nullptr;
    const CycleResult built = run_cycle(in);
    EXPECT_FALSE(built.outcome_repeated);
    EXPECT_EQ(records_of(kept, cycle), records_of(built, cycle))
        << "cycle " << cycle << ": " << first_difference(records_of(kept, cycle), records_of(built, cycle));
    EXPECT_EQ(kept.next_deadline, built.next_deadline) << "cycle " << cycle;
    EXPECT_EQ(session_state(*kept.session), session_state(*built.session)) << "cycle " << cycle;
    std::vector<events::Payload> batch{
        events::CycleStart{cycle, 0, cycle, in.options.now, in.options.seed, "kai-scheduler", 0, now_ms}};
    for (auto& p : cycle_records(kept, cycle, 0)) batch.push_back(std::move(p));
    for (auto& p : batch) EXPECT_TRUE(events::apply_record(records, events::Event{++seq, 0, events::kSchemaVersion, p}));
    const bool repeated = kept.outcome_repeated;
    const size_t decided = kept.decisions.size();
    keeper.keep(std::move(kept.session), std::move(kept.refs), kept.patched, nullptr);
    return std::make_pair(repeated, decided);
  };
  EXPECT_EQ(run(noon * 1000), std::make_pair(false, size_t{0})) << "the first cycle builds and decides nothing";
  EXPECT_EQ(run((noon + 60) * 1000), std::make_pair(true, size_t{0})) << "nothing changed: repeated";
  // A pod's status written again (a new object, nothing the actions read changed): still repeated.
  c.change_pod(0).meta.resource_version += "1";
  EXPECT_EQ(run((noon + 180) * 1000), std::make_pair(true, size_t{0}));
  // The protection ends at 12:05:00; the second before it runs the actions.
  EXPECT_EQ(run((noon + 298) * 1000 + 999), std::make_pair(true, size_t{0}));
  EXPECT_EQ(run((noon + 299) * 1000 + 500), std::make_pair(false, size_t{0}));
  const auto at_deadline = run((noon + 300) * 1000);
  EXPECT_FALSE(at_deadline.first);
  EXPECT_GT(at_deadline.second, 0U) << "the reclaim the protection held back";
}

/// A live cluster of `items` (JSON objects) with node n1 (4 GPUs) and queue q (spec `queue_spec`).
LiveCluster cluster_on_one_node(nlohmann::json items, const nlohmann::json& queue_spec) {
  items.push_back({{"apiVersion", "v1"},
                   {"kind", "Node"},
                   {"metadata", {{"name", "n1"}}},
                   {"status", {{"allocatable", {{"nvidia.com/gpu", "4"}, {"pods", "110"}}}}}});
  items.push_back({{"apiVersion", "scheduling.run.ai/v2"},
                   {"kind", "Queue"},
                   {"metadata", {{"name", "q"}}},
                   {"spec", queue_spec}});
  auto decoded =
      model::decode_snapshot(nlohmann::json{{"apiVersion", "v1"}, {"kind", "List"}, {"items", items}}.dump());
  EXPECT_TRUE(decoded) << decoded.message();
  LiveCluster c;
  if (decoded) c.base = std::move(decoded).value();
  c.refs = model::ObjectRefs::of(c.base);
  return c;
}

/// PodGroup `group` (minMember `min_member`, annotations `annotations`; no uid when `uid` is empty)
/// and its one-GPU pod `group`-0 running on n1.
nlohmann::json running_group(const std::string& group, int min_member, const std::string& uid,
                             const nlohmann::json& annotations = nlohmann::json::object()) {
  nlohmann::json pg_meta = {{"name", group}, {"namespace", "ns"}, {"annotations", annotations}};
  nlohmann::json pod_meta = {{"name", group + "-0"},
                             {"namespace", "ns"},
                             {"annotations", {{"pod-group-name", group}}},
                             {"labels", {{"kai.scheduler/queue", "q"}}}};
  if (!uid.empty()) {
    pg_meta["uid"] = uid;
    pod_meta["uid"] = uid + "-0";
  }
  const nlohmann::json gpu = {{"limits", {{"nvidia.com/gpu", "1"}}}};
  return nlohmann::json::array(
      {{{"apiVersion", "scheduling.run.ai/v2alpha2"},
        {"kind", "PodGroup"},
        {"metadata", pg_meta},
        {"spec", {{"minMember", min_member}, {"queue", "q"}}}},
       {{"apiVersion", "v1"},
        {"kind", "Pod"},
        {"metadata", pod_meta},
        {"spec",
         {{"schedulerName", "kai-scheduler"},
          {"nodeName", "n1"},
          {"containers", nlohmann::json::array({{{"name", "c"}, {"resources", gpu}}})}}},
        {"status", {{"phase", "Running"}}}}});
}

// A job without a uid has no job state in the records, so the times its actions set reach no
// record the next cycle resolves again: a kept session takes them back all the same. A gang of two
// with one running pod is found stale at each cycle; the built session finds it afresh each time.
TEST(KeptSessions, TheTimesTheActionsSetAreTakenBackWithoutARecord) {
  LiveCluster c = cluster_on_one_node(running_group("gang", 2, ""), nlohmann::json::object());
  ASSERT_EQ(c.refs.pods.size(), 1U);
  events::ScheduleRecords records;
  SessionKeeper keeper;
  uint64_t seq = 0;
  int stale_marks = 0;
  for (uint64_t cycle = 1; cycle <= 3; ++cycle) {
    CycleInput in = kept_cycle_input(c, records, keeper, cycle, cycle);
    in.options.stale_grace_period_seconds = 3600;  // stale, not yet evicted
    CycleResult kept = run_cycle(in);
    in.keeper = nullptr;
    const CycleResult built = run_cycle(in);
    ASSERT_EQ(session_state(*kept.session), session_state(*built.session)) << "cycle " << cycle;
    ASSERT_EQ(kept.session->annotation_updates, built.session->annotation_updates) << "cycle " << cycle;
    stale_marks += static_cast<int>(kept.session->annotation_updates.size());
    apply_cycle(records, in, kept, seq);
    keeper.keep(std::move(kept.session), std::move(kept.refs), kept.patched, nullptr);
  }
  EXPECT_EQ(keeper.kept(), 2U);
  EXPECT_EQ(stale_marks, 3) << "each cycle marks the uid-less gang stale anew, kept or built";
}

/// Three cycles of `c` ten seconds apart from noon, each run kept (with `keeper`) and built, the
/// cluster changed by `after(cycle)` after each: the kept cycles' next deadlines, each checked
/// against the built cycle's.
std::vector<std::optional<int64_t>> next_deadlines_of_three_cycles(
    LiveCluster& c, SessionKeeper& keeper, const std::function<void(uint64_t)>& after) {
  const int64_t noon = model::parse_rfc3339("2026-01-01T12:00:00Z").value();
  events::ScheduleRecords records;
  uint64_t seq = 0;
  std::vector<std::optional<int64_t>> deadlines;
  for (uint64_t cycle = 1; cycle <= 3; ++cycle) {
    CycleInput in = kept_cycle_input(c, records, keeper, cycle, cycle);
    in.options.now = noon + static_cast<int64_t>(cycle) * 10;
    in.options.now_ms = in.options.now * 1000;
    CycleResult kept = run_cycle(in);
    in.keeper = nullptr;
    const CycleResult built = run_cycle(in);
    EXPECT_EQ(kept.next_deadline, built.next_deadline) << "cycle " << cycle;
    deadlines.push_back(kept.next_deadline);
    apply_cycle(records, in, kept, seq);
    keeper.keep(std::move(kept.session), std::move(kept.refs), kept.patched, nullptr);
    after(cycle);
  }
  return deadlines;
}

// The next deadline follows a job whose pod finishes with nothing else changing (no record): two
// running jobs protected by a 10-minute reclaimMinRuntime until 12:05 and 12:08; once the first one's
// pod has succeeded, the next deadline is the second's, kept or built.
TEST(KeptSessions, TheNextDeadlineFollowsAJobWhosePodFinished) {
  nlohmann::json items =
      running_group("early", 1, "early-uid", {{model::kLastStartAnnotation, "2026-01-01T11:55:00Z"}});
  for (const auto& o :
       running_group("late", 1, "late-uid", {{model::kLastStartAnnotation, "2026-01-01T11:58:00Z"}}))
    items.push_back(o);
  LiveCluster c = cluster_on_one_node(items, {{"reclaimMinRuntime", "10m"}});
  ASSERT_EQ(c.refs.pods.size(), 2U);
  SessionKeeper keeper;
  const auto deadlines = next_deadlines_of_three_cycles(c, keeper, [&](uint64_t cycle) {
    if (cycle != 1) return;
    for (size_t i = 0; i < c.refs.pods.size(); ++i) {
      if (c.refs.pods[i]->meta.name == "early-0") c.change_pod(i).phase = "Succeeded";
    }
  });
  EXPECT_EQ(keeper.kept(), 2U);
  const int64_t five_past = model::parse_rfc3339("2026-01-01T12:05:00Z").value();
  EXPECT_EQ(deadlines, (std::vector<std::optional<int64_t>>{five_past, five_past + 180, five_past + 180}));
}

// A relayout numbers the jobs anew, and the deadlines kept by job id follow them
// (Session::renumber_jobs): running jobs protected by a 10-minute reclaimMinRuntime until 12:05
// ("early") and 12:08 ("late"); a job protected until 12:04 ("aaa") arrives ahead of both, moving
// them one id on, then leaves. The next deadline is 12:05, 12:04, then 12:05 again, kept or built.
TEST(KeptSessions, TheDeadlinesFollowTheJobsALayoutRenumbers) {
  nlohmann::json items = nlohmann::json::array();
  for (const auto& [group, started] :
       std::vector<std::pair<std::string, std::string>>{{"aaa", "2026-01-01T11:54:00Z"},
                                                        {"early", "2026-01-01T11:55:00Z"},
                                                        {"late", "2026-01-01T11:58:00Z"}}) {
    for (const auto& o : running_group(group, 1, group + "-uid", {{model::kLastStartAnnotation, started}}))
      items.push_back(o);
  }
  LiveCluster c = cluster_on_one_node(items, {{"reclaimMinRuntime", "10m"}});
  ASSERT_EQ(c.refs.pods.size(), 3U);
  ASSERT_EQ(c.refs.pod_groups.size(), 3U);
  ASSERT_EQ(c.refs.pods.front()->meta.name, "aaa-0");
  ASSERT_EQ(c.refs.pod_groups.front()->meta.name, "aaa");
  const model::Pod* aaa_pod = c.refs.pods.front();
  const model::PodGroup* aaa_group = c.refs.pod_groups.front();
  auto take_out_aaa = [&] {
    std::erase(c.refs.pods, aaa_pod);
    std::erase(c.refs.pod_groups, aaa_group);
  };
  take_out_aaa();
  SessionKeeper keeper;
  const auto deadlines = next_deadlines_of_three_cycles(c, keeper, [&](uint64_t cycle) {
    if (cycle == 1) {
      c.refs.pods.insert(c.refs.pods.begin(), aaa_pod);
      c.refs.pod_groups.insert(c.refs.pod_groups.begin(), aaa_group);
    } else if (cycle == 2) {
      take_out_aaa();
    }
  });
  EXPECT_EQ(keeper.regrouped(), 2U) << "both changes are laid out anew";
  const int64_t five_past = model::parse_rfc3339("2026-01-01T12:05:00Z").value();
  EXPECT_EQ(deadlines, (std::vector<std::optional<int64_t>>{five_past, five_past - 60, five_past}));
}

// A job a relayout derives anew has its deadline read (Session::renumber_jobs marks it): a bare pod
// ("aaa-bare", no PodGroup: its job has no job state record and its times come from its pod's
// PodScheduled condition, 11:54) arrives ahead of the protected jobs "early" (until 12:05) and
// "late" (12:08), then leaves. The next deadline is 12:05, 12:04, then 12:05 again, kept or built.
TEST(KeptSessions, TheDeadlineOfAJobALayoutDerivesIsRead) {
  // The bare pod first: the cut lists it ahead of the others.
  nlohmann::json items = nlohmann::json::array();
  items.push_back(
      {{"apiVersion", "v1"},
       {"kind", "Pod"},
       {"metadata",
        {{"name", "aaa-bare"},
         {"namespace", "ns"},
         {"uid", "aaa-bare-uid"},
         {"labels", {{"kai.scheduler/queue", "q"}}}}},
       {"spec",
        {{"schedulerName", "kai-scheduler"},
         {"nodeName", "n1"},
         {"containers",
          nlohmann::json::array({{{"name", "c"}, {"resources", {{"limits", {{"nvidia.com/gpu", "1"}}}}}}})}}},
       {"status",
        {{"phase", "Running"},
         {"conditions", nlohmann::json::array({{{"type", "PodScheduled"},
                                                {"status", "True"},
                                                {"lastTransitionTime", "2026-01-01T11:54:00Z"}}})}}}});
  for (const auto& [group, started] : std::vector<std::pair<std::string, std::string>>{
           {"early", "2026-01-01T11:55:00Z"}, {"late", "2026-01-01T11:58:00Z"}}) {
    for (const auto& o : running_group(group, 1, group + "-uid", {{model::kLastStartAnnotation, started}}))
      items.push_back(o);
  }
  LiveCluster c = cluster_on_one_node(items, {{"reclaimMinRuntime", "10m"}});
  ASSERT_EQ(c.refs.pods.size(), 3U);
  ASSERT_EQ(c.refs.pods.front()->meta.name, "aaa-bare");
  const model::Pod* bare = c.refs.pods.front();
  c.refs.pods.erase(c.refs.pods.begin());
  SessionKeeper keeper;
  const auto deadlines = next_deadlines_of_three_cycles(c, keeper, [&](uint64_t cycle) {
    if (cycle == 1) c.refs.pods.insert(c.refs.pods.begin(), bare);
    if (cycle == 2) std::erase(c.refs.pods, bare);
  });
  EXPECT_EQ(keeper.regrouped(), 2U) << "both changes are laid out anew";
  const int64_t five_past = model::parse_rfc3339("2026-01-01T12:05:00Z").value();
  EXPECT_EQ(deadlines, (std::vector<std::optional<int64_t>>{five_past, five_past - 60, five_past}));
}

// A change the actions read runs them: a running pod finishing frees its GPU for the waiting job.
TEST(RepeatedOutcomes, APodFinishingRunsTheActions) {
  LiveCluster c;
  c.base = scenario_objects("reclaim/min-runtime-ends-as-the-clock-moves.yaml");
  c.refs = model::ObjectRefs::of(c.base);
  const int64_t noon = model::parse_rfc3339("2026-01-01T12:00:00Z").value();
  SessionKeeper keeper;
  std::vector<std::pair<bool, size_t>> outcomes;
  for (uint64_t cycle = 1; cycle <= 3; ++cycle) {
    if (cycle == 3) {
      for (size_t i = 0; i < c.refs.pods.size(); ++i) {
        if (c.refs.pods[i]->meta.name == "b1-0") c.change_pod(i).phase = "Succeeded";
      }
    }
    CycleInput in;
    in.objects = c.refs;
    in.options.now = noon + static_cast<int64_t>(cycle);
    in.cycle_id = cycle;
    in.keeper = &keeper;
    CycleResult r = run_cycle(in);
    outcomes.emplace_back(r.outcome_repeated, r.decisions.size());
    keeper.keep(std::move(r.session), std::move(r.refs), r.patched, nullptr);
  }
  EXPECT_EQ(outcomes[1], std::make_pair(true, size_t{0}));
  EXPECT_FALSE(outcomes[2].first);
  EXPECT_EQ(outcomes[2].second, 1U) << "team-a's pod takes the freed GPU";
}

// A pod arriving with inter-pod constraints needs the index a build makes: the kept session, having
// grouped the cut, gives up (session_relayout.cpp), and the build that follows takes the pods'
// groupings from the memo the relayout just filled, instead of grouping them all again.
TEST(KeptSessions, ASessionThatCannotBeLaidOutAnewIsBuiltWithTheMemo) {
  LiveCluster c;
  c.generate(3);
  SessionKeeper keeper;
  GroupingMemo memo;
  const std::shared_ptr<const void> alive(&c, [](const void*) {});
  size_t mine = 0;
  while (c.refs.pods[mine]->scheduler_name != "kai-scheduler") ++mine;
  auto cycle = [&](uint64_t id) {
    CycleInput in;
    in.objects = c.refs;
    in.options.now = kStart + static_cast<int64_t>(id);
    in.options.grouping_memo = &memo;
    in.cycle_id = id;
    in.keeper = &keeper;
    memo.hold(alive);
    CycleResult r = run_cycle(in);
    keeper.keep(std::move(r.session), std::move(r.refs), r.patched, alive);
  };
  cycle(1);
  model::Pod arrival = *c.refs.pods[mine];
  arrival.meta.name += "-spread";
  arrival.meta.uid += "-spread";
  arrival.node_name.clear();
  arrival.phase = "Pending";
  c.pods.push_back(arrival);
  c.refs.pods.push_back(&c.pods.back());
  cycle(2);
  EXPECT_EQ(keeper.regrouped(), 1U) << keeper.last_rebuild_reason();
  model::Pod constrained = arrival;
  constrained.meta.name += "-2";
  constrained.meta.uid += "-2";
  model::PodAffinityTerm term;
  term.label_selector = model::LabelSelector{};
  term.topology_key = "kubernetes.io/hostname";
  constrained.pod_anti_affinity.required.push_back(term);
  c.pods.push_back(constrained);
  c.refs.pods.push_back(&c.pods.back());
  cycle(3);
  EXPECT_EQ(keeper.built(), 2U);
  EXPECT_EQ(keeper.last_rebuild_reason(),
            "pods or PodGroups were added, removed or regrouped, and the jobs cannot be laid out anew: a new or "
            "changed job has a pod with inter-pod constraints");
  // Without the memo held again for it, the build's grouping would find it inactive, and reuse none.
  EXPECT_GT(memo.reused(), 0U);
  // A session indexing inter-pod constraints is never kept: the constrained pod gone, a build again.
  c.refs.pods.pop_back();
  cycle(4);
  EXPECT_EQ(keeper.built(), 3U);
  EXPECT_NE(keeper.last_rebuild_reason().find("indexes inter-pod constraints"), std::string::npos)
      << keeper.last_rebuild_reason();
  // A pod of another scheduler arriving on a node is followed there: the session is kept.
  size_t bound = 0;
  while (bound < c.refs.pods.size() && c.refs.pods[bound]->node_name.empty()) ++bound;
  ASSERT_LT(bound, c.refs.pods.size());
  model::Pod foreign = *c.refs.pods[bound];
  foreign.phase = "Running";
  foreign.meta.name += "-foreign";
  foreign.meta.uid += "-foreign";
  foreign.scheduler_name = "default-scheduler";
  c.pods.push_back(foreign);
  c.refs.pods.push_back(&c.pods.back());
  cycle(5);
  EXPECT_EQ(keeper.built(), 3U) << keeper.last_rebuild_reason();
  EXPECT_EQ(keeper.regrouped(), 2U);
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
