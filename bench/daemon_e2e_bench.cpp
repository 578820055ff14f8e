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

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <thread>

#include "actors/daemon/daemon.hpp"
#include "bench/e2e/child_process.hpp"
#include "bench/e2e/cluster_server.hpp"
#include "bench/process_status.hpp"
#include "k8s/client/cluster_config.hpp"
#include "k8s/client/kube_client.hpp"
#include "k8s/http/http_client.hpp"
#include "tests/daemon/daemon_harness.hpp"
#include "tools/common/huge_pages.hpp"
#include "tools/common/resident_malloc.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;
using kai::bench::ChildProcess;

/// The cost model the figures are taken with (bench/README.md states it).
constexpr int64_t kServiceMicros = 1000;
constexpr int64_t kMaxInFlight = 8;
/// The ceiling runs' cost model: about what a real kube-apiserver with etcd absorbs on this machine
/// (about 800 bindings/s), 2.5 ms per request, 2 at a time.
constexpr int64_t kCeilingServiceMicros = 2500;
constexpr int64_t kCeilingInFlight = 2;

bool g_failed = false;  // a benchmark that errs fails the process, so that the ctest smoke run sees it

double cpu_seconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  auto s = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
  };
  return s(ru.ru_utime) + s(ru.ru_stime);
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

/// The writes that wait behind the binds (actors/daemon/write_gate.hpp): PodGroups and their status,
/// Queue status, Events, pod conditions and the pod grouper's annotations.
double deferred_writes(const Calls& calls) {
  double n = 0;
  for (const auto& [key, count] : calls) {
    const bool write = key.rfind("create ", 0) == 0 || key.rfind("patch ", 0) == 0 || key.rfind("update ", 0) == 0;
    const bool deferred = key.find("podgroups") != std::string::npos || key.find("queues") != std::string::npos ||
                          key.find("events") != std::string::npos || key == "patch pods/status" ||
                          key == "patch pods";
    if (write && deferred) n += count;
  }
  return n;
}

struct Quiet {
  double calls = 0;        ///< Counted calls seen while polling.
  double last_seen_s = 0;  ///< From the start to the last poll that saw one.
  Calls seen;              ///< Every call seen while polling, by kind.
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
    for (const auto& [key, n] : calls) q.seen[key] += n;
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
  std::vector<std::pair<double, double>> progress;  ///< (steady ns, pods bound by then)
};

/// Pods bound in each second of the run, from its first creation: where a run loses time.
std::string timeline(const RunResult& r) {
  std::string out;
  double prev = 0;
  size_t i = 0;
  for (int second = 1; i < r.progress.size(); ++second) {
    double bound = prev;
    while (i < r.progress.size() && r.progress[i].first <= r.first_create_ns + 1e9 * second) bound = r.progress[i++].second;
    out += (out.empty() ? "" : " ") + std::to_string(static_cast<int64_t>(bound - prev));
    prev = bound;
  }
  return out;
}

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
      double bound = 0, at = 0;
      in >> bound >> at;
      r.progress.emplace_back(at, bound);
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
/// The daemon's log goes to DIR/daemon.log at info, or, with KAI_BENCH_DAEMON_LOG=PATH, to PATH
/// (appended, kept after the run) at debug, for a timeline of a run.
void log_to_file(const std::string& dir) {
  const char* kept = std::getenv("KAI_BENCH_DAEMON_LOG");
  const bool keep = kept != nullptr && *kept != '\0';
  auto sink = std::make_shared<spdlog::sinks::basic_file_sink_mt>(keep ? std::string(kept) : dir + "/daemon.log", !keep);
  spdlog::set_default_logger(std::make_shared<spdlog::logger>("kai-scheduler", sink));
  spdlog::set_level(keep ? spdlog::level::debug : spdlog::level::info);
}

/// Bindings per second the null client reached (BM_BindCeiling), by "nodes/pods" of the uniform
/// cluster: the daemon's run on the same cluster reports its share of it.
std::map<std::string, double> g_ceiling;

std::string ceiling_key(int64_t nodes, int64_t pods) {
  return std::to_string(nodes) + "/" + std::to_string(pods);
}

/// Starts the API-server process with `settings` and reads its `ready` line; nullopt (and `why`)
/// when it does not come up.
struct StartedServer {
  std::unique_ptr<ChildProcess> child;
  std::string kubeconfig;
  double nodes = 0, running = 0, pending = 0, groups = 0, pod_bytes = 0, load_ms = 0;
};
std::optional<StartedServer> start_server(const kai::bench::ClusterServerSettings& settings, std::string& why) {
  std::vector<std::string> args = {std::filesystem::read_symlink("/proc/self/exe").string(),
                                   kai::bench::kClusterServerFlag};
  for (const auto& a : kai::bench::cluster_server_args(settings)) args.push_back(a);
  StartedServer s;
  s.child = ChildProcess::spawn(args);
  if (!s.child) {
    why = "cannot start the API-server process";
    return std::nullopt;
  }
  auto ready = s.child->read_line(30min);
  std::istringstream in(ready.value_or(""));
  std::string word;
  in >> word >> s.kubeconfig >> s.nodes >> s.running >> s.pending >> s.groups >> s.pod_bytes >> s.load_ms;
  if (word != "ready") {
    why = "the API-server process did not load its cluster";
    return std::nullopt;
  }
  std::cerr << "cluster: " << s.nodes << " nodes, " << s.running << " running pods (" << s.pod_bytes
            << " B each as stored), " << s.pending << " pending pods in " << s.groups << " groups; loaded in "
            << s.load_ms / 1000 << " s\n";
  return s;
}

/// A scheduler that decides nothing (the ceiling's measuring stick): it watches the uniform
/// cluster's namespace and binds every new pod to the next free GPU slot in node order, on `workers`
/// threads through the daemon's own HTTPS client with no rate limit.
class NullClient {
 public:
  NullClient(const kai::k8s::ClusterConfig& config, int workers)
      : client_(config, client_options(workers)),
        watch_(config.endpoint, std::string("/api/v1/namespaces/") + kai::bench::kUniformNamespace + "/pods?watch=1"),
        workers_(workers) {}
  ~NullClient() { stop(); }
  NullClient(const NullClient&) = delete;
  NullClient& operator=(const NullClient&) = delete;

  bool start() {
    if (watch_.status() != 200) return false;
    threads_.emplace_back([this] { read(); });
    for (int i = 0; i < workers_; ++i) threads_.emplace_back([this] { bind(); });
    return true;
  }
  void stop() {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    watch_.stop();
    for (auto& t : threads_) t.join();
    threads_.clear();
  }
  uint64_t failed() const { return failed_.load(); }

 private:
  struct Pod {
    std::string ns, name, uid;
  };
  static kai::k8s::ClientOptions client_options(int workers) {
    kai::k8s::ClientOptions o;
    o.qps = 1e9;
    o.burst = 1000000000;
    o.max_connections = workers;
    return o;
  }
  void read() {
    for (;;) {
      {
        std::lock_guard lock(mu_);
        if (stopping_) return;
      }
      auto line = watch_.next(100ms);
      if (!line) continue;
      const auto ev = nlohmann::json::parse(*line, nullptr, false);
      if (!ev.is_object() || ev.value("type", "") != "ADDED") continue;
      const auto& o = ev["object"];
      if (!o.value("spec", nlohmann::json::object()).value("nodeName", "").empty()) continue;
      const auto& meta = o["metadata"];
      {
        std::lock_guard lock(mu_);
        pods_.push_back({meta.value("namespace", ""), meta.value("name", ""), meta.value("uid", "")});
      }
      cv_.notify_one();
    }
  }
  void bind() {
    for (;;) {
      Pod pod;
      int64_t slot = 0;
      {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [&] { return stopping_ || !pods_.empty(); });
        if (stopping_) return;
        pod = std::move(pods_.front());
        pods_.pop_front();
        slot = next_slot_++;
      }
      constexpr int64_t kGpusPerNode = 8;
      if (!client_.bind_pod(pod.ns, pod.name, pod.uid, kai::bench::uniform_node_name(slot / kGpusPerNode)).ok())
        ++failed_;
    }
  }

  kai::k8s::KubeClient client_;
  kai::http::WatchStream watch_;
  const int workers_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Pod> pods_;
  int64_t next_slot_ = 0;
  bool stopping_ = false;
  std::atomic<uint64_t> failed_{0};
  std::vector<std::thread> threads_;
};

/// The API server's ceiling for binds (issue 23 "Binds at the ceiling"): the null client binds the
/// uniform cluster's pods, created all at once, as fast as the server takes them.
void BM_BindCeiling(benchmark::State& state) {
  kai::bench::ClusterServerSettings settings;
  settings.service_us = kCeilingServiceMicros;
  settings.max_in_flight = kCeilingInFlight;
  settings.uniform_nodes = state.range(0);
  settings.uniform_pods = state.range(1);
  const int workers = static_cast<int>(state.range(2));
  auto fail = [&](const std::string& why) {
    g_failed = true;
    state.SkipWithError(why.c_str());
  };
  for (auto _ : state) {
    std::string why;
    auto server = start_server(settings, why);
    if (!server) return fail(why);
    auto config = kai::k8s::load_kubeconfig(server->kubeconfig);
    if (!config.is_ok()) return fail("kubeconfig: " + config.message());
    NullClient null_client(config.value(), workers);
    if (!null_client.start()) return fail("the null client's watch failed");
    RunResult r;
    if (!follow_run(*server->child, 0, 10s, r)) return fail("the API-server process stopped during the run");
    null_client.stop();
    server->child->finish(60s);
    const double drain_s = (r.last_bind_ns - r.first_create_ns) / 1e9;
    state.SetIterationTime(r.bound > 0 ? drain_s : 0);
    const double pods_per_s = r.bound > 0 ? r.bound / drain_s : 0;
    g_ceiling[ceiling_key(settings.uniform_nodes, settings.uniform_pods)] =
        std::max(g_ceiling[ceiling_key(settings.uniform_nodes, settings.uniform_pods)], pods_per_s);
    state.counters["bound"] = r.bound;
    state.counters["pods_per_s"] = pods_per_s;
    state.counters["failed_binds"] = static_cast<double>(null_client.failed());
    state.counters["create_s"] = r.create_us / 1e6;
    state.counters["p50_ms"] = r.p50_us / 1000;
    state.counters["p99_ms"] = r.p99_us / 1000;
    std::cerr << "null client: " << r.bound << " of " << r.created << " pods bound in " << drain_s << " s ("
              << pods_per_s << " /s), " << null_client.failed() << " binds failed; API calls "
              << (r.calls.count("total") ? r.calls["total"] : 0) << ": " << describe(r.calls, r.bound)
              << "; binds per second: " << timeline(r) << "\n";
    if (r.bound < r.created) return fail("the null client did not bind every pod");
  }
}

/// The daemon on the cluster `settings` names: cold start, the cold-start wave, idle cycles, then the
/// run (pods created at `rate`, 0 = at once), the deferred writes' drain, and a restart on the same log.
void daemon_end_to_end(benchmark::State& state, const kai::bench::ClusterServerSettings& settings, double rate,
                       int64_t qps, int64_t workloads) {
  auto fail = [&](const std::string& why) {
    g_failed = true;
    state.SkipWithError(why.c_str());
  };
  for (auto _ : state) {
    reset_peak_rss();
    std::string why;
    auto server = start_server(settings, why);
    if (!server) return fail(why);
    ChildProcess* child = server->child.get();
    const std::string& kubeconfig = server->kubeconfig;
    const double nodes = server->nodes, running = server->running;

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
    // KAI_BENCH_KEEP_SESSIONS=0 runs the daemon with --keep-sessions=false, for before/after figures.
    if (const char* keep = std::getenv("KAI_BENCH_KEEP_SESSIONS"); keep != nullptr && std::string(keep) == "0")
      options.keep_sessions = false;
    // Until the daemon's first cycle: a cycle is counted only on a cut that holds every listed object
    // (CycleDriver::on_cut runs none before), so the first one decides on the whole cluster. The end
    // of the last list asks for it at once (EarlyCycleTrigger::admit), not at the next tick.
    auto first_cycle = [](kai::daemon::Daemon& d, Clock::time_point since) {
      while (d.cycles() == 0 && seconds_since(since) < 1200) std::this_thread::sleep_for(5ms);
      return d.cycles() > 0;
    };
    auto daemon = std::make_unique<kai::daemon::Daemon>(options);
    if (auto s = daemon->start(); !s.is_ok()) return fail("daemon: " + s.message());
    if (!first_cycle(*daemon, start)) return fail("the daemon did not list and cycle in 20 minutes");
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
              << " % of a core, a cycle every " << cycle_s << " s; RSS " << kai::bench::status_mib("VmRSS")
              << " MiB, live heap " << live_heap_mib() << " MiB" << std::endl;

    RunResult r;
    const auto quiet = std::chrono::milliseconds(static_cast<int64_t>(1000 * std::max(10.0, 4 * cycle_s)));
    const double cpu_go = cpu_seconds();
    const uint64_t cycles_go = daemon->cycles() - daemon->idle_cycles();
    if (!follow_run(*child, rate, quiet, r)) return fail("the API-server process stopped during the run");
    const uint64_t run_cycles = daemon->cycles() - daemon->idle_cycles() - cycles_go;
    const double rss = kai::bench::status_mib("VmRSS");
    const double peak_rss = kai::bench::status_mib("VmHWM");
    const double heap = live_heap_mib();
    // Diagnosis, after the figures were taken: how much of the resident size is memory malloc
    // keeps after the daemon freed it (released by malloc_trim) rather than memory in use.
    malloc_trim(0);
    const double trimmed_rss = kai::bench::status_mib("VmRSS");
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
    const double deferred_before = deferred_writes(r.calls);
    const auto drain = until_quiet(*child, deferred_writes, 900s);
    if (!drain) return fail("the API-server process stopped");
    const double status_after = status_patches(drain->seen), deferred_after = drain->calls;
    const double status_drain_s = drain->last_seen_s;
    daemon->stop();
    daemon.reset();

    // Restart on the same log and the same cluster: restore the log, list again, cycle. Everything
    // the daemon writes was written before it stopped, so the restart writes nothing.
    const double restart_cpu0 = cpu_seconds();
    const auto restart_start = Clock::now();
    daemon = std::make_unique<kai::daemon::Daemon>(options);
    if (auto s = daemon->start(); !s.is_ok()) return fail("daemon restart: " + s.message());
    if (!first_cycle(*daemon, restart_start)) return fail("the restarted daemon did not list and cycle");
    const double restart_s = seconds_since(restart_start);
    const double restart_cpu_s = cpu_seconds() - restart_cpu0;
    const auto after_restart = until_quiet(*child, writes, 120s);
    if (!after_restart) return fail("the API-server process stopped");
    std::cerr << "restart: " << restart_s << " s, " << restart_cpu_s << " s CPU, then " << after_restart->calls
              << " writes (" << describe(after_restart->seen, 0) << ")" << std::endl;
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
    state.counters["restart_s"] = restart_s;  // restore + relist + the first cycle, on the same log
    state.counters["restart_cpu_s"] = restart_cpu_s;
    state.counters["restart_writes"] = after_restart->calls;
    state.counters["idle_cpu_pct"] = 100 * idle_cpu_share;
    state.counters["cycle_s"] = cycle_s;
    state.counters["run_cycles"] = static_cast<double>(run_cycles);  // sessions run, to the run's quiet end
    state.counters["idle_cycle_cpu_ms"] = 1000 * idle_cpu_s / static_cast<double>(kIdleCycles);
    state.counters["idle_settle_s"] = idle_settle_s;  // from the wave's end to the first skipped tick
    state.counters["status_calls_per_pod"] = (status_before + status_after) / bound;
    state.counters["status_drain_s"] = status_drain_s;  // every deferred write, statuses included
    state.counters["deferred_writes_before_last_bind"] = deferred_before;
    state.counters["deferred_writes_after_last_bind"] = deferred_after;
    if (settings.uniform_nodes > 0) {
      const auto ceiling = g_ceiling.find(ceiling_key(settings.uniform_nodes, settings.uniform_pods));
      if (ceiling != g_ceiling.end() && ceiling->second > 0)
        state.counters["share_of_ceiling"] = state.counters["pods_per_s"] / ceiling->second;
    }
    state.counters["wave_writes"] = wave_writes;
    state.counters["wave_s"] = wave_s;
    std::cerr << "run: " << r.bound << " of " << r.created << " pods bound in " << drain_s << " s, p50 "
              << r.p50_us / 1000 << " ms, p99 " << r.p99_us / 1000 << " ms, max " << r.max_us / 1000
              << " ms; " << 1000 * (r.cpu_at_last_bind - cpu_go) << " ms CPU to the last bind; API calls "
              << total << ": " << describe(r.calls, bound) << "; binds per second: " << timeline(r) << "\n";
    if (r.bound == 0) return fail("no pod was bound");
  }
}

/// Bytes under `path` (the event log's directory).
double disk_mib(const std::string& path) {
  std::error_code ec;
  uintmax_t bytes = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(path, ec)) {
    if (e.is_regular_file(ec)) bytes += e.file_size(ec);
  }
  return static_cast<double>(bytes) / (1024.0 * 1024.0);
}

/// The whole daemon's resident size under churn (issue 23: flat over 10,000 cycles): after its cold
/// start and first writes, a bare CPU-only pod comes every 20 ms and the one 100 before it goes
/// (the server's `churn`), with a schedule period of 100 ms, so that every cycle has something to
/// schedule; VmRSS is read every 500 cycles until `cycles` ran.
void BM_DaemonChurn(benchmark::State& state) {
  auto fail = [&](const std::string& why) {
    g_failed = true;
    state.SkipWithError(why.c_str());
  };
  kai::bench::ClusterServerSettings settings;
  settings.per_mille = state.range(0);
  settings.service_us = kServiceMicros;
  settings.max_in_flight = kMaxInFlight;
  const auto cycles = static_cast<uint64_t>(state.range(1));
  constexpr uint64_t kEvery = 500;
  for (auto _ : state) {
    std::string why;
    auto server = start_server(settings, why);
    if (!server) return fail(why);
    ChildProcess* child = server->child.get();
    TempDir temp;
    if (temp.path.empty()) return fail("cannot make a temporary directory");
    log_to_file(temp.path);
    kai::daemon::DaemonOptions options =
        kai::e2e::in_process_daemon_options(server->kubeconfig, temp.path + "/log");
    options.pod_group_objects = kai::core::PodGroupObjects::kMultiPod;
    options.schedule_period = 100ms;
    auto daemon = std::make_unique<kai::daemon::Daemon>(options);
    if (auto s = daemon->start(); !s.is_ok()) return fail("daemon: " + s.message());
    const auto start = Clock::now();
    while (daemon->cycles() == 0 && seconds_since(start) < 1200) std::this_thread::sleep_for(5ms);
    if (daemon->cycles() == 0) return fail("the daemon did not list and cycle");
    if (!until_quiet(*child, writes, 3600s)) return fail("the API-server process stopped");
    auto sessions = [&] { return daemon->cycles() - daemon->idle_cycles(); };
    const uint64_t cycles0 = sessions();
    const auto churn_start = Clock::now();
    const double cpu0 = cpu_seconds();
    const double log0 = disk_mib(temp.path + "/log");
    if (!child->send("churn 100 20")) return fail("the API-server process stopped");
    std::vector<std::pair<uint64_t, double>> readings;  // (cycles, VmRSS MiB)
    while (sessions() - cycles0 < cycles && seconds_since(churn_start) < 7200) {
      std::this_thread::sleep_for(20ms);
      const uint64_t ran = sessions() - cycles0;
      if (ran >= kEvery * (readings.size() + 1)) {
        readings.emplace_back(ran, kai::bench::status_mib("VmRSS"));
        std::cerr << "churn: " << ran << " cycles, RSS " << readings.back().second << " MiB, log "
                  << disk_mib(temp.path + "/log") << " MiB" << std::endl;
      }
    }
    const double churn_s = seconds_since(churn_start);
    const double cpu_s = cpu_seconds() - cpu0;
    const uint64_t ran = sessions() - cycles0;
    if (!child->send("stop")) return fail("the API-server process stopped");
    const auto churned = child->read_line(60s);
    const double log1 = disk_mib(temp.path + "/log");
    const double peak = kai::bench::status_mib("VmHWM");
    daemon->stop();
    daemon.reset();
    child->finish(60s);
    if (ran < cycles || readings.size() < 2) return fail("the daemon ran " + std::to_string(ran) + " cycles");
    state.SetIterationTime(churn_s);
    const auto& [c_first, rss_first] = readings.front();
    const auto& [c_last, rss_last] = readings.back();
    state.counters["cycles"] = static_cast<double>(ran);
    state.counters["churned"] = churned ? std::atof(churned->substr(churned->find(' ') + 1).c_str()) : 0;
    state.counters["rss_first_mib"] = rss_first;  // at cycle kEvery
    state.counters["rss_last_mib"] = rss_last;
    state.counters["rss_growth_mib_per_1000_cycles"] =
        1000 * (rss_last - rss_first) / static_cast<double>(c_last - c_first);
    state.counters["peak_rss_mib"] = peak;
    state.counters["log_start_mib"] = log0;
    state.counters["log_end_mib"] = log1;
    state.counters["cpu_ms_per_cycle"] = 1000 * cpu_s / static_cast<double>(ran);
  }
}

void BM_DaemonEndToEnd(benchmark::State& state) {
  kai::bench::ClusterServerSettings settings;
  settings.per_mille = state.range(0);
  settings.service_us = kServiceMicros;
  settings.max_in_flight = kMaxInFlight;
  // 0: the client makes the PodGroups; 1-3: batch Jobs, whose PodGroups the daemon's pod grouper
  // writes for every group (1), for groups of more than one pod (2) or for none (3).
  const int64_t workloads = state.range(3);
  settings.as_jobs = workloads > 0;
  daemon_end_to_end(state, settings, static_cast<double>(state.range(1)), state.range(2), workloads);
}

/// The daemon with its defaults on the ceiling's cluster and cost model (BM_BindCeiling): its
/// bindings per second, and their share of the ceiling when BM_BindCeiling ran first in the process.
void BM_DaemonAtCeiling(benchmark::State& state) {
  kai::bench::ClusterServerSettings settings;
  settings.service_us = kCeilingServiceMicros;
  settings.max_in_flight = kCeilingInFlight;
  settings.uniform_nodes = state.range(0);
  settings.uniform_pods = state.range(1);
  daemon_end_to_end(state, settings, 0, state.range(2), 0);
}

// The ceiling and the daemon's share of it: 1,000 nodes / 5,000 pods and 5,000 nodes / 10,000 pods,
// as the outside check (bench/README.md "Binds at the ceiling"); 50 nodes / 200 pods for the smoke
// run. The null client with 4, 8 and 16 binding threads: the ceiling is the best of them.
BENCHMARK(BM_BindCeiling)
    ->ArgNames({"nodes", "pods", "workers"})
    ->Args({50, 200, 8})
    ->Args({1000, 5000, 4})
    ->Args({1000, 5000, 8})
    ->Args({1000, 5000, 16})
    ->Args({5000, 10000, 4})
    ->Args({5000, 10000, 8})
    ->Args({5000, 10000, 16})
    ->Iterations(1)
    ->UseManualTime()
    ->Unit(benchmark::kSecond);
BENCHMARK(BM_DaemonAtCeiling)
    ->ArgNames({"nodes", "pods", "qps"})
    ->Args({50, 200, 0})
    ->Args({1000, 5000, 0})
    ->Args({5000, 10000, 0})
    ->Iterations(1)
    ->UseManualTime()
    ->Unit(benchmark::kSecond);

// The whole daemon under churn (bench/README.md "The daemon's resident size under churn"): 10,000
// cycles at 1,000 nodes; 1,000 at 50 nodes for a quick look.
BENCHMARK(BM_DaemonChurn)
    ->ArgNames({"permille", "cycles"})
    ->Args({10, 1000})
    ->Args({200, 10000})
    ->Iterations(1)
    ->UseManualTime()
    ->Unit(benchmark::kSecond);

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
  // The daemon runs in this process: on huge pages, as kai-scheduler runs it (GLIBC_TUNABLES=
  // glibc.malloc.hugetlb=0 for figures without them). The API-server child inherits the tunable.
  kai::tools::run_with_huge_pages(argv);
  if (argc >= 2 && std::string(argv[1]) == kai::bench::kClusterServerFlag) {
    return kai::bench::run_cluster_server(argc - 2, argv + 2);
  }
  kai::tools::keep_resident_size_low();  // as kai-scheduler sets malloc for the daemon
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  const size_t ran = benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return g_failed || ran == 0 ? 1 : 0;  // a filter that matches nothing must not pass as a smoke test
}
