// One scheduling session on kai-gen clusters (docs/performance-targets.md "Targets", "The benchmark cluster"): session build, allocate alone,
// and a single 3-pod gang attempt. Argument = scale in per-mille of the 5,000-node default mix.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <deque>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "actors/scheduler/core/actions/allocate.hpp"
#include "actors/scheduler/core/cycle.hpp"
#include "actors/scheduler/core/grouping_memo.hpp"
#include "actors/scheduler/core/plugin.hpp"
#include "actors/scheduler/core/plugins/builtin.hpp"
#include "actors/scheduler/core/session.hpp"
#include "actors/scheduler/core/session_keeper.hpp"
#include "bench/process_status.hpp"
#include "events/projection.hpp"
#include "k8s/model/json_codec.hpp"
#include "k8s/model/kinds.hpp"
#include "k8s/model/well_known_names.hpp"
#include "tools/common/huge_pages.hpp"
#include "tools/common/resident_malloc.hpp"
#include "tools/kai-gen/generator.hpp"

namespace {

using kai::core::Session;
using kai::core::SessionOptions;

const kai::model::ClusterObjects& cluster(int64_t per_mille, bool with_probe_gang) {
  static std::map<std::pair<int64_t, bool>, std::unique_ptr<kai::model::ClusterObjects>> cache;
  auto& slot = cache[{per_mille, with_probe_gang}];
  if (!slot) {
    slot = std::make_unique<kai::model::ClusterObjects>(
        kai::gen::generate(kai::gen::ClusterSpec::scaled(static_cast<double>(per_mille) / 1000.0)));
    if (with_probe_gang) {
      // Only the probe gang is pending: the other pending groups are dropped.
      kai::model::ClusterObjects& c = *slot;
      std::erase_if(c.pods, [](const auto& p) { return p.phase == "Pending"; });
      c.pod_groups.clear();
      kai::model::PodGroup pg;
      pg.meta.namespace_ = "bench";
      pg.meta.name = "probe-gang";
      pg.meta.uid = "uid-probe-gang";
      pg.min_member = 3;
      pg.queue = c.queues.back().meta.name;
      c.pod_groups.push_back(pg);
      for (int i = 0; i < 3; ++i) {
        kai::model::Pod p;
        p.meta.namespace_ = "bench";
        p.meta.name = "probe-" + std::to_string(i);
        p.meta.uid = "uid-probe-" + std::to_string(i);
        p.meta.annotations["pod-group-name"] = "probe-gang";
        p.scheduler_name = "kai-scheduler";
        p.phase = "Pending";
        kai::model::Container ctr;
        ctr.requests = {
            {"cpu", 4000}, {"memory", 32LL * 1024 * 1024 * 1024 * 1000}, {"nvidia.com/gpu", 1000}};
        p.containers.push_back(ctr);
        c.pods.push_back(p);
      }
    }
  }
  return *slot;
}

SessionOptions allocate_only() {
  SessionOptions o;
  o.config.actions = {"allocate"};
  o.now = 1767225600;
  return o;
}

void report(benchmark::State& state, const Session& ssn) {
  int64_t bound = 0, pipelined = 0, evicted = 0;
  uint64_t checksum = 1469598103934665603ULL;  // FNV-1a over pod and node names of the decisions
  for (const auto& d : ssn.decisions) {
    bound += d.kind == kai::events::DecisionKind::kBind;
    pipelined += d.kind == kai::events::DecisionKind::kPipeline;
    evicted += d.kind == kai::events::DecisionKind::kEvict;
    for (const std::string* s : {&d.pod, &d.node}) {
      for (unsigned char ch : *s) checksum = (checksum ^ ch) * 1099511628211ULL;
    }
  }
  state.counters["nodes"] = static_cast<double>(ssn.nodes.size());
  state.counters["pods"] = static_cast<double>(ssn.tasks.size());
  state.counters["allocated"] = static_cast<double>(bound);
  state.counters["pipelined"] = static_cast<double>(pipelined);
  state.counters["evicted"] = static_cast<double>(evicted);
  state.counters["checksum"] = static_cast<double>(checksum % 1000000007ULL);
}

/// Times the configured actions of a fresh session per iteration, the session build excluded.
void time_actions_without_build(benchmark::State& state, const kai::model::ClusterObjects& objects,
                                const SessionOptions& options) {
  for (auto _ : state) {
    state.PauseTiming();
    auto ssn = std::make_unique<Session>(objects, options);
    state.ResumeTiming();
    kai::core::run_actions(*ssn, options.config.actions);
    benchmark::DoNotOptimize(ssn->decisions.data());
    state.PauseTiming();
    report(state, *ssn);
    ssn.reset();
    state.ResumeTiming();
  }
}

/// Session build (snapshot -> dense state, fair share) plus allocate.
void BM_BuildAndAllocate(benchmark::State& state) {
  const auto& objects = cluster(state.range(0), false);
  for (auto _ : state) {
    Session ssn(objects, allocate_only());
    kai::core::allocate_action(ssn);
    benchmark::DoNotOptimize(ssn.decisions.data());
    if (state.iterations() == 1) report(state, ssn);
  }
}

/// Allocate alone; the session build is excluded from the timing.
void BM_AllocateOnly(benchmark::State& state) {
  const auto& objects = cluster(state.range(0), false);
  time_actions_without_build(state, objects, allocate_only());
}

/// Session build alone.
void BM_SessionBuild(benchmark::State& state) {
  const auto& objects = cluster(state.range(0), false);
  for (auto _ : state) {
    Session ssn(objects, allocate_only());
    benchmark::DoNotOptimize(ssn.nodes.data());
  }
}

/// 100 running pods of the scheduler and a changed copy of each (a new resourceVersion, as a
/// confirmation's watch event brings), kept alive as the daemon's cut keeps its objects.
struct Confirmations {
  explicit Confirmations(const kai::model::ClusterObjects& objects) {
    for (size_t i = 0; i < objects.pods.size() && originals.size() < 100; ++i) {
      if (objects.pods[i].phase == "Running" && objects.pods[i].scheduler_name == "kai-scheduler")
        originals.push_back(&objects.pods[i]);
    }
    copies.reserve(originals.size());
    for (const kai::model::Pod* p : originals) {
      copies.push_back(*p);
      copies.back().meta.resource_version += "-confirmed";
    }
    for (size_t k = 0; k < originals.size(); ++k) {
      which[originals[k]] = k;
      which[&copies[k]] = k;
    }
  }
  /// Puts the copies (`changed`) or the originals into `refs`, wherever they are.
  void swap_into(kai::model::ObjectRefs& refs, bool changed) const {
    for (const kai::model::Pod*& p : refs.pods) {
      auto it = which.find(p);
      if (it != which.end()) p = changed ? &copies[it->second] : originals[it->second];
    }
  }
  std::vector<const kai::model::Pod*> originals;
  std::vector<kai::model::Pod> copies;
  std::unordered_map<const kai::model::Pod*, size_t> which;
};

/// Whether `a` comes before `b` in the daemon's cut: by "namespace/name", as its store's map orders
/// them (actors/daemon/entity_store.hpp).
template <class T>
bool key_less(const T* a, const T* b) {
  return kai::model::object_key(a->meta) < kai::model::object_key(b->meta);
}

/// `refs` in the daemon's order (kai-gen lists the pods of each job together, not by key): its
/// pods and PodGroups sorted by key. The daemon's cycle finds assumed decisions' pods by a binary
/// search there (actors/scheduler/core/pod_finder.hpp).
void sort_as_the_cut(kai::model::ObjectRefs& refs) {
  std::sort(refs.pods.begin(), refs.pods.end(), key_less<kai::model::Pod>);
  std::sort(refs.pod_groups.begin(), refs.pod_groups.end(), key_less<kai::model::PodGroup>);
}

/// Gangs arriving and leaving, as users submit and delete jobs: each step puts a new 8-pod gang of
/// one-GPU pods and its PodGroup among the objects at their keys (in the namespace of the cut's
/// middle pod, so that half the cluster comes after them), and takes out the one put in two steps
/// before, so that the cluster keeps its size. Every version stays alive, as the daemon's cuts keep
/// theirs.
struct Arrivals {
  explicit Arrivals(const kai::model::ObjectRefs& refs)
      : namespace_(refs.pods.empty() ? "bench" : refs.pods[refs.pods.size() / 2]->meta.namespace_) {}
  void step(kai::model::ObjectRefs& refs, const std::string& queue) {
    const std::string name = "arrival-" + std::to_string(next++);
    kai::model::PodGroup pg;
    pg.meta.namespace_ = namespace_;
    pg.meta.name = name;
    pg.meta.uid = "uid-" + name;
    pg.meta.creation_timestamp = 1767225600 + static_cast<int64_t>(next);
    pg.min_member = 8;
    pg.queue = queue;
    pod_groups.push_back(pg);
    insert_at_key(refs.pod_groups, &pod_groups.back());
    std::vector<const kai::model::Pod*> gang;
    for (int i = 0; i < 8; ++i) {
      kai::model::Pod p;
      p.meta.namespace_ = namespace_;
      p.meta.name = name + "-" + std::to_string(i);
      p.meta.uid = "uid-" + p.meta.name;
      p.meta.creation_timestamp = pg.meta.creation_timestamp;
      p.meta.annotations["pod-group-name"] = name;
      p.scheduler_name = "kai-scheduler";
      p.phase = "Pending";
      kai::model::Container ctr;
      ctr.requests = {{"cpu", 4000}, {"memory", 32LL * 1024 * 1024 * 1024 * 1000}, {"nvidia.com/gpu", 1000}};
      p.containers.push_back(ctr);
      pods.push_back(std::move(p));
      gang.push_back(&pods.back());
      insert_at_key(refs.pods, gang.back());
    }
    in_refs.push_back({&pod_groups.back(), std::move(gang)});
    if (in_refs.size() > 2) {
      // Named, not a structured binding: clang 14 (the lint) cannot capture a binding in a lambda.
      const kai::model::PodGroup* old_pg = in_refs.front().first;
      const auto& old_pods = in_refs.front().second;
      std::erase(refs.pod_groups, old_pg);
      std::erase_if(refs.pods, [&](const kai::model::Pod* p) {
        return std::find(old_pods.begin(), old_pods.end(), p) != old_pods.end();
      });
      in_refs.pop_front();
    }
    forget_old_versions();
  }
  /// Frees the objects of gangs long gone: a cut refers to the last three gangs, and the session
  /// kept from the cycle before to the cut before it. Everything newer stays alive.
  void forget_old_versions() {
    constexpr size_t kKeptPods = 20 * 16, kKeptPodGroups = 20;
    while (pods.size() > kKeptPods) pods.pop_front();
    while (pod_groups.size() > kKeptPodGroups) pod_groups.pop_front();
  }
  /// The watch's confirmation of the binds `decisions` made for the gangs that arrived: each pod
  /// bound is replaced by a copy on its node, as the daemon's next cut has it.
  void confirm(kai::model::ObjectRefs& refs, const std::vector<kai::events::Decision>& decisions) {
    for (const auto& d : decisions) {
      if (d.kind != kai::events::DecisionKind::kBind) continue;
      for (auto& [pg, gang] : in_refs) {
        for (const kai::model::Pod*& p : gang) {
          if (kai::model::object_key(p->meta) != d.pod) continue;
          kai::model::Pod& copy = pods.emplace_back(*p);
          copy.node_name = d.node;
          copy.phase = "Running";
          if (d.gpu_groups.size() == 1) copy.meta.labels[kai::model::kGpuGroupLabel] = d.gpu_groups[0];
          *std::lower_bound(refs.pods.begin(), refs.pods.end(), p, key_less<kai::model::Pod>) = &copy;
          p = &copy;
        }
      }
    }
  }
  template <class T>
  static void insert_at_key(std::vector<const T*>& list, const T* object) {
    list.insert(std::lower_bound(list.begin(), list.end(), object, key_less<T>), object);
  }
  std::string namespace_;
  std::deque<kai::model::Pod> pods;
  std::deque<kai::model::PodGroup> pod_groups;
  std::deque<std::pair<const kai::model::PodGroup*, std::vector<const kai::model::Pod*>>> in_refs;
  uint64_t next = 0;
};

/// The watch's echo of the status writes: each PodGroup and Queue patched by a cycle is replaced by
/// a copy with the patch applied, as the daemon's cut receives it, so that the next cycle finds it
/// in sync. The last few versions of each object stay alive (the session kept from a cycle refers
/// to its cut's). The arrivals' PodGroups ("arrival-N") keep their objects: Arrivals takes them out
/// by address.
struct StatusEcho {
  void apply(kai::model::ObjectRefs& refs, const std::vector<kai::events::StatusWrite>& writes) {
    std::map<std::string, size_t> group_at, queue_at;
    for (const auto& w : writes) {
      if (w.settled || w.patch_json.empty()) continue;
      if (group_at.empty()) {
        for (size_t i = 0; i < refs.pod_groups.size(); ++i)
          group_at[kai::model::object_key(refs.pod_groups[i]->meta)] = i;
        for (size_t i = 0; i < refs.queues.size(); ++i) queue_at[refs.queues[i]->meta.name] = i;
      }
      const bool group = w.kind == "PodGroup";
      auto& at = group ? group_at : queue_at;
      auto it = at.find(w.object);
      if (it == at.end()) continue;
      if (group && refs.pod_groups[it->second]->meta.name.starts_with("arrival-")) continue;
      nlohmann::json j = group ? kai::model::encode(*refs.pod_groups[it->second])
                               : kai::model::encode(*refs.queues[it->second]);
      j.merge_patch(nlohmann::json::parse(w.patch_json));
      kai::model::ClusterObjects decoded;
      if (!kai::model::decode_object_into(j, decoded).is_ok()) continue;
      ++echoed;
      if (group) {
        refs.pod_groups[it->second] = keep(pod_groups[w.object], std::move(decoded.pod_groups.at(0)));
      } else {
        refs.queues[it->second] = keep(queues[w.object], std::move(decoded.queues.at(0)));
      }
    }
  }
  template <class T>
  static const T* keep(std::deque<std::unique_ptr<T>>& versions, T object) {
    constexpr size_t kKeptVersions = 4;
    versions.push_back(std::make_unique<T>(std::move(object)));
    if (versions.size() > kKeptVersions) versions.pop_front();
    return versions.back().get();
  }
  std::map<std::string, std::deque<std::unique_ptr<kai::model::PodGroup>>> pod_groups;
  std::map<std::string, std::deque<std::unique_ptr<kai::model::Queue>>> queues;
  uint64_t echoed = 0;
};

/// The daemon's session build between two cycles 100 pod confirmations apart: the pod grouper's
/// decisions come from the memo the last build left (actors/scheduler/core/grouping_memo.hpp), so only
/// the changed pods are grouped again. Each iteration replaces the objects of the same 100 running pods
/// (alternately originals and changed copies, all kept alive, as the daemon's cut keeps them).
void BM_SessionBuildAfterConfirmations(benchmark::State& state) {
  const auto& objects = cluster(state.range(0), false);
  kai::model::ObjectRefs refs = kai::model::ObjectRefs::of(objects);
  Confirmations confirmations(objects);
  // The bench's objects outlive the memo: an owner that frees nothing.
  const std::shared_ptr<const void> alive(&objects, [](const void*) {});
  kai::core::GroupingMemo memo;
  SessionOptions options = allocate_only();
  options.grouping_memo = &memo;
  memo.hold(alive);
  { Session warm(refs, options); }
  bool changed = false;
  for (auto _ : state) {
    state.PauseTiming();
    changed = !changed;
    confirmations.swap_into(refs, changed);
    memo.hold(alive);
    state.ResumeTiming();
    Session ssn(refs, options);
    benchmark::DoNotOptimize(ssn.nodes.data());
    state.PauseTiming();
    state.counters["reused"] = static_cast<double>(memo.reused());
    state.counters["pods"] = static_cast<double>(ssn.tasks.size());
    state.ResumeTiming();
  }
}

/// The daemon's whole cycle (run_cycle: build or kept session, the five actions, job state, PodGroup
/// and status writes, reasons) between two cycles 100 pod confirmations apart. Second argument:
/// 1 = with the SessionKeeper (actors/scheduler/core/session_keeper.hpp) and the grouping memo, as
/// the daemon runs it: a cycle after a quiet one repeats its outcome (Session::repeat_last_outcome);
/// 2 = the same, but the actions run every cycle; 0 = the grouping memo only (the session built and
/// the actions run each cycle). The 100 running pods' objects are replaced each iteration, as in
/// BM_SessionBuildAfterConfirmations: a change the actions do not read. Third argument: 1 = a gang
/// also arrives and one leaves each iteration (Arrivals), which a kept session follows by laying its
/// jobs out anew (actors/scheduler/core/session_relayout.cpp); the gang's binds are confirmed before
/// the next cycle, as the watch brings them. Each cycle's status writes reach the next cycle's
/// PodGroups and Queues, as the watch brings them (StatusEcho). The pods and PodGroups are in the
/// daemon's cut order (sort_as_the_cut).
/// The cycles of BM_CycleAfterConfirmations; with `rss_every` > 0, the resident size is read (untimed)
/// every that many cycles.
void cycles_after_confirmations(benchmark::State& state, int64_t per_mille, int64_t keep_mode, bool arriving,
                                int64_t rss_every) {
  const auto& objects = cluster(per_mille, false);
  const bool keep = keep_mode != 0;
  kai::model::ObjectRefs refs = kai::model::ObjectRefs::of(objects);
  sort_as_the_cut(refs);
  Confirmations confirmations(objects);
  const std::shared_ptr<const void> alive(&objects, [](const void*) {});
  kai::core::GroupingMemo memo;
  kai::core::SessionKeeper keeper;
  kai::core::CycleInput in;
  in.options = allocate_only();
  in.options.config.actions = kai::core::SchedulerConfig::defaults().actions;
  in.options.grouping_memo = &memo;
  in.keeper = keep ? &keeper : nullptr;
  in.repeat_outcomes = keep_mode != 2;
  // Without records every synthesised group would be a PodGroup to create, each cycle: the daemon
  // writes them once, after which they are in sync and cost nothing (pod_group_objects.cpp).
  in.pod_group_writes = false;
  // Each cycle's records are applied, as the daemon logs them (untimed): the first cycle's binds
  // are then assumed, laid over their pods by the cycles after it, and not decided again.
  kai::events::ScheduleRecords records;
  in.records = &records;
  uint64_t seq = 0;
  bool changed = false;
  uint64_t cycle = 0;
  // Where a timed cycle's time goes, in ms per cycle: the session (kept or built), each action, the rest.
  std::map<std::string, double> spent;
  // The cycles that repeated the last outcome, apart: the mean above mixes them with the others.
  std::vector<kai::events::Decision> first_decisions;
  double repeated_ms = 0, repeated_session_ms = 0;
  int repeated_cycles = 0;
  StatusEcho echo;
  Arrivals arrivals(refs);
  auto run = [&](bool timed) {
    in.objects = refs;
    in.cycle_id = ++cycle;
    memo.hold(alive);
    kai::core::CycleResult out = kai::core::run_cycle(in);
    benchmark::DoNotOptimize(out.decisions.data());
    if (cycle == 1) first_decisions = out.decisions;
    if (cycle > 2) {
      spent["decisions"] += static_cast<double>(out.decisions.size());
      spent["repeated"] += out.outcome_repeated ? 1 : 0;
      if (out.outcome_repeated) {
        repeated_ms += static_cast<double>(out.total_us) / 1000.0;
        repeated_session_ms += static_cast<double>(out.build_us) / 1000.0;
        ++repeated_cycles;
      }
      uint64_t actions = 0;
      for (const auto& [action, us] : out.action_us) {
        spent["ms_" + action] += static_cast<double>(us) / 1000.0;
        actions += us;
      }
      spent["ms_session"] += static_cast<double>(out.build_us) / 1000.0;
      spent["ms_rest"] += static_cast<double>(out.total_us - out.build_us - actions) / 1000.0;
    }
    if (timed) state.PauseTiming();
    std::vector<kai::events::Payload> batch{kai::events::CycleStart{cycle, 0, cycle, in.options.now, in.options.seed,
                                                                     in.options.scheduler_name, 0, in.options.now_ms}};
    for (auto& p : kai::core::cycle_records(out, cycle, 0)) batch.push_back(std::move(p));
    for (auto& p : batch) kai::events::apply_record(records, kai::events::Event{++seq, 0, kai::events::kSchemaVersion, p});
    if (cycle > 2) {
      spent["status_writes"] += static_cast<double>(std::count_if(
          out.status_writes.begin(), out.status_writes.end(), [](const auto& w) { return !w.settled; }));
    }
    echo.apply(refs, out.status_writes);
    arrivals.confirm(refs, out.decisions);
    if (timed) state.ResumeTiming();
    if (keep) keeper.keep(std::move(out.session), std::move(out.refs), out.patched, alive);
  };
  // The first cycle builds and decides; its binds are then confirmed, as the watch shows them, and
  // a second cycle settles them. The timed cycles start from there.
  std::deque<kai::model::Pod> bound;
  first_decisions.clear();
  run(false);
  {
    std::map<std::string, size_t> at;
    for (size_t i = 0; i < refs.pods.size(); ++i) at[kai::model::object_key(refs.pods[i]->meta)] = i;
    for (const auto& d : first_decisions) {
      auto it = at.find(d.pod);
      if (d.kind != kai::events::DecisionKind::kBind || it == at.end()) continue;
      bound.push_back(*refs.pods[it->second]);
      bound.back().node_name = d.node;
      bound.back().phase = "Running";
      if (d.gpu_groups.size() == 1) bound.back().meta.labels[kai::model::kGpuGroupLabel] = d.gpu_groups[0];
      refs.pods[it->second] = &bound.back();
    }
  }
  run(false);
  std::vector<double> rss_mib;
  int64_t timed_cycles = 0;
  for (auto _ : state) {
    state.PauseTiming();
    changed = !changed;
    confirmations.swap_into(refs, changed);
    if (arriving) arrivals.step(refs, objects.queues.back().meta.name);
    state.ResumeTiming();
    run(true);
    if (rss_every > 0 && ++timed_cycles % rss_every == 0) {
      state.PauseTiming();
      rss_mib.push_back(kai::bench::status_mib("VmRSS"));
      state.ResumeTiming();
    }
  }
  if (!rss_mib.empty()) {
    std::cerr << "resident MiB every " << rss_every << " cycles:";
    for (double mib : rss_mib) std::cerr << ' ' << mib;
    std::cerr << '\n';
  }
  if (rss_mib.size() >= 2) {
    // From the first reading (the tables have grown to their working size by then) to the last.
    state.counters["rss_mib_first"] = rss_mib.front();
    state.counters["rss_mib_last"] = rss_mib.back();
    state.counters["rss_mib_max"] = *std::max_element(rss_mib.begin(), rss_mib.end());
    state.counters["rss_mib_min"] = *std::min_element(rss_mib.begin(), rss_mib.end());
    state.counters["rss_growth_mib_per_1000_cycles"] =
        (rss_mib.back() - rss_mib.front()) * 1000.0 /
        static_cast<double>(rss_every * static_cast<int64_t>(rss_mib.size() - 1));
    state.counters["peak_rss_mib"] = kai::bench::status_mib("VmHWM");
  }
  // What the records hold at the end: with groups coming and going, each should stay bounded.
  state.counters["records_assumed"] = static_cast<double>(records.assumed.size());
  state.counters["records_job_states"] = static_cast<double>(records.job_states.size());
  state.counters["records_group_writes"] = static_cast<double>(records.group_writes.size());
  state.counters["records_status_writes"] = static_cast<double>(records.status_writes.size());
  state.counters["kept"] = static_cast<double>(keeper.kept());
  state.counters["regrouped"] = static_cast<double>(keeper.regrouped());
  state.counters["built"] = static_cast<double>(keeper.built());
  state.counters["first_decisions"] = static_cast<double>(first_decisions.size());
  for (const auto& [name, ms] : spent) state.counters[name] = ms / static_cast<double>(cycle - 2);
  if (repeated_cycles > 0) {
    state.counters["ms_repeated_cycle"] = repeated_ms / repeated_cycles;
    state.counters["ms_repeated_session"] = repeated_session_ms / repeated_cycles;
  }
}

void BM_CycleAfterConfirmations(benchmark::State& state) {
  cycles_after_confirmations(state, state.range(0), state.range(1), state.range(2) != 0, 0);
}

/// Issue 23's "RSS flat over 10,000 cycles with churn", for the cycle's own state: the daemon's cycle
/// as BM_CycleAfterConfirmations runs it with the SessionKeeper and arrivals (a gang comes, one goes,
/// 100 running pods change, binds are confirmed, statuses echoed), for a fixed number of cycles, with
/// the old objects freed as the daemon's cuts free theirs, and malloc's thresholds as the daemon sets
/// them (tools/common/resident_malloc.hpp). Reports the resident size every 500 cycles: the first and
/// last readings, their range and the growth per 1,000 cycles. Run it alone (it sets malloc's
/// thresholds for the rest of the process).
void BM_CycleChurnResidentSize(benchmark::State& state) {
  kai::tools::keep_resident_size_low();
  cycles_after_confirmations(state, state.range(0), 1, true, 500);
}

/// One attempt of a 3 x 1-GPU gang (placed, then discarded) on an otherwise settled cluster.
void BM_GangAttempt3Pods(benchmark::State& state) {
  const auto& objects = cluster(state.range(0), true);
  Session ssn(objects, allocate_only());
  uint32_t job = 0;
  for (uint32_t j = 0; j < ssn.jobs.size(); ++j) {
    if (ssn.jobs[j].name == "probe-gang") job = j;
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

/// All five default actions in one session (session build included and excluded).
void BM_FullSession(benchmark::State& state) {
  const auto& objects = cluster(state.range(0), false);
  SessionOptions options = allocate_only();
  options.config.actions = kai::core::SchedulerConfig::defaults().actions;
  time_actions_without_build(state, objects, options);
}

/// KAI's reclaim benchmark shape: N nodes x 8 GPUs full of 1-GPU pods of a queue with quota 0, and one
/// gang of N/10 pods x 8 GPUs in a queue that deserves everything. Session build excluded.
const kai::model::ClusterObjects& reclaim_cluster(int64_t n) {
  static std::map<int64_t, std::unique_ptr<kai::model::ClusterObjects>> cache;
  auto& slot = cache[n];
  if (slot) return *slot;
  slot = std::make_unique<kai::model::ClusterObjects>();
  auto& c = *slot;
  auto queue = [&](const std::string& name, const std::string& parent, double gpu_quota) {
    c.queues.push_back(kai::gen::quota_queue(name, parent, gpu_quota));
  };
  queue("root", "", -1);
  queue("idle-users", "root", 0);
  queue("owner", "root", static_cast<double>(n * 8));
  auto pod = [&](const std::string& name, int gpus) {
    kai::model::Pod p;
    p.meta.namespace_ = "bench";
    p.meta.name = name;
    p.meta.uid = "uid-" + name;
    p.scheduler_name = "kai-scheduler";
    kai::model::Container ctr;
    ctr.requests = {{"cpu", 1000}, {"memory", 1024LL * 1024 * 1024 * 1000}, {"nvidia.com/gpu", gpus * 1000}};
    p.containers.push_back(ctr);
    return p;
  };
  for (int64_t i = 0; i < n; ++i) {
    kai::model::Node node;
    node.meta.name = "node-" + std::to_string(100000 + i);
    node.allocatable = {{"cpu", 128000},
                        {"memory", 1024LL * 1024 * 1024 * 1024 * 1000},
                        {"pods", 110000},
                        {"nvidia.com/gpu", 8000}};
    node.conditions.push_back({"Ready", "True"});
    for (int g = 0; g < 8; ++g) {
      auto p = pod("run-" + std::to_string(i) + "-" + std::to_string(g), 1);
      p.node_name = node.meta.name;
      p.phase = "Running";
      p.meta.labels["kai.scheduler/queue"] = "idle-users";
      p.meta.creation_timestamp = 1767225600 + i * 8 + g;
      c.pods.push_back(p);
    }
    c.nodes.push_back(node);
  }
  kai::model::PodGroup pg;
  pg.meta.namespace_ = "bench";
  pg.meta.name = "big-gang";
  pg.meta.uid = "uid-big-gang";
  pg.min_member = static_cast<int32_t>(std::max<int64_t>(1, n / 10));
  pg.queue = "owner";
  c.pod_groups.push_back(pg);
  for (int64_t i = 0; i < pg.min_member; ++i) {
    auto p = pod("gang-" + std::to_string(i), 8);
    p.meta.annotations["pod-group-name"] = "big-gang";
    p.phase = "Pending";
    c.pods.push_back(p);
  }
  return c;
}

void BM_ReclaimShape(benchmark::State& state) {
  const auto& objects = reclaim_cluster(state.range(0));
  SessionOptions options = allocate_only();
  options.config.actions = {"allocate", "reclaim"};
  time_actions_without_build(state, objects, options);
}

/// The proportion plugin's fair-share division alone, 1,000 leaf queues under 3 levels (10 x 10 x 10).
void BM_FairShare(benchmark::State& state) {
  const auto& objects = cluster(state.range(0), false);
  SessionOptions options = allocate_only();
  options.config.plugins = {kai::core::PluginConfig{std::string(kai::core::plugins::kProportionName), {}}};
  auto ssn = std::make_unique<Session>(objects, options);
  const auto* plugin_factory = kai::core::builtin_plugins().find(kai::core::plugins::kProportionName);
  for (auto _ : state) {
    auto plugin = (*plugin_factory)(kai::core::PluginConfig{std::string(kai::core::plugins::kProportionName), {}});
    plugin->on_session_open(*ssn);
    benchmark::DoNotOptimize(ssn->queues.data());
  }
  state.counters["queues"] = static_cast<double>(ssn->queues.size());
}

}  // namespace

BENCHMARK(BM_FullSession)->Arg(20)->Arg(200)->Arg(1000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ReclaimShape)->Arg(20)->Arg(500)->Arg(1000)->Arg(5000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FairShare)->Arg(20)->Arg(1000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SessionBuild)->Arg(20)->Arg(200)->Arg(1000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SessionBuildAfterConfirmations)->Arg(20)->Arg(200)->Arg(1000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CycleAfterConfirmations)
    ->ArgsProduct({{20, 200, 1000}, {0, 1, 2}, {0, 1}})
    ->ArgNames({"permille", "keep", "arrivals"})
    ->Unit(benchmark::kMillisecond);
// 10,000 cycles at 1,000 nodes; 2,000 at 5,000 nodes (about 0.15 s each).
BENCHMARK(BM_CycleChurnResidentSize)
    ->ArgName("permille")
    ->Arg(200)
    ->Iterations(10000)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CycleChurnResidentSize)
    ->ArgName("permille")
    ->Arg(1000)
    ->Iterations(2000)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_AllocateOnly)->Arg(20)->Arg(200)->Arg(1000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_BuildAndAllocate)->Arg(20)->Arg(200)->Arg(1000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_GangAttempt3Pods)->Arg(20)->Arg(1000)->Unit(benchmark::kMicrosecond);

int main(int argc, char** argv) {
  // The sessions run on huge pages, as in kai-scheduler and kai-sim (tools/common/huge_pages.hpp);
  // GLIBC_TUNABLES=glibc.malloc.hugetlb=0 gives the figures on 4 KB pages.
  kai::tools::run_with_huge_pages(argv);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
