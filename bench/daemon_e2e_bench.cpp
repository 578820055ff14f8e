// kai-scheduler end to end (docs/performance-targets.md "Targets"): the daemon in this process against kai-apiserver in a child
// process (bench/e2e/cluster_server.hpp) loaded with a kai-gen cluster, its cost model on. The child
// creates the cluster's pending pods, at once or at a steady rate, and times each from creation to
// bind on its own watch; this process measures the daemon: CPU (getrusage RUSAGE_SELF: only the
// daemon and an idle benchmark thread live here), resident memory, and the API calls it made (the
// server's counters, by verb). Arguments: kai-gen scale in per-mille of the 5,000-node mix, pods/s
// (0: all at once), and the daemon's --qps (0: its default). The time reported is creation of the
// first pod to the last bind.

#include <benchmark/benchmark.h>
#include <malloc.h>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/spdlog.h>
#include <stdlib.h>
#include <sys/resource.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <thread>

#include "actors/daemon/daemon.hpp"
#include "bench/e2e/child_process.hpp"
#include "bench/e2e/cluster_server.hpp"
#include "tests/daemon/daemon_harness.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;
using kai::bench::ChildProcess;

/// The cost model the figures are taken with (bench/README.md states it).
constexpr int64_t kServiceMicros = 1000;
constexpr int64_t kMaxInFlight = 8;

bool g_failed = false;  // a benchmark that errs fails the process, so that the ctest smoke run sees it

double cpu_seconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  auto s = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
  };
  return s(ru.ru_utime) + s(ru.ru_stime);
}

/// A field of /proc/self/status in MiB ("VmRSS", "VmHWM").
double status_mib(const std::string& field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field + ":", 0) == 0)
      return static_cast<double>(std::atoll(line.c_str() + field.size() + 1)) / 1024.0;
  }
  return 0;
}

/// Bytes the allocator has handed out and not taken back, in MiB: what the daemon holds, against
/// which the resident size shows how much freed memory malloc keeps.
double live_heap_mib() {
  const struct mallinfo2 m = mallinfo2();
  return static_cast<double>(m.uordblks + m.hblkhd) / (1024.0 * 1024.0);
}

/// Restarts the peak resident size (VmHWM), so that each run reports its own peak.
void reset_peak_rss() {
  std::ofstream("/proc/self/clear_refs") << "5";
}

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

/// API calls by "verb resource", as the server counted them.
using Calls = std::map<std::string, double>;

/// Reads "calls <n> <verb resource>" lines up to "end".
bool read_calls(ChildProcess& child, Calls& calls) {
  while (auto line = child.read_line(60s)) {
    if (*line == "end") return true;
    std::istringstream in(*line);
    std::string word, key;
    double n = 0;
    in >> word >> n;
    std::getline(in >> std::ws, key);
    if (word == "calls") calls[key] += n;
  }
  return false;
}

/// "verb resource n" for each kind of call, with calls per pod when `pods` > 0.
std::string describe(const Calls& calls, double pods) {
  std::string out;
  for (const auto& [key, n] : calls) {
    if (key == "total") continue;
    char buf[160];
    if (pods > 0) {
      std::snprintf(buf, sizeof buf, "%s%s %.0f (%.3f/pod)", out.empty() ? "" : ", ", key.c_str(), n,
                    n / pods);
    } else {
      std::snprintf(buf, sizeof buf, "%s%s %.0f", out.empty() ? "" : ", ", key.c_str(), n);
    }
    out += buf;
  }
  return out;
}

/// The calls that write objects: every verb but get, list and watch, on anything but the leader's
/// Lease (renewed every few seconds whatever happens).
double writes(const Calls& calls) {
  double n = 0;
  for (const auto& [key, count] : calls) {
    const bool read = key.rfind("get ", 0) == 0 || key.rfind("list ", 0) == 0 || key.rfind("watch ", 0) == 0;
    if (key != "total" && !read && key.find("leases") == std::string::npos) n += count;
  }
  return n;
}

struct Quiet {
  double calls = 0;        ///< Counted calls seen while polling.
  double last_seen_s = 0;  ///< From the start to the last poll that saw one.
};

/// Polls the server's counts each second until three polls in a row see no call `counted` counts,
/// or `limit` passes; nullopt when the server process stopped answering.
std::optional<Quiet> until_quiet(ChildProcess& child, const std::function<double(const Calls&)>& counted,
                                 std::chrono::seconds limit) {
  Quiet q;
  const auto start = Clock::now();
  for (int quiet_polls = 0; quiet_polls < 3 && seconds_since(start) < static_cast<double>(limit.count());) {
    std::this_thread::sleep_for(1s);
    Calls calls;
    if (!child.send("counts") || !read_calls(child, calls)) return std::nullopt;
    const double n = counted(calls);
    q.calls += n;
    if (n > 0) {
      q.last_seen_s = seconds_since(start);
      quiet_polls = 0;
    } else {
      ++quiet_polls;
    }
  }
  return q;
}

/// What the child reported when the pods were created and bound.
struct RunResult {
  double created = 0, bound = 0;
  double first_create_ns = 0, last_bind_ns = 0;
  double p50_us = 0, p99_us = 0, max_us = 0;
  double create_us = 0;  ///< Creating every pod took this long (at once: the server's own speed).
  double cpu_at_last_bind = 0;
  Calls calls;
};

/// Sends `go` and follows the progress lines; the CPU time is sampled whenever the bound count grows,
/// so that the CPU per pod covers the work up to the last bind and not the quiet wait after it.
bool follow_run(ChildProcess& child, double rate, std::chrono::milliseconds quiet, RunResult& r) {
  r.cpu_at_last_bind = cpu_seconds();
  if (!child.send("go " + std::to_string(rate) + " " + std::to_string(quiet.count()))) return false;
  while (auto line = child.read_line(quiet + 600s)) {
    std::istringstream in(*line);
    std::string word;
    in >> word;
    if (word == "progress") {
      r.cpu_at_last_bind = cpu_seconds();
    } else if (word == "done") {
      in >> r.created >> r.bound >> r.first_create_ns >> r.last_bind_ns >> r.p50_us >> r.p99_us >> r.max_us >>
          r.create_us;
      return read_calls(child, r.calls);
    }
  }
  return false;
}

/// A private directory for the daemon's event log and log file, removed at the end.
struct TempDir {
  TempDir() : path((std::filesystem::temp_directory_path() / "kai-e2e-bench-XXXXXX").string()) {
    if (mkdtemp(path.data()) == nullptr) path.clear();
  }
  ~TempDir() {
    std::error_code ignored;
    if (!path.empty()) std::filesystem::remove_all(path, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string path;
};

/// Logs of the daemon go to a file in `dir`, at its default level (info), as kai-scheduler's do to
/// its container log: the formatting is part of the daemon's cost, the lines are not benchmark output.
void log_to_file(const std::string& dir) {
  auto sink = std::make_shared<spdlog::sinks::basic_file_sink_mt>(dir + "/daemon.log", true);
  spdlog::set_default_logger(std::make_shared<spdlog::logger>("kai-scheduler", sink));
  spdlog::set_level(spdlog::level::info);
}

void BM_DaemonEndToEnd(benchmark::State& state) {
  kai::bench::ClusterServerSettings settings;
  settings.per_mille = state.range(0);
  settings.service_us = kServiceMicros;
  settings.max_in_flight = kMaxInFlight;
  const double rate = static_cast<double>(state.range(1));
  const int64_t qps = state.range(2);
  // 0: the client makes the PodGroups; 1-3: batch Jobs, whose PodGroups the daemon's pod grouper
  // writes for every group (1), for groups of more than one pod (2) or for none (3).
  const int64_t workloads = state.range(3);
  settings.as_jobs = workloads > 0;
  auto fail = [&](const std::string& why) {
    g_failed = true;
    state.SkipWithError(why.c_str());
  };
  for (auto _ : state) {
    reset_peak_rss();
    std::vector<std::string> args = {std::filesystem::read_symlink("/proc/self/exe").string(),
                                     kai::bench::kClusterServerFlag};
    for (const auto& a : kai::bench::cluster_server_args(settings)) args.push_back(a);
    auto child = ChildProcess::spawn(args);
    if (!child) return fail("cannot start the API-server process");
    auto ready = child->read_line(30min);
    std::istringstream in(ready.value_or(""));
    std::string word, kubeconfig;
    double nodes = 0, running = 0, pending = 0, groups = 0, pod_bytes = 0, load_ms = 0;
    in >> word >> kubeconfig >> nodes >> running >> pending >> groups >> pod_bytes >> load_ms;
    if (word != "ready") return fail("the API-server process did not load its cluster");
    std::cerr << "cluster: " << nodes << " nodes, " << running << " running pods (" << pod_bytes
              << " B each as stored), " << pending << " pending pods in " << groups << " groups; loaded in "
              << load_ms / 1000 << " s\n";

    TempDir temp;
    if (temp.path.empty()) return fail("cannot make a temporary directory");
    const std::string& dir = temp.path;
    log_to_file(dir);

    // Cold start: list everything, log it, and run a first full cycle.
    const double cpu_start = cpu_seconds();
    const auto start = Clock::now();
    kai::daemon::DaemonOptions options = kai::e2e::in_process_daemon_options(kubeconfig, dir + "/log");
    options.pod_group_objects = workloads == 2   ? kai::core::PodGroupObjects::kMultiPod
                                : workloads == 3 ? kai::core::PodGroupObjects::kNone
                                                 : kai::core::PodGroupObjects::kAll;
    if (qps > 0) {
      options.qps = static_cast<double>(qps);
      options.burst = static_cast<int>(2 * qps);
    }
    auto daemon = std::make_unique<kai::daemon::Daemon>(options);
    if (auto s = daemon->start(); !s.is_ok()) return fail("daemon: " + s.message());
    while (!daemon->synced() && seconds_since(start) < 1200) std::this_thread::sleep_for(10ms);
    const uint64_t synced_cycles = daemon->cycles();
    // The second tick after the lists were delivered sees every listed object.
    while (daemon->cycles() < synced_cycles + 2 && seconds_since(start) < 1200)
      std::this_thread::sleep_for(10ms);
    if (daemon->cycles() < synced_cycles + 2) return fail("the daemon did not sync and cycle in 20 minutes");
    const double cold_start_s = seconds_since(start);
    const double cold_cpu_s = cpu_seconds() - cpu_start;

    // The cold-start wave: running pods' PodGroups created by the pod grouper and every PodGroup's
    // and Queue's first status. The daemon writes them once after a first install (a restart finds
    // them right and writes nothing), so the run below starts after they stopped: polling each second
    // until three polls in a row see no write.
    const double wave_cpu0 = cpu_seconds();
    const auto wave = until_quiet(*child, writes, 3600s);
    if (!wave) return fail("the API-server process stopped");
    const double wave_writes = wave->calls, wave_s = wave->last_seen_s;
    const double wave_cpu_s = cpu_seconds() - wave_cpu0;
    std::cerr << "cold-start wave: " << wave_writes << " writes in " << wave_s << " s, " << wave_cpu_s
              << " s CPU" << std::endl;

    // Idle: nothing pending, the daemon only cycles. Ten cycles, because every tenth encodes the
    // /get-snapshot answer, which costs more than a cycle at 5,000 nodes.
    constexpr uint64_t kIdleCycles = 10;
    // Idle ticks only: the cold start's last cycles may still run for a few seconds after the wave
    // (objects settling), so the window starts at the first tick the daemon skips (bounded wait).
    const auto settle_start = Clock::now();
    const uint64_t skipped0 = daemon->idle_cycles();
    while (daemon->idle_cycles() == skipped0 && seconds_since(settle_start) < 30) {
      std::this_thread::sleep_for(10ms);
    }
    const double idle_settle_s = seconds_since(settle_start);
    const auto idle_start = Clock::now();
    const double idle_cpu0 = cpu_seconds();
    const uint64_t idle_cycles0 = daemon->cycles();
    while (daemon->cycles() < idle_cycles0 + kIdleCycles && seconds_since(idle_start) < 1200) {
      std::this_thread::sleep_for(10ms);
    }
    if (daemon->cycles() < idle_cycles0 + kIdleCycles) return fail("the daemon stopped cycling");
    const double idle_s = seconds_since(idle_start);
    const double idle_cpu_s = cpu_seconds() - idle_cpu0;
    const double idle_cpu_share = idle_cpu_s / idle_s;
    const double cycle_s = idle_s / static_cast<double>(kIdleCycles);
    Calls start_calls;
    if (!child->send("counts") || !read_calls(*child, start_calls))
      return fail("the API-server process stopped");
    std::cerr << "cold start: " << cold_start_s << " s, " << cold_cpu_s << " s CPU, " << start_calls["total"]
              << " API calls (" << describe(start_calls, 0) << "); idle: " << 100 * idle_cpu_share
              << " % of a core, a cycle every " << cycle_s << " s; RSS " << status_mib("VmRSS")
              << " MiB, live heap " << live_heap_mib() << " MiB" << std::endl;

    RunResult r;
    const auto quiet = std::chrono::milliseconds(static_cast<int64_t>(1000 * std::max(10.0, 4 * cycle_s)));
    const double cpu_go = cpu_seconds();
    if (!follow_run(*child, rate, quiet, r)) return fail("the API-server process stopped during the run");
    const double rss = status_mib("VmRSS");
    const double peak_rss = status_mib("VmHWM");
    const double heap = live_heap_mib();
    // Diagnosis, after the figures were taken: how much of the resident size is memory malloc
    // keeps after the daemon freed it (released by malloc_trim) rather than memory in use.
    malloc_trim(0);
    const double trimmed_rss = status_mib("VmRSS");
    // The PodGroup and Queue status writes wait behind the binds (docs/status.md): those made until
    // the last bind are in r.calls; the rest are counted here, polling each second until three polls
    // in a row see none, and the time from the last bind to the last poll that saw one is their drain.
    auto status_patches = [](const Calls& calls) {
      double n = 0;
      for (const auto& [key, count] : calls) {
        const bool ours = key.find("podgroups") != std::string::npos || key.find("queues") != std::string::npos;
        if (key.rfind("patch ", 0) == 0 && ours && key.find("/status") != std::string::npos) n += count;
      }
      return n;
    };
    const double status_before = status_patches(r.calls);
    const auto drain = until_quiet(*child, status_patches, 120s);
    if (!drain) return fail("the API-server process stopped");
    const double status_after = drain->calls, status_drain_s = drain->last_seen_s;
    daemon->stop();
    daemon.reset();
    child->finish(60s);

    const double drain_s = (r.last_bind_ns - r.first_create_ns) / 1e9;
    state.SetIterationTime(r.bound > 0 ? drain_s : 0);
    const double bound = std::max(1.0, r.bound);
    const double binds = r.calls.count("create pods/binding") ? r.calls["create pods/binding"] : 0;
    const double total = r.calls.count("total") ? r.calls["total"] : 0;
    state.counters["nodes"] = nodes;
    state.counters["running"] = running;
    state.counters["created"] = r.created;
    state.counters["bound"] = r.bound;
    state.counters["pods_per_s"] = r.bound > 0 ? r.bound / drain_s : 0;
    state.counters["calls_per_pod"] = total / bound;
    state.counters["bind_calls_per_pod"] = binds / bound;
    state.counters["cpu_ms_per_pod"] = 1000 * (r.cpu_at_last_bind - cpu_go) / bound;
    state.counters["create_s"] = r.create_us / 1e6;
    state.counters["p50_ms"] = r.p50_us / 1000;
    state.counters["p99_ms"] = r.p99_us / 1000;
    state.counters["rss_mib"] = rss;
    state.counters["peak_rss_mib"] = peak_rss;
    state.counters["heap_mib"] = heap;
    state.counters["trimmed_rss_mib"] = trimmed_rss;
    state.counters["cold_start_s"] = cold_start_s;
    state.counters["idle_cpu_pct"] = 100 * idle_cpu_share;
    state.counters["cycle_s"] = cycle_s;
    state.counters["idle_cycle_cpu_ms"] = 1000 * idle_cpu_s / static_cast<double>(kIdleCycles);
    state.counters["idle_settle_s"] = idle_settle_s;  // from the wave's end to the first skipped tick
    state.counters["status_calls_per_pod"] = (status_before + status_after) / bound;
    state.counters["status_drain_s"] = status_drain_s;
    state.counters["wave_writes"] = wave_writes;
    state.counters["wave_s"] = wave_s;
    std::cerr << "run: " << r.bound << " of " << r.created << " pods bound in " << drain_s << " s, p50 "
              << r.p50_us / 1000 << " ms, p99 " << r.p99_us / 1000 << " ms, max " << r.max_us / 1000
              << " ms; " << 1000 * (r.cpu_at_last_bind - cpu_go) << " ms CPU to the last bind; API calls "
              << total << ": " << describe(r.calls, bound) << "\n";
    if (r.bound == 0) return fail("no pod was bound");
  }
}

// Smoke size (50 nodes), with the client's PodGroups and with Jobs grouped by the daemon; 1,000 nodes
// with Jobs and each --pod-group-objects choice (bench/README.md "Pod grouper writes"); 1,000 and 5,000 nodes with every pending pod at once, the same at a steady
// 100 pods/s for latency without a backlog, and at once with the client's rate limit (500 QPS, burst
// 1,000 by default) raised to 5,000 QPS, to tell the daemon's own limit from the limiter's; and
// 5,000 nodes with Jobs grouped `multi-pod`, whose cold-start wave is short enough to measure the
// status writes of the run (bench/README.md "Status writes").
BENCHMARK(BM_DaemonEndToEnd)
    ->ArgNames({"permille", "rate", "qps", "workloads"})
    ->Args({10, 0, 0, 0})
    ->Args({10, 0, 0, 1})
    ->Args({10, 0, 0, 2})
    ->Args({10, 0, 0, 3})
    ->Args({200, 0, 0, 0})
    ->Args({200, 0, 0, 1})
    ->Args({200, 0, 0, 2})
    ->Args({200, 0, 0, 3})
    ->Args({200, 100, 0, 0})
    ->Args({200, 0, 5000, 0})
    ->Args({1000, 0, 0, 0})
    ->Args({1000, 0, 0, 2})
    ->Args({1000, 100, 0, 0})
    ->Args({1000, 0, 5000, 0})
    ->Iterations(1)
    ->UseManualTime()
    ->Unit(benchmark::kSecond);

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 2 && std::string(argv[1]) == kai::bench::kClusterServerFlag) {
    return kai::bench::run_cluster_server(argc - 2, argv + 2);
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  const size_t ran = benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return g_failed || ran == 0 ? 1 : 0;  // a filter that matches nothing must not pass as a smoke test
}
