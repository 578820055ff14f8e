// kai-log end to end: import a cluster, verify, export a snapshot kai-sim reads, and survive damage.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "events/event.hpp"
#include "events/state_codec.hpp"
#include "k8s/model/codec.hpp"
#include "storage/event_log.hpp"
#include "storage/restore.hpp"
#include "tests/storage/temp_dir.hpp"

namespace kai::storage {
namespace {

struct ToolRun {
  int code = -1;
  std::string out;
};

ToolRun run(const std::string& args) {
  ToolRun r;
  std::string cmd = std::string(KAI_LOG_BIN) + " " + args + " 2>/dev/null";
  FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) return r;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  int st = ::pclose(p);
  r.code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
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
