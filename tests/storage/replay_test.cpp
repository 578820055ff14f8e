// Replay equals live (issue 6): cycles run on the projection of the log at their recorded position,
// with their recorded clock and seed, and their decisions are logged; replaying the log from disk
// must reproduce every decision byte for byte.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <tuple>

#include "actors/scheduler/core/simulation.hpp"
#include "events/event_codec.hpp"
#include "events/projection.hpp"
#include "k8s/model/json_codec.hpp"
#include "storage/event_log.hpp"
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

std::string bytes(uint64_t cycle, const events::Decision& d) {
  std::string b;
  events::encode_event(Event{0, 0, events::kSchemaVersion, events::DecisionEvent{cycle, d}}, b);
  return b;
}

TEST(Replay, EqualsLive) {
  testing::TempDir dir;
  gen::ClusterSpec spec;
  spec.nodes = 12;
  spec.running_cpu_pods = 100;
  spec.running_gpu_pods = 60;
  spec.running_fraction_pods = 20;
  spec.pending_groups = 25;
  spec.queue_fanout = 2;
  spec.seed = 5;
  model::ClusterObjects cluster = gen::generate(spec);

  std::map<uint64_t, std::vector<std::string>> live;  // cycle -> encoded decisions
  size_t total = 0;
  {
    auto log = std::move(EventLog::open(dir.str())).value();
    std::vector<Event> seed_events;
    for (const auto& x : cluster.priority_classes)
      seed_events.push_back(watch(events::WatchType::kAdded, "PriorityClass", x));
    for (const auto& x : cluster.queues) seed_events.push_back(watch(events::WatchType::kAdded, "Queue", x));
    for (const auto& x : cluster.nodes) seed_events.push_back(watch(events::WatchType::kAdded, "Node", x));
    for (const auto& x : cluster.pod_groups)
      seed_events.push_back(watch(events::WatchType::kAdded, "PodGroup", x));
    for (const auto& x : cluster.pods) seed_events.push_back(watch(events::WatchType::kAdded, "Pod", x));
    ASSERT_TRUE(log->append(std::move(seed_events)));

    for (uint64_t cycle = 1; cycle <= 3; ++cycle) {
      uint64_t position = log->last_seq();
      events::ClusterState state = project(read_all(*log), position);
      core::SessionOptions opts;
      opts.now = 1'700'000'000 + static_cast<int64_t>(cycle) * 60;
      opts.seed = cycle * 7;
      Event start;
      start.payload = events::CycleStart{cycle, 0x5eed, position, opts.now, opts.seed};
      ASSERT_TRUE(log->append({start}));
      auto result = core::simulate(state.to_objects(), opts, 1);
      std::vector<Event> decided;
      for (const auto& d : result.decisions) {
        Event e;
        e.payload = events::DecisionEvent{cycle, d};
        decided.push_back(e);
        live[cycle].push_back(bytes(cycle, d));
      }
      total += decided.size();
      Event end;
      end.payload = events::CycleEnd{cycle, 10, {}};
      decided.push_back(end);
      ASSERT_TRUE(log->append(std::move(decided)));
      // Churn between cycles: some running pods finish, so the next cycle has room to decide more.
      std::vector<Event> churn;
      int n = 0;
      for (const auto& [key, pod] : state.pods) {
        if (pod.phase == "Running" && !pod.node_name.empty() && n++ < 15)
          churn.push_back(watch(events::WatchType::kDeleted, "Pod", pod));
      }
      if (!churn.empty()) {
        ASSERT_TRUE(log->append(std::move(churn)));
      }
    }
  }
  ASSERT_GT(total, 0u) << "the cycles decided nothing: the comparison would be empty";

  // Replay from disk.
  auto log = std::move(EventLog::open(dir.str())).value();
  std::vector<Event> all = read_all(*log);
  std::map<uint64_t, std::vector<std::string>> recorded;
  for (const Event& e : all) {
    if (const auto* d = std::get_if<events::DecisionEvent>(&e.payload)) {
      recorded[d->cycle_id].push_back(bytes(d->cycle_id, d->decision));
    }
  }
  int cycles = 0;
  for (const Event& e : all) {
    const auto* c = std::get_if<events::CycleStart>(&e.payload);
    if (c == nullptr) continue;
    ++cycles;
    core::SessionOptions opts;
    opts.now = c->now;
    opts.seed = c->seed;
    auto result = core::simulate(project(all, c->log_position).to_objects(), opts, 1);
    std::vector<std::string> replayed;
    for (const auto& d : result.decisions) replayed.push_back(bytes(c->cycle_id, d));
    EXPECT_EQ(replayed, recorded[c->cycle_id]) << "cycle " << c->cycle_id;
    EXPECT_EQ(replayed, live[c->cycle_id]) << "cycle " << c->cycle_id;
  }
  EXPECT_EQ(cycles, 3);

  // The tool does the same from the directory, and reports a decision the core would not make.
  log.reset();
  std::string cmd = std::string(KAI_LOG_BIN) + " -d " + dir.str() + " replay 2>/dev/null";
  auto run = [&] {
    std::string out;
    FILE* p = ::popen(cmd.c_str(), "r");
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
    int st = ::pclose(p);
    return std::make_pair(WIFEXITED(st) ? WEXITSTATUS(st) : -1, out);
  };
  auto [code, out] = run();
  EXPECT_EQ(code, 0) << out;
  EXPECT_NE(out.find("replayed 3 cycles, " + std::to_string(total) + " decisions, 0 differences"),
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

}  // namespace
}  // namespace kai::storage
