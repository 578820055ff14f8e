// Durable ingest while snapshots are written and retention deletes (retention's compaction must not
// stall ingest: docs/event-log-format.md "Retention"). Eight producer threads append 1 KB pod watch events, 100 per request, each waiting
// for its group commit (fsync per batch), as BM_GroupCommitThreads/1024/100 in eventlog_bench.cpp.
// Beside them, one thread loops without pause: write a snapshot of kai-gen's state (events::
// encode_state; 30.5 MB at 5,000 nodes / 153k pods) at the log's end, then apply retention with a
// size limit small enough that every pass deletes the events up to the older kept snapshot (a
// DeleteRange plus a compaction of the deleted range).
//
// Arguments: background (0 = none, 1 = snapshot + retention with the snapshot encoded once, 2 = the
// same, encoding the state again for every snapshot, as the daemon's actor does, 3 = snapshots
// only, without retention, to tell the two costs apart), state size in
// percent of kai-gen's default mix (100 = 5,000 nodes). Commit latency is per request, over all
// producers: p50, p99, p99.9 and max.
#include <benchmark/benchmark.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <thread>

#include "bench/generated_state.hpp"
#include "bench/temp_dir.hpp"
#include "events/state_codec.hpp"
#include "k8s/model/json_codec.hpp"
#include "storage/event_log.hpp"

namespace {

using kai::events::ClusterState;
using kai::events::Event;
using Clock = std::chrono::steady_clock;

constexpr int kProducers = 8;
constexpr size_t kEventsPerRequest = 100;

const ClusterState& state_of(int64_t percent) {
  static std::map<int64_t, ClusterState> cache;
  auto it = cache.find(percent);
  if (it != cache.end()) return it->second;
  return cache.emplace(percent, kai::bench::generated_state(percent)).first->second;
}

/// A pod watch event of about 1 KB encoded (eventlog_bench.cpp's make_event(1024, i)).
Event pod_event(uint64_t i) {
  Event e;
  e.timestamp_us = 1'700'000'000'000'000 + static_cast<int64_t>(i);
  std::string obj = R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p-)" + std::to_string(i) +
                    R"(","namespace":"team-1","uid":"u-)" + std::to_string(i) +
                    R"(","labels":{"kai.scheduler/queue":"q1"}},"spec":{"schedulerName":"kai-scheduler",)"
                    R"("containers":[{"name":"main","image":"registry/train:latest","resources":{"limits":)"
                    R"({"nvidia.com/gpu":"1"}}}]},"status":{"phase":"Pending"},"pad":")";
  obj.append(1024 - obj.size() - 40, 'x');
  obj += "\"}";
  e.payload =
      kai::events::WatchEvent{"Pod", kai::events::WatchType::kAdded, std::move(obj), std::to_string(i)};
  return e;
}

/// What the background thread did.
struct Background {
  uint64_t snapshots = 0;
  uint64_t passes = 0;
  uint64_t passes_deleting = 0;
  uint64_t events_deleted = 0;
  double snapshot_ms_sum = 0, snapshot_ms_max = 0;
  double encode_ms_sum = 0;
  double retention_ms_sum = 0, retention_ms_max = 0;
  std::string error;
};

/// CPU seconds used by the whole machine (/proc/stat) and by this process, to tell how much other
/// work shared the two cores during a run: the figures are only comparable when that is near 0.
struct CpuClock {
  double machine_s = 0, self_s = 0;
  static CpuClock now() {
    CpuClock c;
    if (std::FILE* f = std::fopen("/proc/stat", "r")) {
      unsigned long long user = 0, nice = 0, sys = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
      if (std::fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &user, &nice, &sys, &idle, &iowait,
                      &irq, &softirq, &steal) == 8)
        c.machine_s = static_cast<double>(user + nice + sys + irq + softirq) /
                      static_cast<double>(::sysconf(_SC_CLK_TCK));
      std::fclose(f);
    }
    rusage ru{};
    ::getrusage(RUSAGE_SELF, &ru);
    c.self_s = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
               static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
    return c;
  }
};

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

/// One more timing of `ms` in a sum and a maximum.
void add_timing(double ms, double& sum, double& max) {
  sum += ms;
  max = std::max(max, ms);
}

/// Snapshots and retention in a loop until `stop`.
void snapshot_and_retain(kai::storage::EventLog& log, const ClusterState& state, bool encode_each,
                         bool retain, const std::string& encoded, const std::atomic<bool>& stop,
                         Background& out) {
  kai::storage::RetentionPolicy policy;
  policy.max_age = std::chrono::seconds(0);  // size only
  policy.max_bytes = 1ull << 20;             // far below what arrives between two snapshots
  policy.keep_snapshots = 2;
  std::string fresh;
  while (!stop.load(std::memory_order_relaxed)) {
    const uint64_t at = log.last_seq();
    if (at == 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      continue;
    }
    const std::string* bytes = &encoded;
    if (encode_each) {
      auto t0 = Clock::now();
      fresh.clear();
      kai::events::encode_state(state, fresh);
      out.encode_ms_sum += ms_since(t0);
      bytes = &fresh;
    }
    // The bytes stand for the state at `at`: only their size and the storage work matter here.
    auto t0 = Clock::now();
    if (auto st = log.write_snapshot(at, *bytes); !st) {
      out.error = "write_snapshot: " + st.message();
      return;
    }
    add_timing(ms_since(t0), out.snapshot_ms_sum, out.snapshot_ms_max);
    ++out.snapshots;
    if (!retain) continue;
    t0 = Clock::now();
    auto r = log.apply_retention(policy, 0);
    if (!r) {
      out.error = "apply_retention: " + r.message();
      return;
    }
    add_timing(ms_since(t0), out.retention_ms_sum, out.retention_ms_max);
    ++out.passes;
    out.passes_deleting += r->events_deleted != 0;
    out.events_deleted += r->events_deleted;
  }
}

// Shared by the producer threads; thread 0 sets them up before the start barrier and tears them down
// after the stop barrier, so the other threads touch them only inside the timed loop.
std::unique_ptr<kai::storage::EventLog> g_log;
std::string g_dir;
std::vector<std::vector<double>> g_latencies_us;  // one per producer thread
std::atomic<bool> g_stop{false};
std::thread g_background;
Background g_done;
CpuClock g_cpu_start;
Clock::time_point g_wall_start;

void BM_IngestUnderSnapshots(benchmark::State& state) {
  const int64_t mode = state.range(0);
  const int64_t percent = state.range(1);
  if (state.thread_index() == 0) {
    g_dir = kai::bench::temp_dir("compaction");
    auto log = kai::storage::EventLog::open(g_dir);
    if (!log) {
      state.SkipWithError(log.message().c_str());
      return;
    }
    g_log = std::move(log).value();
    g_latencies_us.assign(static_cast<size_t>(state.threads()), {});
    g_stop = false;
    g_done = {};
    if (mode != 0) {
      const ClusterState& cs = state_of(percent);
      static std::map<int64_t, std::string> encoded;
      if (!encoded.count(percent)) kai::events::encode_state(cs, encoded[percent]);
      state.counters["snapshot_MB"] = static_cast<double>(encoded[percent].size()) / 1e6;
      g_background = std::thread(snapshot_and_retain, std::ref(*g_log), std::cref(cs), mode == 2, mode != 3,
                                 std::cref(encoded[percent]), std::cref(g_stop), std::ref(g_done));
    }
  }
  std::vector<Event> proto;
  for (size_t i = 0; i < kEventsPerRequest; ++i) proto.push_back(pod_event(i));
  uint64_t events = 0;
  bool first = true;
  for (auto _ : state) {
    if (first && state.thread_index() == 0) {
      g_cpu_start = CpuClock::now();
      g_wall_start = Clock::now();
    }
    first = false;
    auto t0 = Clock::now();
    auto r = g_log->append(proto);
    if (!r) state.SkipWithError(r.message().c_str());
    g_latencies_us[static_cast<size_t>(state.thread_index())].push_back(
        std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
    events += kEventsPerRequest;
  }
  state.SetItemsProcessed(static_cast<int64_t>(events));
  if (state.thread_index() != 0) return;
  const CpuClock cpu_end = CpuClock::now();
  const double wall_s = std::chrono::duration<double>(Clock::now() - g_wall_start).count();
  // Cores busy with other processes during the run (the machine is shared).
  state.counters["other_cores"] =
      std::max(0.0, (cpu_end.machine_s - g_cpu_start.machine_s) - (cpu_end.self_s - g_cpu_start.self_s)) /
      wall_s;
  g_stop = true;
  if (g_background.joinable()) g_background.join();
  std::vector<double> all;
  for (const auto& v : g_latencies_us) all.insert(all.end(), v.begin(), v.end());
  std::sort(all.begin(), all.end());
  if (!all.empty()) {
    auto at = [&](double q) { return all[std::min(all.size() - 1, static_cast<size_t>(q * static_cast<double>(all.size())))]; };
    state.counters["p50_us"] = at(0.50);
    state.counters["p99_us"] = at(0.99);
    state.counters["p999_us"] = at(0.999);
    state.counters["max_us"] = all.back();
  }
  if (mode != 0) {
    if (!g_done.error.empty()) state.SkipWithError(g_done.error.c_str());
    const double n = static_cast<double>(std::max<uint64_t>(1, g_done.snapshots));
    state.counters["snapshots"] = static_cast<double>(g_done.snapshots);
    state.counters["snap_ms_avg"] = g_done.snapshot_ms_sum / n;
    state.counters["snap_ms_max"] = g_done.snapshot_ms_max;
    if (mode == 2) state.counters["encode_ms_avg"] = g_done.encode_ms_sum / n;
    if (mode != 3) {
      state.counters["ret_passes"] = static_cast<double>(g_done.passes);
      state.counters["ret_deleting"] = static_cast<double>(g_done.passes_deleting);
      state.counters["ret_ms_max"] = g_done.retention_ms_max;
      state.counters["deleted"] = static_cast<double>(g_done.events_deleted);
      state.counters["retained_from"] = static_cast<double>(g_log->retained_from());
    }
  }
  g_log.reset();
  std::filesystem::remove_all(g_dir);
}
// background mode, state percent (100 = 5,000 nodes)
BENCHMARK(BM_IngestUnderSnapshots)
    ->Args({0, 100})
    ->Args({1, 100})
    ->Args({2, 100})
    ->Args({3, 100})
    ->Args({1, 1})
    ->Threads(kProducers)
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
