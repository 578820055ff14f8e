// Event log (docs/performance-targets.md "Targets"): durable ingest with group commit and fsync, and replay
// (decode + apply). Arguments of BM_DurableIngest: record size in bytes, events per append request,
// requests in flight per commit (producers), sync (1 = fsync per batch).
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <future>

#include "bench/temp_dir.hpp"
#include "events/event_codec.hpp"
#include "events/projection.hpp"
#include "storage/event_log.hpp"

namespace {

using kai::events::Event;

using kai::bench::ScopedTempDir;
using kai::bench::temp_dir;

/// A record of about `size` encoded bytes: decisions for ~300 B, pod watch events for larger sizes.
Event make_event(size_t size, uint64_t i) {
  Event e;
  e.timestamp_us = 1'700'000'000'000'000 + static_cast<int64_t>(i);
  if (size <= 400) {
    kai::events::DecisionEvent d;
    d.cycle_id = i / 1000;
    d.decision.seq = i;
    d.decision.action = "allocate";
    d.decision.pod = "team-" + std::to_string(i % 100) + "/train-job-" + std::to_string(i) + "-worker-0";
    d.decision.pod_uid = "4f1c2b7e-9a3d-4c5e-8f6a-" + std::to_string(100000000000 + i);
    d.decision.node = "gpu-node-" + std::to_string(i % 5000);
    d.decision.gpu_groups = {"2f6c1d9e-7b3a-4e8f-9c0d-1a2b3c4d5e6f"};
    d.decision.by = "team-" + std::to_string(i % 100) + "/pg-train-job-" + std::to_string(i);
    std::string probe;
    kai::events::encode_event(Event{0, e.timestamp_us, kai::events::kSchemaVersion, d}, probe);
    if (probe.size() < size) d.decision.reason.assign(size - probe.size() - 2, 'r');
    e.payload = std::move(d);
  } else {
    std::string obj = R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p-)" + std::to_string(i) +
                      R"(","namespace":"team-1","uid":"u-)" + std::to_string(i) +
                      R"(","labels":{"kai.scheduler/queue":"q1"}},"spec":{"schedulerName":"kai-scheduler",)"
                      R"("containers":[{"name":"main","image":"registry/train:latest","resources":{"limits":)"
                      R"({"nvidia.com/gpu":"1"}}}]},"status":{"phase":"Pending"},"pad":")";
    if (obj.size() + 40 < size) obj.append(size - obj.size() - 40, 'x');
    obj += "\"}";
    e.payload =
        kai::events::WatchEvent{"Pod", kai::events::WatchType::kAdded, std::move(obj), std::to_string(i)};
  }
  return e;
}

void BM_DurableIngest(benchmark::State& state) {
  const size_t size = static_cast<size_t>(state.range(0));
  const size_t batch = static_cast<size_t>(state.range(1));
  const size_t producers = static_cast<size_t>(state.range(2));
  const ScopedTempDir dir("ingest");
  kai::storage::EventLogOptions o;
  o.sync = state.range(3) ? kai::storage::SyncPolicy::kEveryBatch : kai::storage::SyncPolicy::kNone;
  auto log = std::move(kai::storage::EventLog::open(dir.str(), o)).value();
  std::vector<Event> proto;
  for (size_t i = 0; i < batch; ++i) proto.push_back(make_event(size, i));
  std::vector<double> latencies_us;
  uint64_t events = 0;
  for (auto _ : state) {
    // `producers` requests in flight at once: the writer commits them as one group.
    std::vector<std::future<kai::model::Result<kai::storage::AppendResult>>> futs;
    auto t0 = std::chrono::steady_clock::now();
    for (size_t p = 0; p < producers; ++p) futs.push_back(log->append_async(proto));
    for (auto& f : futs) {
      auto r = f.get();
      if (!r) state.SkipWithError(r.message().c_str());
      latencies_us.push_back(
          std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
    }
    events += batch * producers;
  }
  state.SetItemsProcessed(static_cast<int64_t>(events));
  std::sort(latencies_us.begin(), latencies_us.end());
  if (!latencies_us.empty()) {
    state.counters["p50_us"] = latencies_us[latencies_us.size() / 2];
    state.counters["p99_us"] = latencies_us[latencies_us.size() * 99 / 100];
  }
  std::string probe;
  kai::events::encode_event(proto[0], probe);
  state.counters["record_B"] = static_cast<double>(probe.size() + 4);
}
// size, events per request, requests per commit, sync
BENCHMARK(BM_DurableIngest)
    ->Args({300, 10, 1, 1})
    ->Args({300, 1000, 1, 1})
    ->Args({300, 250, 4, 1})
    ->Args({1024, 1000, 1, 1})
    ->Args({1024, 250, 4, 1})
    ->Args({300, 1000, 1, 0})
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

/// Several producer threads appending continuously, each request waiting for its own commit: the
/// writer overlaps one batch's fsync with the next batch's queueing (true group commit).
/// Arguments: record size, events per request. Threads: producers.
std::unique_ptr<kai::storage::EventLog> g_shared_log;
std::string g_shared_dir;

void BM_GroupCommitThreads(benchmark::State& state) {
  const size_t size = static_cast<size_t>(state.range(0));
  const size_t batch = static_cast<size_t>(state.range(1));
  if (state.thread_index() == 0) {
    g_shared_dir = temp_dir("threads");
    g_shared_log = std::move(kai::storage::EventLog::open(g_shared_dir)).value();
  }
  std::vector<Event> proto;
  for (size_t i = 0; i < batch; ++i) proto.push_back(make_event(size, i));
  std::vector<double> latencies_us;
  uint64_t events = 0;
  for (auto _ : state) {
    auto t0 = std::chrono::steady_clock::now();
    auto r = g_shared_log->append(proto);
    if (!r) state.SkipWithError(r.message().c_str());
    latencies_us.push_back(
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
    events += batch;
  }
  state.SetItemsProcessed(static_cast<int64_t>(events));
  std::sort(latencies_us.begin(), latencies_us.end());
  // Per-thread p99, averaged over the threads (the default would sum them).
  if (!latencies_us.empty())
    state.counters["p99_us"] =
        benchmark::Counter(latencies_us[latencies_us.size() * 99 / 100], benchmark::Counter::kAvgThreads);
  if (state.thread_index() == 0) {
    g_shared_log.reset();
    std::filesystem::remove_all(g_shared_dir);
  }
}
BENCHMARK(BM_GroupCommitThreads)
    ->Args({300, 100})
    ->Args({1024, 100})
    ->Threads(8)
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

/// Decode + apply of records already in memory (the replay loop without I/O).
void BM_ReplayDecodeApply(benchmark::State& state) {
  const size_t size = static_cast<size_t>(state.range(0));
  std::vector<std::string> encoded;
  for (uint64_t i = 0; i < 10000; ++i) {
    std::string b;
    kai::events::encode_event(make_event(size, i), b);
    encoded.push_back(std::move(b));
  }
  kai::events::ClusterState cs;
  uint64_t n = 0;
  for (auto _ : state) {
    for (const auto& b : encoded) {
      auto e = kai::events::decode_event(b);
      if (!e) state.SkipWithError("decode failed");
      (void)kai::events::apply(cs, *e);
      ++n;
    }
  }
  state.SetItemsProcessed(static_cast<int64_t>(n));
}
BENCHMARK(BM_ReplayDecodeApply)->Arg(300)->Arg(1024)->Unit(benchmark::kMillisecond);

/// Replay from RocksDB: iterate, check CRC, decode, apply.
void BM_ReplayFromLog(benchmark::State& state) {
  const size_t size = static_cast<size_t>(state.range(0));
  const uint64_t count = static_cast<uint64_t>(state.range(1));
  const ScopedTempDir dir("replay");
  {
    kai::storage::EventLogOptions o;
    o.sync = kai::storage::SyncPolicy::kNone;
    auto log = std::move(kai::storage::EventLog::open(dir.str(), o)).value();
    for (uint64_t i = 0; i < count; i += 1000) {
      std::vector<Event> b;
      for (uint64_t k = i; k < std::min(count, i + 1000); ++k) b.push_back(make_event(size, k));
      (void)log->append(std::move(b));
    }
  }
  kai::storage::EventLogOptions ro;
  ro.read_only = true;
  auto log = std::move(kai::storage::EventLog::open(dir.str(), ro)).value();
  uint64_t n = 0;
  for (auto _ : state) {
    kai::events::ClusterState cs;
    (void)log->read(1, UINT64_MAX, [&](uint64_t, const kai::model::Result<Event>& e) {
      if (e) (void)kai::events::apply(cs, *e);
      ++n;
      return true;
    });
  }
  state.SetItemsProcessed(static_cast<int64_t>(n));
}
BENCHMARK(BM_ReplayFromLog)
    ->Args({300, 1000})
    ->Args({300, 200000})
    ->Args({1024, 100000})
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
