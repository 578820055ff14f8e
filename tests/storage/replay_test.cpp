// Replay equals live (docs/determinism-and-replay.md "Replay"): cycles run on the projection of the log at their recorded position,
// with their recorded clock and seed, and their decisions are logged; replaying the log from disk
// must reproduce every decision byte for byte, with the configuration each cycle ran with; on a log
// whose front retention deleted, replay starts from the snapshot that covers the first cycle.
#include "tools/kai-log/replay.hpp"

#include <gtest/gtest.h>

#include <set>
#include <sstream>
#include <tuple>

#include "actors/scheduler/core/behaviour_version.hpp"
#include "actors/scheduler/core/cycle.hpp"
#include "actors/scheduler/core/scheduler_config.hpp"
#include "actors/scheduler/core/session_flags.hpp"
#include "events/event_codec.hpp"
#include "events/projection.hpp"
#include "events/state_codec.hpp"
#include "k8s/model/json_codec.hpp"
#include "storage/event_log.hpp"
#include "tests/shell/run_command.hpp"
#include "tests/storage/temp_dir.hpp"
#include "tools/kai-gen/generator.hpp"

namespace kai::storage {
namespace {

using events::Event;

template <class T>
Event watch(events::WatchType type, const std::string& kind, const T& obj) {
  Event e;
  e.payload = events::WatchEvent{kind, type, model::encode(obj).dump(), obj.meta.resource_version};
  return e;
}

std::vector<Event> read_all(const EventLog& log) {
  std::vector<Event> out;
  EXPECT_TRUE(log.read(1, UINT64_MAX, [&](uint64_t seq, const Result<Event>& e) {
    EXPECT_TRUE(e) << seq << ": " << e.message();
    if (e) out.push_back(*e);
    return true;
  }));
  return out;
}

events::ClusterState project(const std::vector<Event>& log, uint64_t upto) {
  events::ClusterState s;
  for (const Event& e : log) {
    if (e.seq > upto) break;
    Status st = events::apply(s, e);
    EXPECT_TRUE(st) << e.seq << ": " << st.message();
  }
  return s;
}

std::string bytes(const events::Payload& p) {
  std::string b;
  events::encode_event(Event{0, 0, events::kSchemaVersion, p}, b);
  return b;
}

/// The session flags of a daemon started without any (core/session_flags.hpp).
std::string default_flags() {
  return core::encode_session_flags(core::SessionOptions{});
}

/// The hash a build of this behaviour version names `config` by (CycleStart, ConfigChange).
uint64_t hash_of(const std::string& config) {
  return events::config_hash(config, core::kBehaviourVersion, default_flags());
}

/// What the one cycle function records for cycle `c` on `state` with `options` (the daemon's path).
std::vector<events::Payload> run_recorded_cycle(const events::ClusterState& state, uint64_t cycle,
                                                const core::SessionOptions& options) {
  const model::ClusterObjects objects = state.to_objects();
  core::CycleInput in;
  in.objects = model::ObjectRefs::of(objects);
  in.records = &state.records;
  in.options = options;
  in.cycle_id = cycle;
  return core::cycle_records(core::run_cycle(in), cycle, 0);
}

/// The same, encoded record by record.
std::vector<std::string> replayed_bytes(const events::ClusterState& state, uint64_t cycle,
                                        const core::SessionOptions& options) {
  std::vector<std::string> out;
  for (const auto& p : run_recorded_cycle(state, cycle, options)) out.push_back(bytes(p));
  return out;
}

model::ClusterObjects generated_cluster() {
  gen::ClusterSpec spec;
  spec.nodes = 12;
  spec.running_cpu_pods = 100;
  spec.running_gpu_pods = 60;
  spec.running_fraction_pods = 20;
  spec.pending_groups = 25;
  spec.queue_fanout = 2;
  spec.seed = 5;
  return gen::generate(spec);
}

struct Recording {
  std::map<uint64_t, std::vector<std::string>> live;  // cycle -> encoded records of the cycle
  size_t total = 0;
};

/// How record() shapes the log beyond its three plain cycles.
struct RecordOptions {
  uint64_t cycles = 3;
  /// Watch events appended between a cycle's position and its CycleStart, as when the entity actors
  /// lag behind the log: running pods deleted, which the cycle must not see.
  int lag = 0;
  /// Cycles in whose lag a snapshot is written, two events after the cycle's position (needs lag > 2).
  std::set<uint64_t> snapshot_in_lag_of;
};

/// Runs the cycles over `cluster` as the daemon does and logs them in `dir`: the configuration body
/// first (unless it is empty: the defaults need no record), then per cycle its start naming the
/// configuration, its records (core::cycle_records) and its end, with churn in between.
Recording record(const std::string& dir, const model::ClusterObjects& cluster, const std::string& config,
                 const RecordOptions& ro = {}) {
  Recording rec;
  auto& live = rec.live;
  auto parsed = core::parse_scheduler_config(config);
  EXPECT_TRUE(parsed) << parsed.message();
  if (!parsed) return rec;
  {
    auto log = std::move(EventLog::open(dir)).value();
    if (!config.empty()) {
      Event c;
      c.payload = events::ConfigChange{hash_of(config), config, core::kBehaviourVersion, default_flags()};
      EXPECT_TRUE(log->append({c}));
    }
    std::vector<Event> seed_events;
    for (const auto& x : cluster.priority_classes)
      seed_events.push_back(watch(events::WatchType::kAdded, "PriorityClass", x));
    for (const auto& x : cluster.queues) seed_events.push_back(watch(events::WatchType::kAdded, "Queue", x));
    for (const auto& x : cluster.nodes) seed_events.push_back(watch(events::WatchType::kAdded, "Node", x));
    for (const auto& x : cluster.pod_groups)
      seed_events.push_back(watch(events::WatchType::kAdded, "PodGroup", x));
    for (const auto& x : cluster.pods) seed_events.push_back(watch(events::WatchType::kAdded, "Pod", x));
    EXPECT_TRUE(log->append(std::move(seed_events)));

    // Deletes up to `n` running pods of `state` that `gone` does not hold yet.
    std::set<std::string> gone;
    auto finish_pods = [&](const events::ClusterState& state, int n) {
      std::vector<Event> churn;
      for (const auto& [key, pod] : state.pods) {
        if (pod.phase == "Running" && !pod.node_name.empty() && n > 0 && gone.insert(key).second) {
          churn.push_back(watch(events::WatchType::kDeleted, "Pod", pod));
          --n;
        }
      }
      if (!churn.empty()) {
        EXPECT_TRUE(log->append(std::move(churn)));
      }
    };

    for (uint64_t cycle = 1; cycle <= ro.cycles; ++cycle) {
      uint64_t position = log->last_seq();
      events::ClusterState state = project(read_all(*log), position);
      if (ro.lag > 0) {
        events::ClusterState lagging = state;
        for (int i = 0; i < ro.lag; ++i) {
          finish_pods(lagging, 1);
          if (i == 1 && ro.snapshot_in_lag_of.count(cycle) != 0) {
            std::string snapshot;
            events::encode_state(project(read_all(*log), log->last_seq()), snapshot);
            EXPECT_TRUE(log->write_snapshot(log->last_seq(), snapshot));
          }
        }
      }
      core::SessionOptions opts;
      opts.config = parsed.value();
      opts.now = 1'700'000'000 + static_cast<int64_t>(cycle) * 60;
      opts.seed = cycle * 7;
      Event start;
      start.payload = events::CycleStart{cycle, hash_of(config), position, opts.now, opts.seed};
      EXPECT_TRUE(log->append({start}));
      std::vector<Event> decided;
      for (const auto& p : run_recorded_cycle(state, cycle, opts)) {
        Event e;
        e.payload = p;
        decided.push_back(e);
        live[cycle].push_back(bytes(p));
      }
      rec.total += decided.size();
      Event end;
      end.payload = events::CycleEnd{cycle, 10, {}};
      decided.push_back(end);
      EXPECT_TRUE(log->append(std::move(decided)));
      // Churn between cycles: some running pods finish, so the next cycle has room to decide more.
      finish_pods(state, 15);
    }
  }
  return rec;
}

std::pair<int, std::string> run_replay(const std::string& dir, const std::string& args = "",
                                       const std::string& redirect = "2>/dev/null") {
  auto run = test_shell::run_command(std::string(KAI_LOG_BIN) + " -d " + dir + " replay " + args + " " + redirect);
  return {run.code, std::move(run.out)};
}

TEST(Replay, EqualsLive) {
  testing::TempDir dir;
  // The default configuration, logged as the daemon did before it logged bodies: by its hash alone.
  auto [live, total] = record(dir.str(), generated_cluster(), "");
  ASSERT_GT(total, 0u) << "the cycles decided nothing: the comparison would be empty";

  // Replay from disk.
  auto log = std::move(EventLog::open(dir.str())).value();
  std::vector<Event> all = read_all(*log);
  std::map<uint64_t, std::vector<std::string>> recorded;
  for (const Event& e : all) {
    if (const auto* d = std::get_if<events::DecisionEvent>(&e.payload)) recorded[d->cycle_id].push_back(bytes(*d));
    if (const auto* j = std::get_if<events::JobStateChange>(&e.payload)) recorded[j->cycle_id].push_back(bytes(*j));
    if (const auto* a = std::get_if<events::AssumedSettled>(&e.payload)) recorded[a->cycle_id].push_back(bytes(*a));
    if (const auto* w = std::get_if<events::PodGroupWrite>(&e.payload)) recorded[w->cycle_id].push_back(bytes(*w));
    if (const auto* w = std::get_if<events::StatusWrite>(&e.payload)) recorded[w->cycle_id].push_back(bytes(*w));
  }
  int cycles = 0;
  for (const Event& e : all) {
    const auto* c = std::get_if<events::CycleStart>(&e.payload);
    if (c == nullptr) continue;
    ++cycles;
    core::SessionOptions opts;
    opts.now = c->now;
    opts.seed = c->seed;
    std::vector<std::string> replayed = replayed_bytes(project(all, c->log_position), c->cycle_id, opts);
    EXPECT_EQ(replayed, recorded[c->cycle_id]) << "cycle " << c->cycle_id;
    EXPECT_EQ(replayed, live[c->cycle_id]) << "cycle " << c->cycle_id;
  }
  EXPECT_EQ(cycles, 3);

  // The tool does the same from the directory, and reports a decision the core would not make.
  log.reset();
  auto run = [&] { return run_replay(dir.str()); };
  auto [code, out] = run();
  EXPECT_EQ(code, 0) << out;
  EXPECT_NE(out.find("replayed 3 cycles, " + std::to_string(total) + " records, 0 differences"),
            std::string::npos)
      << out;
  {
    auto w = std::move(EventLog::open(dir.str())).value();
    events::Decision fake;
    fake.pod = "ns/never";
    fake.node = "nowhere";
    Event e;
    e.payload = events::DecisionEvent{3, fake};
    ASSERT_TRUE(w->append({e}));
  }
  std::tie(code, out) = run();
  EXPECT_EQ(code, 1) << out;
  EXPECT_NE(out.find("1 differences"), std::string::npos) << out;
}

// KAI's default tiers with every placement choice turned from packing to spreading.
constexpr const char* kSpreadConfig = R"(tiers:
- plugins:
  - name: predicates
  - name: proportion
  - name: priority
  - name: elastic
  - name: kubeflow
  - name: ray
  - name: nodeavailability
  - name: gpusharingorder
  - name: gpuspread
  - name: resourcetype
  - name: subgrouporder
  - name: taskorder
  - name: nominatednode
  - name: dynamicresources
  - name: nodeplacement
    arguments:
      cpu: spread
      gpu: spread
  - name: minruntime
  - name: topology
  - name: snapshot
)";

TEST(Replay, RunsEachCycleWithItsLoggedConfiguration) {
  testing::TempDir dir;
  auto [live, total] = record(dir.str(), generated_cluster(), kSpreadConfig);
  ASSERT_GT(total, 0u) << "the cycles decided nothing: the comparison would be empty";

  auto [code, out] = run_replay(dir.str());
  EXPECT_EQ(code, 0) << out;
  EXPECT_NE(out.find("replayed 3 cycles, " + std::to_string(total) + " records, 0 differences\n"),
            std::string::npos)
      << out;

  // The body matters in this data: with the defaults, the same cycles decide otherwise.
  auto log = std::move(EventLog::open(dir.str())).value();
  std::vector<Event> all = read_all(*log);
  int differing = 0;
  for (const Event& e : all) {
    const auto* c = std::get_if<events::CycleStart>(&e.payload);
    if (c == nullptr) continue;
    EXPECT_EQ(c->config_hash, hash_of(kSpreadConfig));
    core::SessionOptions defaults;
    defaults.now = c->now;
    defaults.seed = c->seed;
    differing += replayed_bytes(project(all, c->log_position), c->cycle_id, defaults) != live[c->cycle_id];
  }
  EXPECT_GT(differing, 0) << "the configuration changes nothing here: the test would prove nothing";
}

TEST(Replay, AMissingOrBrokenConfigurationIsReportedPerCycle) {
  testing::TempDir dir;
  {
    auto log = std::move(EventLog::open(dir.str())).value();
    const std::string broken = "{not json";
    std::vector<Event> evs(5);
    evs[0].payload = events::ConfigChange{hash_of(broken), broken, core::kBehaviourVersion, default_flags()};
    evs[1].payload = events::CycleStart{1, 0x5eed, 0, 1'700'000'000, 1};
    evs[2].payload = events::CycleStart{2, hash_of(broken), 1, 1'700'000'060, 2};
    evs[3].payload = events::CycleStart{3, hash_of(""), 2, 1'700'000'120, 3};  // the defaults
    evs[4].payload = events::CycleEnd{3, 10, {}};
    ASSERT_TRUE(log->append(std::move(evs)));
  }
  auto [code, out] = run_replay(dir.str());
  EXPECT_EQ(code, 1) << out;
  EXPECT_NE(out.find("cycle 1: not replayed: configuration 24301 is not in the log\n"), std::string::npos)
      << out;
  EXPECT_NE(out.find("cycle 2: not replayed: configuration " +
                     std::to_string(hash_of("{not json")) + " does not parse: "),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("replayed 1 cycles, 0 records, 0 differences, 2 cycles not replayed\n"),
            std::string::npos)
      << out;
}

// Five cycles whose positions lag their starts, snapshots in the lag of cycles 2, 3 and 4, then
// retention: it keeps the snapshots of cycles 3 and 4 and deletes every event up to the older one,
// which lies between cycle 3's position and its start.
struct TrimmedLog {
  Recording rec;
  uint64_t retained_from = 0;
  std::vector<SnapshotInfo> snapshots;
};

TrimmedLog record_and_trim(const std::string& dir, const std::string& config) {
  TrimmedLog t;
  RecordOptions ro;
  ro.cycles = 5;
  ro.lag = 4;
  ro.snapshot_in_lag_of = {2, 3, 4};
  t.rec = record(dir, generated_cluster(), config, ro);
  auto log = std::move(EventLog::open(dir)).value();
  RetentionPolicy trim;
  trim.max_age = std::chrono::seconds(1);  // the events carry no timestamp: all of them are older
  trim.max_bytes = 0;
  trim.keep_snapshots = 2;
  auto r = log->apply_retention(trim, 1'700'000'000'000'000);
  EXPECT_TRUE(r) << r.message();
  t.retained_from = log->retained_from();
  auto snaps = log->snapshots();
  EXPECT_TRUE(snaps);
  if (snaps) t.snapshots = *snaps;
  return t;
}

/// Cycles are numbered by their CycleStart records in the retained log.
std::map<uint64_t, events::CycleStart> cycle_starts(const std::vector<Event>& all) {
  std::map<uint64_t, events::CycleStart> starts;
  for (const Event& e : all)
    if (const auto* c = std::get_if<events::CycleStart>(&e.payload)) starts[c->cycle_id] = *c;
  return starts;
}

TEST(Replay, StartsFromTheNewestSnapshotOfATrimmedLog) {
  testing::TempDir dir;
  TrimmedLog t = record_and_trim(dir.str(), "");
  const auto& live = t.rec.live;
  ASSERT_EQ(t.snapshots.size(), 2u);
  ASSERT_EQ(t.retained_from, t.snapshots.front().seq + 1);
  std::vector<Event> retained;
  {
    auto log = std::move(EventLog::open(dir.str())).value();
    ASSERT_TRUE(log->read(1, t.retained_from - 1, [](uint64_t seq, const Result<Event>&) {
      ADD_FAILURE() << "record " << seq << " survived retention";
      return true;
    }));
    retained = read_all(*log);
  }
  // Cycle 3's start survived but its position did not; cycles 4 and 5 start after the snapshots.
  auto starts = cycle_starts(retained);
  ASSERT_EQ(starts.size(), 3u);
  ASSERT_EQ(starts.begin()->first, 3u);
  ASSERT_LT(starts[3].log_position, t.snapshots.front().seq);
  ASSERT_GE(starts[4].log_position, t.snapshots.front().seq);
  ASSERT_GE(starts[5].log_position, t.snapshots.back().seq);
  const size_t from4 = live.at(4).size() + live.at(5).size();
  ASSERT_GT(live.at(5).size(), 0u) << "the last cycle decided nothing: the comparison would be empty";

  // The whole log: cycle 3 cannot be replayed, cycles 4 and 5 are, from the older snapshot.
  auto [code, out] = run_replay(dir.str(), "", "2>&1");
  EXPECT_EQ(code, 0) << out;
  EXPECT_NE(out.find("replayed 2 cycles, " + std::to_string(from4) + " records, 0 differences\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("1 earlier cycles skipped"), std::string::npos) << out;
  EXPECT_NE(out.find("replaying from cycle 4 at " + std::to_string(starts[4].log_position) + ": snapshot " +
                     std::to_string(t.snapshots.front().seq)),
            std::string::npos)
      << out;

  // From cycle 5: the newer snapshot.
  std::tie(code, out) = run_replay(dir.str(), "--from-cycle 5", "2>&1");
  EXPECT_EQ(code, 0) << out;
  EXPECT_NE(
      out.find("replayed 1 cycles, " + std::to_string(live.at(5).size()) + " records, 0 differences\n"),
      std::string::npos)
      << out;
  EXPECT_NE(out.find("snapshot " + std::to_string(t.snapshots.back().seq)), std::string::npos) << out;

  // A window too small to hold the events between two positions: they are read again, same result.
  for (size_t window : {size_t{0}, size_t{64} << 20}) {
    auto log = std::move(EventLog::open(dir.str())).value();
    std::ostringstream o, e;
    kailog::ReplayOptions options;
    options.window_bytes = window;
    EXPECT_EQ(kailog::replay(*log, options, o, e), 0) << o.str() << e.str();
    EXPECT_NE(o.str().find(std::to_string(from4) + " records, 0 differences\n"), std::string::npos)
        << o.str() << e.str();
    EXPECT_EQ(e.str().find("read again") != std::string::npos, window == 0) << e.str();
  }
}

// The snapshot is what makes those cycles right: the retained events alone, projected from nothing,
// decide otherwise. Were replay to ignore the snapshot, the test above would fail.
TEST(Replay, TheRetainedEventsAloneDoNotReproduceTheCycles) {
  testing::TempDir dir;
  TrimmedLog t = record_and_trim(dir.str(), "");
  auto log = std::move(EventLog::open(dir.str())).value();
  std::vector<Event> retained = read_all(*log);
  int differing = 0;
  for (const auto& [id, c] : cycle_starts(retained)) {
    if (id < 4) continue;
    core::SessionOptions opts;
    opts.now = c.now;
    opts.seed = c.seed;
    differing += replayed_bytes(project(retained, c.log_position), id, opts) != t.rec.live.at(id);
  }
  EXPECT_EQ(differing, 2);
}

TEST(Replay, ACycleBeforeTheRetainedStartIsAClearError) {
  testing::TempDir dir;
  record_and_trim(dir.str(), "");
  // Cycle 3's start is in the log, its position is not and no snapshot covers it.
  auto [code, out] = run_replay(dir.str(), "--from-cycle 3", "2>&1");
  EXPECT_EQ(code, 2) << out;
  EXPECT_NE(out.find("cycle 3 cannot be replayed: its position "), std::string::npos) << out;
  EXPECT_NE(out.find("the first cycle that can be replayed is 4 (--from-cycle 4)"), std::string::npos) << out;
  EXPECT_EQ(out.find("differences"), std::string::npos) << out;
  // Cycle 1 is gone altogether.
  std::tie(code, out) = run_replay(dir.str(), "--from-cycle 1", "2>&1");
  EXPECT_EQ(code, 2) << out;
  EXPECT_NE(out.find("cycle 1 cannot be replayed: it is older than the retained log"), std::string::npos)
      << out;
  EXPECT_NE(out.find("the first cycle that can be replayed is 4"), std::string::npos) << out;
  // Cycle 4 is the first that can.
  std::tie(code, out) = run_replay(dir.str(), "--from-cycle 4");
  EXPECT_EQ(code, 0) << out;
}

// Retention deletes a ConfigChange like any event, but the log keeps every body by its hash (meta
// "config/<hash>"): the cycles that name it still replay with it.
TEST(Replay, ACycleWhoseConfigurationRecordRetentionDeletedReplaysWithItsKeptBody) {
  testing::TempDir dir;
  record_and_trim(dir.str(), kSpreadConfig);
  {
    EventLogOptions ro;
    ro.read_only = true;
    auto log = std::move(EventLog::open(dir.str(), ro)).value();
    uint64_t config_records = 0;
    ASSERT_TRUE(log->read(1, UINT64_MAX, [&](uint64_t, const Result<Event>& e) {
      config_records += e && std::holds_alternative<events::ConfigChange>(e->payload);
      return true;
    }));
    ASSERT_EQ(config_records, 0u) << "the test needs the ConfigChange record deleted";
  }
  auto [code, out] = run_replay(dir.str());
  EXPECT_EQ(code, 0) << out;
  EXPECT_EQ(out.find("not replayed"), std::string::npos) << out;
  EXPECT_NE(out.find(" 0 differences"), std::string::npos) << out;
}

}  // namespace
}  // namespace kai::storage
