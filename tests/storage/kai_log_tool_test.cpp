// kai-log end to end: import a cluster, verify, export a snapshot kai-sim reads, and survive damage.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "events/event.hpp"
#include "events/state_codec.hpp"
#include "k8s/model/codec.hpp"
#include "storage/event_log.hpp"
#include "storage/restore.hpp"
#include "tests/shell/run_command.hpp"
#include "tests/storage/temp_dir.hpp"

namespace kai::storage {
namespace {

using ToolRun = test_shell::CommandRun;

/// Runs `kai-log <args>`; its standard error is dropped.
ToolRun run(const std::string& args) {
  return test_shell::run_command(std::string(KAI_LOG_BIN) + " " + args + " 2>/dev/null");
}

std::string example() {
  return std::string(KAI_DEFAULT_SOURCE_DIR) + "/deploy/examples/gpu-cluster.yaml";
}

TEST(KaiLogTool, ImportVerifyExport) {
  testing::TempDir dir;
  std::string d = "-d " + dir.str();
  ASSERT_EQ(run(d + " import " + example()).code, 0);
  ToolRun v = run(d + " verify");
  EXPECT_EQ(v.code, 0) << v.out;
  EXPECT_NE(v.out.find("ok:"), std::string::npos);
  ToolRun s = run(d + " snapshot export");
  ASSERT_EQ(s.code, 0);
  auto exported = model::decode_snapshot(s.out);
  ASSERT_TRUE(exported) << exported.message();
  std::ifstream in(example());
  std::stringstream ss;
  ss << in.rdbuf();
  auto original = model::decode_snapshot(ss.str());
  ASSERT_TRUE(original);
  EXPECT_EQ(exported->nodes.size(), original->nodes.size());
  EXPECT_EQ(exported->pods.size(), original->pods.size());
  EXPECT_EQ(exported->queues.size(), original->queues.size());
  ToolRun dump = run(d + " dump --kind watch --from 2 --to 3");
  EXPECT_EQ(dump.code, 0);
  EXPECT_EQ(std::count(dump.out.begin(), dump.out.end(), '\n'), 2);
  ToolRun st = run(d + " stats");
  EXPECT_NE(st.out.find("\"watch\":"), std::string::npos) << st.out;
}

// A Topology is an input like any other: imported, kept, and exported with its levels, so kai-sim
// places topology-constrained gangs from the export as the daemon did (docs/topology.md).
TEST(KaiLogTool, ATopologyIsExportedWithItsLevels) {
  testing::TempDir dir;
  const std::string input = dir.str() + "/topology.yaml";
  {
    std::ofstream out(input);
    out << "apiVersion: v1\nkind: List\nitems:\n"
           "- apiVersion: kai.scheduler/v1alpha1\n  kind: Topology\n  metadata: {name: layout, uid: t-1}\n"
           "  spec:\n    levels:\n    - nodeLabel: example.com/zone\n"
           "    - {nodeLabel: example.com/rack, alias: rack}\n"
           "- apiVersion: v1\n  kind: Node\n  metadata:\n    name: r1-a\n    uid: n-1\n"
           "    labels: {example.com/zone: z1, example.com/rack: r1}\n"
           "  status:\n    allocatable: {cpu: '8', memory: 8Gi, pods: '110', nvidia.com/gpu: '2'}\n"
           "    conditions: [{type: Ready, status: 'True'}]\n";
  }
  std::string d = "-d " + dir.str() + "/log";
  ASSERT_EQ(run(d + " import " + input).code, 0);
  ToolRun s = run(d + " snapshot export");
  ASSERT_EQ(s.code, 0);
  auto exported = model::decode_snapshot(s.out);
  ASSERT_TRUE(exported) << exported.message();
  ASSERT_EQ(exported->topologies.size(), 1u) << s.out.substr(0, 2000);
  const model::Topology& t = exported->topologies.front();
  EXPECT_EQ(t.meta.name, "layout");
  ASSERT_EQ(t.levels.size(), 2u);
  EXPECT_EQ(t.levels[0].node_label, "example.com/zone");
  EXPECT_EQ(t.levels[1].node_label, "example.com/rack");
  EXPECT_EQ(t.levels[1].alias, "rack");
  EXPECT_EQ(exported->nodes.size(), 1u);
}

// A snapshot taken in the middle: `snapshot list` shows it, `snapshot export` starts from it and gives
// the same List as a log without it, `verify` checks it and names it when it is damaged.
TEST(KaiLogTool, SnapshotListExportAndVerify) {
  testing::TempDir dir;
  std::string d = "-d " + dir.str();
  ASSERT_EQ(run(d + " import " + example()).code, 0);
  const std::string without_snapshot = run(d + " snapshot export").out;
  uint64_t at = 0;
  {
    auto log = EventLog::open(dir.str());
    ASSERT_TRUE(log);
    at = (*log)->last_seq() / 2;
    auto state = restore_state(**log, at);
    ASSERT_TRUE(state) << state.message();
    std::string bytes;
    events::encode_state(state->state, bytes);
    ASSERT_TRUE((*log)->write_snapshot(at, bytes));
  }
  ToolRun list = run(d + " snapshot list");
  EXPECT_EQ(list.code, 0);
  EXPECT_EQ(list.out.rfind("{\"bytes\":", 0), 0u) << list.out;
  EXPECT_NE(list.out.find("\"seq\":" + std::to_string(at) + "}"), std::string::npos) << list.out;
  EXPECT_EQ(run(d + " snapshot export").out, without_snapshot);
  ToolRun v = run(d + " verify");
  EXPECT_EQ(v.code, 0) << v.out;
  EXPECT_NE(v.out.find("1 snapshots (0 corrupt)"), std::string::npos) << v.out;
}

TEST(KaiLogTool, WhyAndAudit) {
  testing::TempDir dir;
  {
    auto log = EventLog::open(dir.str());
    ASSERT_TRUE(log);
    events::Event d;
    d.timestamp_us = 1'700'000'000'000'000;
    events::DecisionEvent de;
    de.cycle_id = 4;
    de.decision.action = "reclaim";
    de.decision.kind = events::DecisionKind::kEvict;
    de.decision.pod = "ns/victim";
    de.decision.node = "n1";
    de.decision.reason = "reclaimed by ns/pg-b";
    de.decision.by = "ns/pg-b";
    d.payload = de;
    events::Event o;
    o.timestamp_us = d.timestamp_us + 1;
    o.payload = events::BinderOutcome{1, "ns/victim", events::Outcome::kBound, ""};
    events::Event u;
    u.timestamp_us = d.timestamp_us + 2;
    u.payload = events::UnschedulableEvent{4, "ns/pg-c", "q-team", {{"OverLimit", "over limit"}}};
    ASSERT_TRUE((*log)->append({d, o, u}));
  }
  std::string dd = "-d " + dir.str();
  ToolRun why = run(dd + " why ns/victim");
  EXPECT_EQ(why.code, 0);
  EXPECT_LT(why.out.find("binder: bound"), why.out.find("reclaim evict on n1 by ns/pg-b"))  // newest first
      << why.out;
  ToolRun audit = run(dd + " audit --queue q-team --since 2023-11-14T00:00:00Z");
  EXPECT_EQ(audit.code, 0);
  EXPECT_NE(audit.out.find("OverLimit"), std::string::npos) << audit.out;
  EXPECT_EQ(run(dd + " audit --queue q-team --since 2030-01-01T00:00:00Z").out, "");
}

/// The sequence numbers of the JSON lines a dump or an audit printed, in order.
std::vector<uint64_t> seqs_of(const std::string& out) {
  std::vector<uint64_t> seqs;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << line;
    if (!j.is_discarded()) seqs.push_back(j.value("seq", uint64_t{0}));
  }
  return seqs;
}

events::Event decision_at(int64_t ts_us, uint64_t cycle, events::DecisionKind kind, const std::string& pod,
                          const std::string& queue, const std::string& by) {
  events::Event e;
  e.timestamp_us = ts_us;
  events::DecisionEvent d;
  d.cycle_id = cycle;
  d.decision.action = kind == events::DecisionKind::kEvict ? "reclaim" : "allocate";
  d.decision.kind = kind;
  d.decision.pod = pod;
  d.decision.node = "n1";
  d.decision.by = by;
  d.decision.queue = queue;
  e.payload = d;
  return e;
}

TEST(KaiLogTool, AuditOfAQueueListsItsDecisionsNewestFirst) {
  testing::TempDir dir;
  const int64_t t0 = 1'700'000'000'000'000;  // 2023-11-14T22:13:20Z
  const int64_t hour = 3'600'000'000;
  {
    auto log = EventLog::open(dir.str());
    ASSERT_TRUE(log);
    using events::DecisionKind;
    events::Event pending;
    pending.timestamp_us = t0 + 2 * hour;
    pending.payload = events::UnschedulableEvent{3, "team/pg-c", "q-team", {{"OverLimit", "over limit"}}};
    ASSERT_TRUE((*log)->append({
        decision_at(t0, 1, DecisionKind::kBind, "team/p1", "q-team", "team/pg-1"),  // 1
        // A pod of q-team evicted for a group of another queue: listed under the victim's queue.
        decision_at(t0 + hour, 2, DecisionKind::kEvict, "team/victim", "q-team", "other/pg-b"),   // 2
        pending,                                                                                  // 3
        decision_at(t0 + 2 * hour, 3, DecisionKind::kBind, "other/p2", "q-other", "other/pg-b"),  // 4
    }));
  }
  std::string d = "-d " + dir.str() + " audit --queue q-team";
  ToolRun all = run(d);
  EXPECT_EQ(all.code, 0);
  EXPECT_EQ(seqs_of(all.out), (std::vector<uint64_t>{3, 2, 1})) << all.out;
  EXPECT_NE(all.out.find("\"by\":\"other/pg-b\""), std::string::npos) << all.out;  // who evicted
  EXPECT_EQ(seqs_of(run(d + " --since 2023-11-14T23:00:00Z").out), (std::vector<uint64_t>{3, 2}));
  EXPECT_EQ(seqs_of(run(d + " --since 2023-11-14T23:00:00Z --limit 1").out), (std::vector<uint64_t>{3}));
  EXPECT_EQ(run(d + " --since 2023-11-15T01:00:00Z").out, "");
  EXPECT_EQ(seqs_of(run("-d " + dir.str() + " audit --queue q-other").out), (std::vector<uint64_t>{4}));
}

TEST(KaiLogTool, DumpFiltersMatchObjectsAndCyclesExactly) {
  testing::TempDir dir;
  auto pod = [](const std::string& ns, const std::string& name, const std::string& extra = "") {
    events::Event e;
    e.payload = events::WatchEvent{
        "Pod", events::WatchType::kAdded,
        R"({"kind":"Pod","metadata":{"name":")" + name + R"(","namespace":")" + ns + R"("})" + extra + "}",
        "1"};
    return e;
  };
  {
    auto log = EventLog::open(dir.str());
    ASSERT_TRUE(log);
    using events::DecisionKind;
    std::vector<events::Event> evs = {
        pod("ns", "a"),     // 1
        pod("ns", "ab"),    // 2
        pod("ns", "a-b"),   // 3
        pod("other", "a"),  // 4: the same name in another namespace
        pod("ns", "x",
            R"(,"spec":{"cycle":1,"priority":0,"containers":[{"name":"a"}]},"status":{"name":"ns/a"})"),  // 5
    };
    events::Event node;  // 6: a cluster-scoped object named like the pod
    node.payload = events::WatchEvent{"Node", events::WatchType::kAdded, R"({"metadata":{"name":"a"}})", "2"};
    evs.push_back(node);
    events::Event relist;  // 7: a List names each of its items
    relist.payload = events::WatchEvent{
        "Pod", events::WatchType::kRelist,
        R"({"kind":"List","metadata":{"resourceVersion":"3"},"items":[{"metadata":{"name":"zz","namespace":"ns"}},)"
        R"({"metadata":{"name":"a","namespace":"ns"}}]})",
        "3"};
    evs.push_back(relist);
    events::Event start1, end1, start10, end10, pending, outcome;
    start1.payload = events::CycleStart{1, 0, 7, 1'700'000'000, 1};                          // 8
    end1.payload = events::CycleEnd{1, 10, {}};                                              // 11
    start10.payload = events::CycleStart{10, 0, 11, 1'700'000'060, 2};                       // 12
    end10.payload = events::CycleEnd{10, 10, {}};                                            // 14
    pending.payload = events::UnschedulableEvent{1, "ns/ab", "q", {{"OverLimit", "ns/a"}}};  // 10
    outcome.payload = events::BinderOutcome{9, "ns/a", events::Outcome::kBound, ""};         // 15
    evs.push_back(start1);
    evs.push_back(decision_at(0, 1, DecisionKind::kBind, "ns/a", "q", "ns/pg-a"));  // 9
    evs.push_back(pending);
    evs.push_back(end1);
    evs.push_back(start10);
    evs.push_back(decision_at(0, 10, DecisionKind::kBind, "ns/a-b", "q", "ns/pg-ab"));  // 13
    evs.push_back(end10);
    evs.push_back(outcome);
    ASSERT_TRUE((*log)->append(std::move(evs)));
  }
  std::string d = "-d " + dir.str() + " dump";
  auto dump = [&](const std::string& args) {
    ToolRun r = run(d + " " + args);
    EXPECT_EQ(r.code, 0) << args;
    return seqs_of(r.out);
  };
  // Not ns/ab, ns/a-b, other/a, a container or a status string "a", nor the node a.
  EXPECT_EQ(dump("--object ns/a"), (std::vector<uint64_t>{1, 7, 9, 15}));
  EXPECT_EQ(dump("--object a"), (std::vector<uint64_t>{6}));
  EXPECT_EQ(dump("--object ns/ab"), (std::vector<uint64_t>{2, 10}));
  EXPECT_EQ(dump("--object q"), (std::vector<uint64_t>{9, 10, 13}));    // a queue
  EXPECT_EQ(dump("--object n1"), (std::vector<uint64_t>{9, 13}));       // a node of decisions
  EXPECT_EQ(dump("--object ns/pg-ab"), (std::vector<uint64_t>{13}));    // the deciding group
  EXPECT_EQ(dump("--cycle 1"), (std::vector<uint64_t>{8, 9, 10, 11}));  // not cycle 10
  EXPECT_EQ(dump("--cycle 10"), (std::vector<uint64_t>{12, 13, 14}));
  EXPECT_EQ(dump("--cycle 1 --object ns/a"), (std::vector<uint64_t>{9}));
  EXPECT_EQ(dump("--cycle 1 --kind cycle_end"), (std::vector<uint64_t>{11}));
}

TEST(KaiLogTool, DamagedRecordIsReportedNotFatal) {
  testing::TempDir dir;
  std::string d = "-d " + dir.str();
  ASSERT_EQ(run(d + " import " + example()).code, 0);
  {
    auto log = EventLog::open(dir.str());
    ASSERT_TRUE(log);
    std::string raw = *(*log)->get_raw(5);
    raw[raw.size() - 3] ^= 0x01;
    ASSERT_TRUE((*log)->put_raw(5, raw));
  }
  ToolRun v = run(d + " verify");
  EXPECT_EQ(v.code, 1);
  EXPECT_NE(v.out.find("corrupt record 5:"), std::string::npos) << v.out;
  EXPECT_EQ(run(d + " dump").code, 1);  // the other records are still printed
  EXPECT_EQ(run(d + " stats").code, 0);
  EXPECT_EQ(run(d + " snapshot export").code, 1);
  EXPECT_EQ(run("-d " + dir.str() + "/missing verify").code, 2);
}

}  // namespace
}  // namespace kai::storage
