// State snapshots and cold start (docs/performance-targets.md "Targets": cold start <= 3 s at 5,000 nodes /
// 150,000 pods). The state is kai-gen's default mix scaled by the argument in percent (100 = 5,000
// nodes, ~150k pods). BM_ColdStart is what a restart does: read the newest snapshot from RocksDB,
// check it, decode it, and apply the log's tail (10,000 pod events of about 1 KB) after it.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <filesystem>

#include "bench/generated_state.hpp"
#include "bench/temp_dir.hpp"
#include "events/state_codec.hpp"
#include "k8s/model/json_codec.hpp"
#include "storage/event_log.hpp"
#include "storage/restore.hpp"

namespace {

using kai::events::ClusterState;

ClusterState make_state(int64_t percent) {
  return kai::bench::generated_state(percent);
}

void counters(benchmark::State& state, const ClusterState& s, size_t bytes) {
  state.counters["nodes"] = static_cast<double>(s.nodes.size());
  state.counters["pods"] = static_cast<double>(s.pods.size());
  state.counters["MB"] = static_cast<double>(bytes) / 1e6;
}

void BM_SnapshotEncode(benchmark::State& state) {
  const ClusterState s = make_state(state.range(0));
  size_t bytes = 0;
  for (auto _ : state) {
    std::string out;
    kai::events::encode_state(s, out);
    bytes = out.size();
    benchmark::DoNotOptimize(out.data());
  }
  counters(state, s, bytes);
}
BENCHMARK(BM_SnapshotEncode)->Arg(1)->Arg(20)->Arg(100)->Unit(benchmark::kMillisecond);

void BM_SnapshotDecode(benchmark::State& state) {
  const ClusterState s = make_state(state.range(0));
  std::string bytes;
  kai::events::encode_state(s, bytes);
  for (auto _ : state) {
    auto back = kai::events::decode_state(bytes);
    if (!back) state.SkipWithError(back.message().c_str());
    benchmark::DoNotOptimize(back);
  }
  counters(state, s, bytes.size());
}
BENCHMARK(BM_SnapshotDecode)->Arg(1)->Arg(20)->Arg(100)->Unit(benchmark::kMillisecond);

void BM_ColdStart(benchmark::State& state) {
  const ClusterState s = make_state(state.range(0));
  const kai::bench::ScopedTempDir dir("coldstart");
  size_t snapshot_bytes = 0;
  {
    kai::storage::EventLogOptions o;
    o.sync = kai::storage::SyncPolicy::kNone;
    auto log = std::move(kai::storage::EventLog::open(dir.str(), o)).value();
    // The events the snapshot covers (stand-ins: their content is never read), then the snapshot.
    std::vector<kai::events::Event> marks(1000);
    for (auto& e : marks) e.payload = kai::events::CycleEnd{1, 1, {}};
    (void)log->append(marks);
    std::string bytes;
    kai::events::encode_state(s, bytes);
    snapshot_bytes = bytes.size();
    if (!log->write_snapshot(log->last_seq(), bytes)) state.SkipWithError("write_snapshot failed");
    // The tail: pods of the snapshot modified (a label more), as a watch delivers them.
    std::vector<kai::events::Event> tail;
    auto it = s.pods.begin();
    for (int i = 0; i < 10000 && it != s.pods.end(); ++i, ++it) {
      kai::model::Pod p = it->second;
      p.meta.labels["tail"] = std::to_string(i);
      kai::events::Event e;
      e.payload = kai::events::WatchEvent{"Pod", kai::events::WatchType::kModified,
                                          kai::model::encode(p).dump(), std::to_string(200000000 + i)};
      tail.push_back(std::move(e));
    }
    (void)log->append(std::move(tail));
  }
  kai::storage::EventLogOptions ro;
  ro.read_only = true;
  uint64_t tail_events = 0;
  for (auto _ : state) {
    auto log = kai::storage::EventLog::open(dir.str(), ro);
    if (!log) state.SkipWithError(log.message().c_str());
    auto r = kai::storage::restore_state(**log);
    if (!r) state.SkipWithError(r.message().c_str());
    tail_events = r->tail_events;
    if (r->state.pods.size() != s.pods.size()) state.SkipWithError("restored state differs");
  }
  counters(state, s, snapshot_bytes);
  state.counters["tail"] = static_cast<double>(tail_events);
}
BENCHMARK(BM_ColdStart)->Arg(1)->Arg(100)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace

BENCHMARK_MAIN();
