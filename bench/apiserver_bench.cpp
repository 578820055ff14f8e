// kai-apiserver throughput on one core: creates, bindings and watch fan-out, client and server in one
// process pinned to CPU 0 (so the figures include the client's own cost), over plain HTTP and HTTPS
// keep-alive connections. Also the memory held per stored pod.

#include <benchmark/benchmark.h>
#include <sched.h>

#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "k8s/apiserver/api_server.hpp"
#include "k8s/http/http_client.hpp"

namespace {

using kai::apiserver::ApiServer;
using kai::apiserver::ServerOptions;
namespace t = kai::http;

void pin_to_one_core() {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(0, &set);
  sched_setaffinity(0, sizeof set, &set);
}

std::unique_ptr<ApiServer> start_server() {
  pin_to_one_core();  // before start(): the server's threads inherit the affinity
  ServerOptions o;
  o.history_limit = 1000;
  auto s = std::make_unique<ApiServer>(o);
  if (!s->start().is_ok()) return nullptr;
  return s;
}

t::Endpoint endpoint(const ApiServer& s, bool tls) {
  t::Endpoint ep;
  ep.port = tls ? s.https_port() : s.http_port();
  ep.tls = tls;
  ep.ca_file = s.ca_path();
  ep.token = s.token();
  return ep;
}

/// A pod of about 1 KB, like the scheduler's test pods.
std::string pod_json(const std::string& name) {
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name +
         R"(","namespace":"default","labels":{"app":"bench","kai.scheduler/queue":"team-a"},)"
         R"("annotations":{"pod-group-name":"pg-1"}},"spec":{"schedulerName":"kai-scheduler",)"
         R"("containers":[{"name":"main","image":"registry.example.com/team/trainer:1.0",)"
         R"("resources":{"requests":{"cpu":"2","memory":"4Gi","nvidia.com/gpu":"1"},)"
         R"("limits":{"nvidia.com/gpu":"1"}},"env":[{"name":"A","value":"1"},{"name":"B","value":"2"}]}],)"
         R"("tolerations":[{"key":"nvidia.com/gpu","operator":"Exists","effect":"NoSchedule"}]}})";
}

void BM_Create(benchmark::State& state) {
  auto server = start_server();
  t::HttpClient c(endpoint(*server, state.range(0) == 1));
  int64_t i = 0;
  for (auto _ : state) {
    auto r = c.request("POST", "/api/v1/namespaces/default/pods", pod_json("p" + std::to_string(i++)));
    if (r.status != 201) state.SkipWithError("create failed");
  }
  state.SetItemsProcessed(state.iterations());
  state.SetLabel(state.range(0) == 1 ? "https" : "http");
}
BENCHMARK(BM_Create)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond)->UseRealTime();

void BM_Binding(benchmark::State& state) {
  auto server = start_server();
  const int64_t n = state.max_iterations;
  for (int64_t i = 0; i < n; ++i) (void)server->create_object(pod_json("p" + std::to_string(i)));
  t::HttpClient c(endpoint(*server, state.range(0) == 1));
  int64_t i = 0;
  for (auto _ : state) {
    const std::string name = "p" + std::to_string(i++);
    auto r = c.request("POST", "/api/v1/namespaces/default/pods/" + name + "/binding",
                       R"({"apiVersion":"v1","kind":"Binding","metadata":{"name":")" + name +
                           R"("},"target":{"kind":"Node","name":"node-1"}})");
    if (r.status != 201) state.SkipWithError("binding failed");
  }
  state.SetItemsProcessed(state.iterations());
  state.SetLabel(state.range(0) == 1 ? "https" : "http");
}
BENCHMARK(BM_Binding)->Arg(0)->Arg(1)->Iterations(3000)->Unit(benchmark::kMicrosecond)->UseRealTime();

/// Creates with N watchers on the pods: items are events delivered to watchers.
void BM_WatchFanout(benchmark::State& state) {
  auto server = start_server();
  const int watchers = static_cast<int>(state.range(0));
  std::vector<std::unique_ptr<t::WatchStream>> ws;
  const std::string from = std::to_string(server->resource_version());
  for (int w = 0; w < watchers; ++w) {
    ws.push_back(std::make_unique<t::WatchStream>(
        endpoint(*server, false), "/api/v1/namespaces/default/pods?watch=1&resourceVersion=" + from));
    ws.back()->status();
  }
  t::HttpClient c(endpoint(*server, false));
  int64_t i = 0;
  const int64_t total = state.max_iterations;
  for (auto _ : state) {
    (void)c.request("POST", "/api/v1/namespaces/default/pods", pod_json("p" + std::to_string(i++)));
    if (i == total) {
      // The last iteration waits until every watcher has every event, so that delivery is timed.
      for (auto& w : ws) {
        for (int64_t k = 0; k < total; ++k) {
          if (!w->next(std::chrono::seconds(30))) {
            state.SkipWithError("watch event missing");
            break;
          }
        }
      }
    }
  }
  state.SetItemsProcessed(state.iterations() * watchers);
  state.counters["creates_per_s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_WatchFanout)
    ->Arg(1)
    ->Arg(10)
    ->Arg(50)
    ->Iterations(1000)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

long rss_bytes() {
  std::ifstream in("/proc/self/statm");
  long size = 0, resident = 0;
  in >> size >> resident;
  return resident * 4096;
}

/// Memory held per stored pod (about 1 KB of JSON each), measured as resident-set growth.
void BM_MemoryPerPod(benchmark::State& state) {
  for (auto _ : state) {
    auto server = start_server();
    const long before = rss_bytes();
    const int64_t n = state.range(0);
    for (int64_t i = 0; i < n; ++i) (void)server->create_object(pod_json("p" + std::to_string(i)));
    state.counters["bytes_per_pod"] = static_cast<double>(rss_bytes() - before) / static_cast<double>(n);
  }
}
BENCHMARK(BM_MemoryPerPod)->Arg(20000)->Iterations(1)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
