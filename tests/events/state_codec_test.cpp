// Binary state snapshots (docs/event-log-format.md "Snapshots"): decode(encode(state)) == state for generated clusters and for
// every object of the scenario corpus (field errors, optional fields and all), and damaged bytes give
// an error or some state, never a crash.
#include "events/state_codec.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "k8s/model/codec.hpp"
#include "k8s/model/json_codec.hpp"
#include "tests/model/scenario_corpus.hpp"
#include "tools/kai-gen/api_pod.hpp"
#include "tools/kai-gen/generator.hpp"

namespace kai::events {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::StartsWith;

std::string source_dir() {
  const char* env = std::getenv("KAI_SOURCE_DIR");
  return env != nullptr ? env : KAI_DEFAULT_SOURCE_DIR;
}

/// The state the projection builds from `objects` delivered as ADDED watch events.
ClusterState project(const model::ClusterObjects& objects) {
  ClusterState s;
  uint64_t seq = 0;
  auto add = [&](const std::string& kind, const auto& list) {
    for (const auto& o : list) {
      Event e;
      e.seq = ++seq;
      e.payload = WatchEvent{kind, WatchType::kAdded, model::encode(o).dump(), o.meta.resource_version};
      Status st = apply(s, e);
      EXPECT_TRUE(st) << kind << " " << o.meta.name << ": " << st.message();
    }
  };
  add("Node", objects.nodes);
  add("Queue", objects.queues);
  add("PriorityClass", objects.priority_classes);
  add("PodGroup", objects.pod_groups);
  add("Pod", objects.pods);
  add("BindRequest", objects.bind_requests);
  return s;
}

/// Records with every field set: assumed decisions (one reported), job state with expectations.
ScheduleRecords sample_records() {
  ScheduleRecords r;
  Decision bind;
  bind.seq = 3;
  bind.action = "allocate";
  bind.kind = DecisionKind::kBind;
  bind.pod = "team-a/p-1";
  bind.pod_uid = "u-1";
  bind.node = "node-1";
  bind.gpu_groups = {"g-1"};
  bind.gpu_fraction = 0.5;
  bind.by = "team-a/pg-1";
  bind.queue = "team-a";
  r.assumed[17] = {bind, false};
  Decision evict = bind;
  evict.kind = DecisionKind::kEvict;
  evict.reason = "reclaimed";
  r.assumed[uint64_t{1} << 40] = {evict, true};
  JobState st;
  st.group = "team-a/pg-1";
  st.fields[0].value = 1700000000;
  st.fields[0].expected = {std::nullopt, 1700000000};
  st.fields[1].value = std::nullopt;
  st.fields[1].expected = {-5};
  st.fields[2].value = 1700000100;
  st.fields[2].expected = {1700000100};
  r.job_states["uid-pg-1"] = st;
  r.last_now_ms = 1700000123456;
  r.scheduler_name = "other-scheduler";
  r.bind_failures["team-a/p-1"] = {"u-1", 3, 1700000120000, "403 Forbidden"};
  r.bind_failures["team-a/p-2"] = {"u-2", 1, std::nullopt, "reservation timed out"};
  r.usage_history.queues["team-a"] = {{1700000000000, 8, 16000, 6.4e10}, {1700000060000, 0.5, 500, 1e9}};
  r.usage_history.queues["team-b"] = {{1700000060000, 1, 0, 0}};
  r.usage_history.capacity = {{1700000000000, 16, 128000, 5.12e11}};
  return r;
}

std::string encoded(const ClusterState& s) {
  std::string out;
  encode_state(s, out);
  return out;
}

void expect_round_trip(const ClusterState& s) {
  auto back = decode_state(encoded(s));
  ASSERT_TRUE(back) << back.message();
  EXPECT_TRUE(*back == s);
  // Object by object, so that a failure names the kind that lost something.
  EXPECT_TRUE(back->nodes == s.nodes);
  EXPECT_TRUE(back->pods == s.pods);
  EXPECT_TRUE(back->queues == s.queues);
  EXPECT_TRUE(back->pod_groups == s.pod_groups);
  EXPECT_TRUE(back->priority_classes == s.priority_classes);
  EXPECT_TRUE(back->bind_requests == s.bind_requests);
  EXPECT_EQ(back->resource_versions, s.resource_versions);
  EXPECT_TRUE(back->records == s.records);
  EXPECT_EQ(back->seq, s.seq);
}

TEST(StateCodec, EmptyState) {
  expect_round_trip(ClusterState{});
}

TEST(StateCodec, GeneratedClusterRoundTrips) {
  ClusterState s = project(gen::generate(gen::ClusterSpec::scaled(0.01)));
  ASSERT_GT(s.pods.size(), 1000u);
  ASSERT_GT(s.nodes.size(), 10u);
  s.records = sample_records();
  s.seq = 123456789;
  expect_round_trip(s);
}

TEST(StateCodec, UnconfirmedBindsAndTheirHoldsRoundTrip) {
  ClusterState s;
  s.records = sample_records();
  Decision held = s.records.assumed.at(17).decision;
  held.pod = "team-a/p-3";
  s.records.assumed[18] = {held, false, true, 1700000100000};  // a bind a restart left unconfirmed, timed
  s.records.assumed[19] = {held, false, true, std::nullopt};   // and one not timed yet
  expect_round_trip(s);
}

TEST(StateCodec, RealisticPodWithEveryDecodedFieldRoundTrips) {
  ClusterState s;
  for (int i = 0; i < 3; ++i) {
    nlohmann::json p = gen::api_server_pod(i);
    p["metadata"]["deletionTimestamp"] = "2026-11-20T11:00:00Z";
    if (i == 1)
      p["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "not-a-quantity";  // a FieldError
    Event e;
    e.payload = WatchEvent{"Pod", WatchType::kAdded, p.dump(), "1"};
    ASSERT_TRUE(apply(s, e));
  }
  ASSERT_EQ(s.pods.size(), 3u);
  ASSERT_TRUE(s.pods.begin()->second.meta.deletion_timestamp.has_value());
  bool has_error = false;
  for (const auto& [k, p] : s.pods) has_error = has_error || !p.errors.empty();
  ASSERT_TRUE(has_error);
  expect_round_trip(s);
}

TEST(StateCodec, ScenarioCorpusRoundTrips) {
  ClusterState s;
  size_t objects = 0;
  scenario_corpus::for_each_object([&](const nlohmann::json& d) {
    Event e;
    // Names repeat across scenarios: prefix them so that every object stays in the state.
    nlohmann::json o = d;
    if (o.contains("metadata") && o["metadata"].is_object() && o["metadata"].contains("name") &&
        o["metadata"]["name"].is_string()) {
      o["metadata"]["name"] = std::to_string(objects) + "-" + o["metadata"]["name"].get<std::string>();
    }
    e.payload = WatchEvent{d.value("kind", "Pod"), WatchType::kAdded, o.dump(), ""};
    if (apply(s, e)) ++objects;
  });
  EXPECT_GT(objects, 500u);
  size_t with_errors = 0;
  for (const auto& [k, p] : s.pods) with_errors += p.errors.empty() ? 0 : 1;
  for (const auto& [k, q] : s.queues) with_errors += q.errors.empty() ? 0 : 1;
  for (const auto& [k, g] : s.pod_groups) with_errors += g.errors.empty() ? 0 : 1;
  EXPECT_GT(with_errors, 0u) << "the corpus should include objects with field errors";
  expect_round_trip(s);
}

TEST(StateCodec, RefusesWhatItDidNotWrite) {
  const std::string good = encoded(project(gen::generate(gen::ClusterSpec::scaled(0.001))));
  EXPECT_THAT(decode_state("").message(), HasSubstr("bad magic"));
  EXPECT_THAT(decode_state("KAX\x01").message(), HasSubstr("bad magic"));
  std::string future = good;
  future[3] = static_cast<char>(kStateSnapshotVersion + 1);
  EXPECT_THAT(decode_state(future).message(), HasSubstr("unsupported snapshot version"));
  EXPECT_THAT(decode_state(good + "x").message(), HasSubstr("trailing bytes"));
  EXPECT_THAT(decode_state(good.substr(0, good.size() - 1)).message(),
              StartsWith("damaged or truncated snapshot (in "));
}

TEST(StateCodec, DamagedBytesNeverCrash) {
  const std::string good = encoded(project(gen::generate(gen::ClusterSpec::scaled(0.001))));
  ASSERT_GT(good.size(), 1000u);
  size_t failed = 0;
  for (size_t cut = 0; cut < good.size(); cut += 13) failed += decode_state(good.substr(0, cut)) ? 0 : 1;
  EXPECT_EQ(failed, (good.size() + 12) / 13) << "every truncation is an error";
  std::mt19937_64 rng(11);
  for (int i = 0; i < 3000; ++i) {
    std::string t = good;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int k = 0; k < flips; ++k) t[4 + rng() % (t.size() - 4)] = static_cast<char>(rng() % 256);
    auto r = decode_state(t);  // an error, or a state: the bytes of a string may change freely
    if (!r) {
      EXPECT_THAT(r.message(), StartsWith("damaged or truncated snapshot (in "));
    }
  }
}

}  // namespace
}  // namespace kai::events

namespace kai::events {
namespace {

template <class T>
SharedObjects<T> shared(const std::map<std::string, T>& from) {
  SharedObjects<T> out;
  for (const auto& [k, v] : from) out.emplace(k, std::make_shared<const T>(v));
  return out;
}

// The daemon's entity actors encode their kinds apart; assembled, the bytes are encode_state's.
TEST(StateCodec, SectionsAssembleIntoTheSameSnapshot) {
  ClusterState s = project(gen::generate(gen::ClusterSpec::scaled(0.002)));
  s.seq = 99;
  s.records = sample_records();
  s.resource_versions["Pod"] = "17";
  StateSections parts;
  parts.nodes = encode_section(shared(s.nodes));
  parts.pods = encode_section(shared(s.pods));
  parts.queues = encode_section(shared(s.queues));
  parts.pod_groups = encode_section(shared(s.pod_groups));
  parts.priority_classes = encode_section(shared(s.priority_classes));
  parts.bind_requests = encode_section(shared(s.bind_requests));
  std::string assembled;
  encode_state(s.seq, s.resource_versions, s.records, parts, assembled);
  EXPECT_EQ(assembled, encoded(s));
}

}  // namespace
}  // namespace kai::events

namespace kai::events {
namespace {

// tests/fixtures/snapshot-v2/state.bin was written by the last format-2 build: three pods from
// kai-gen's api_server_pod(0..2), sample_records() of that build (no failed binds), seq 4242, the
// Pod resourceVersion 17. This build reads it with no failed binds (docs/one-truth.md).
TEST(StateCodec, ReadsAFormat2Snapshot) {
  std::ifstream in(fs::path(source_dir()) / "tests" / "fixtures" / "snapshot-v2" / "state.bin", std::ios::binary);
  ASSERT_TRUE(in) << "fixture missing";
  std::stringstream bytes;
  bytes << in.rdbuf();
  ASSERT_EQ(bytes.str()[3], 2) << "not a format-2 snapshot";
  auto s = decode_state(bytes.str());
  ASSERT_TRUE(s) << s.message();
  EXPECT_EQ(s->seq, 4242u);
  EXPECT_EQ(s->resource_versions.at("Pod"), "17");
  ASSERT_EQ(s->pods.size(), 3u);
  for (const auto& [key, pod] : s->pods) {
    EXPECT_FALSE(pod.containers.empty()) << key;
    EXPECT_FALSE(pod.meta.uid.empty()) << key;
  }
  ScheduleRecords expected = sample_records();
  expected.bind_failures.clear();
  expected.usage_history = {};  // format 10 added it
  for (auto& [uid, st] : expected.job_states) st.fields[2] = {};  // format 11 added the last eviction
  EXPECT_TRUE(s->records == expected);
  EXPECT_TRUE(s->records.bind_failures.empty());
  // Written again, it is format 3 and round-trips.
  const std::string again = encoded(*s);
  EXPECT_EQ(again[3], static_cast<char>(kStateSnapshotVersion));
  expect_round_trip(*s);
}

}  // namespace
}  // namespace kai::events
