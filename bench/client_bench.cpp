// The Kubernetes client's hot paths (docs/performance-targets.md "Targets"): decoding watch events of about 4 KB
// into typed pods on one core, next to the nlohmann-DOM pipeline it replaced, and pods/binding calls
// through KubeClient's keep-alive pool against kai-apiserver with its cost model off.

#include <benchmark/benchmark.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "k8s/apiserver/api_server.hpp"
#include "k8s/client/cluster_config.hpp"
#include "k8s/client/kube_client.hpp"
#include "k8s/client/watch_line.hpp"
#include "k8s/model/json_codec.hpp"
#include "k8s/model/watch_decode.hpp"
#include "tools/kai-gen/api_pod.hpp"

namespace {

using nlohmann::json;

/// 1,000 distinct MODIFIED lines of about 4 KB, as a watch delivers them.
const std::vector<std::string>& watch_lines() {
  static const std::vector<std::string> lines = [] {
    std::vector<std::string> out;
    out.reserve(1000);
    for (int i = 0; i < 1000; ++i)
      out.push_back(json{{"type", "MODIFIED"}, {"object", kai::gen::api_server_pod(i)}}.dump());
    return out;
  }();
  return lines;
}

/// The watch lines in turn, round and round, counting the bytes handed out.
class LineCycle {
 public:
  const std::string& next() {
    const std::string& line = lines_[i_++ % lines_.size()];
    bytes_ += line.size();
    return line;
  }
  size_t bytes() const { return bytes_; }

 private:
  const std::vector<std::string>& lines_ = watch_lines();
  size_t i_ = 0;
  size_t bytes_ = 0;
};

void report(benchmark::State& state, int64_t pods, size_t bytes) {
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
  state.counters["pods_decoded"] = static_cast<double>(pods);
  state.counters["bytes_per_event"] = static_cast<double>(watch_lines()[0].size());
}

/// What the daemon does per event now: scan the line (type, object slice, resourceVersion), then
/// decode the object into a typed Pod.
void BM_WatchDecode(benchmark::State& state) {
  LineCycle lines;
  int64_t pods = 0;
  for (auto _ : state) {
    const std::string& line = lines.next();
    auto scanned = kai::k8s::scan_watch_line(line);
    kai::model::ClusterObjects out;
    if (!scanned || !kai::model::decode_objects_json(scanned->object, "Pod", out)) {
      state.SkipWithError("decode failed");
      break;
    }
    pods += static_cast<int64_t>(out.pods.size());
    benchmark::DoNotOptimize(out);
  }
  report(state, pods, lines.bytes());
}
BENCHMARK(BM_WatchDecode);

/// The line scan alone.
void BM_WatchScanLine(benchmark::State& state) {
  LineCycle lines;
  for (auto _ : state) {
    const std::string& line = lines.next();
    auto scanned = kai::k8s::scan_watch_line(line);
    benchmark::DoNotOptimize(scanned);
  }
  report(state, 0, lines.bytes());
}
BENCHMARK(BM_WatchScanLine);

/// The pipeline before: nlohmann DOM of the line, the object dumped again, parsed again by the
/// projection and decoded.
void BM_WatchDecodeNlohmannDom(benchmark::State& state) {
  LineCycle lines;
  int64_t pods = 0;
  for (auto _ : state) {
    const std::string& line = lines.next();
    json ev = json::parse(line);
    const std::string object = ev["object"].dump();
    kai::model::ClusterObjects out;
    if (!kai::model::decode_objects_json_reference(object, "Pod", out)) {
      state.SkipWithError("decode failed");
      break;
    }
    pods += static_cast<int64_t>(out.pods.size());
  }
  report(state, pods, lines.bytes());
}
BENCHMARK(BM_WatchDecodeNlohmannDom);

/// pods/binding through KubeClient (HTTPS, keep-alive pool) with N caller threads; cost model off.
void BM_KubeClientBinding(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  const int64_t per_thread = 1500;
  for (auto _ : state) {
    state.PauseTiming();
    kai::apiserver::ServerOptions so;
    so.history_limit = 1000;
    kai::apiserver::ApiServer server(so);
    if (!server.start().is_ok()) {
      state.SkipWithError("kai-apiserver did not start");
      break;
    }
    const int64_t total = per_thread * threads;
    for (int64_t p = 0; p < total; ++p) {
      json pod = {
          {"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", "p" + std::to_string(p)}, {"namespace", "default"}}},
          {"spec", {{"schedulerName", "kai-scheduler"}, {"containers", json::array({{{"name", "c"}, {"image", "busybox"}}})}}}};
      if (!server.create_object(pod.dump()).is_ok()) {
        state.SkipWithError("creating the pods failed");
        return;
      }
    }
    auto config = kai::k8s::load_kubeconfig(server.kubeconfig_path());
    if (!config) {
      state.SkipWithError(config.message().c_str());
      break;
    }
    kai::k8s::ClientOptions co;
    co.qps = 1e6;
    co.burst = 1000000;
    kai::k8s::KubeClient client(*config, co);
    std::atomic<int64_t> failed{0};
    std::string first_failure;
    std::mutex failure_mu;
    state.ResumeTiming();
    std::vector<std::thread> workers;
    workers.reserve(static_cast<size_t>(threads));
    for (int t = 0; t < threads; ++t) {
      workers.emplace_back([&, t] {
        for (int64_t k = 0; k < per_thread; ++k) {
          const std::string name = "p" + std::to_string(t * per_thread + k);
          const kai::k8s::ApiResult r = client.bind_pod("default", name, "", "node-1");
          if (r.ok()) continue;
          ++failed;
          std::lock_guard lock(failure_mu);
          if (first_failure.empty()) first_failure = r.describe();
        }
      });
    }
    for (auto& w : workers) w.join();
    state.PauseTiming();
    if (!first_failure.empty()) state.SetLabel("first failure: " + first_failure);
    state.counters["bound"] = static_cast<double>(total - failed.load());
    state.counters["failed"] = static_cast<double>(failed.load());
    state.counters["bindings_per_s"] =
        benchmark::Counter(static_cast<double>(total), benchmark::Counter::kIsRate);
    server.stop();
    state.ResumeTiming();
  }
}
BENCHMARK(BM_KubeClientBinding)->Arg(1)->Arg(4)->Iterations(1)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
