#include "bench/e2e/cluster_server.hpp"

#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <deque>
#include <iostream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "k8s/admission/admission.hpp"
#include "k8s/apiserver/api_server.hpp"
#include "k8s/http/http_client.hpp"
#include "k8s/model/json_codec.hpp"
#include "tests/daemon/daemon_harness.hpp"
#include "tools/kai-gen/generator.hpp"

namespace kai::bench {
namespace {

using Json = nlohmann::json;
using Clock = std::chrono::steady_clock;

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
}

/// The protocol's output: the real stdout, kept apart so that nothing else the process prints on
/// stdout can be taken for a message.
class Reports {
 public:
  Reports() : out_(fdopen(dup(1), "w")) { dup2(2, 1); }
  ~Reports() { fclose(out_); }
  Reports(const Reports&) = delete;
  Reports& operator=(const Reports&) = delete;
  void line(const std::string& s) {
    std::fputs((s + "\n").c_str(), out_);
    std::fflush(out_);
  }

 private:
  FILE* out_;
};

/// kai-gen's pods are bare requests; real ones carry an image, a command, environment, a volume and
/// tolerations, which the daemon must decode too. This brings a stored pod to about 2 KB.
void dress(Json& pod) {
  Json& meta = pod["metadata"];
  meta["labels"]["app.kubernetes.io/name"] = "trainer";
  meta["labels"]["app.kubernetes.io/part-of"] = meta["namespace"];
  meta["annotations"]["kubectl.kubernetes.io/default-container"] = "main";
  Json& spec = pod["spec"];
  spec["restartPolicy"] = "Never";
  spec["serviceAccountName"] = "default";
  spec["tolerations"] =
      Json::array({{{"key", "nvidia.com/gpu"}, {"operator", "Exists"}, {"effect", "NoSchedule"}}});
  spec["volumes"] = Json::array({{{"name", "data"}, {"emptyDir", Json::object()}},
                                 {{"name", "shm"}, {"emptyDir", {{"medium", "Memory"}}}}});
  for (Json& c : spec["containers"]) {
    c["image"] = "registry.example.com/ml-platform/trainer:2024.11.3-cuda12.4";
    c["command"] = Json::array({"python", "-m", "trainer.main"});
    c["args"] = Json::array({"--config", "/data/config.yaml", "--epochs", "10"});
    c["env"] = Json::array(
        {{{"name", "NCCL_DEBUG"}, {"value", "WARN"}},
         {{"name", "OMP_NUM_THREADS"}, {"value", "8"}},
         {{"name", "WANDB_PROJECT"}, {"value", "bench"}},
         {{"name", "POD_NAME"}, {"valueFrom", {{"fieldRef", {{"fieldPath", "metadata.name"}}}}}}});
    c["volumeMounts"] = Json::array(
        {{{"name", "data"}, {"mountPath", "/data"}}, {{"name", "shm"}, {"mountPath", "/dev/shm"}}});
  }
}

/// What the daemon's mutating webhook does to a new pod (deploy/ installs it; kai-apiserver does not
/// call webhooks): GPU-sharing pods get their configmap references, GPU pods the runtime class. Done
/// here, so the webhook's small share of the daemon's work is not in the daemon's CPU figure.
void admit(Json& pod) {
  static const admission::RandomSuffix random = admission::system_random_suffix();
  const auto d = admission::decide(admission::Hook::kPodMutate, "CREATE", pod.dump(),
                                   admission::AdmissionOptions{}, random);
  if (!d.allowed) {
    std::cerr << "cluster server: the admission webhook refused a pod: " << d.message << "\n";
    std::exit(3);
  }
  if (!d.patch.empty()) pod = pod.patch(Json::parse(d.patch));
}

/// Creates `document`; a failure ends the process (the benchmark sees the child vanish).
size_t create(apiserver::ApiServer& server, const std::string& document) {
  auto r = server.create_object(document);
  if (!r.is_ok()) {
    std::cerr << "cluster server: cannot create " << document.substr(0, 300) << ": " << r.message() << "\n";
    std::exit(3);
  }
  return r.value().size();
}
size_t create(apiserver::ApiServer& server, const Json& object) {
  return create(server, object.dump());
}

/// A reservation pod holding the device of a GPU group that kai-gen placed, as the binder would have
/// made it; its GPU is already reported, so the kubelet stand-in has nothing to do for it.
Json reservation_pod(const std::string& group, const std::string& node, int serial) {
  return {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata",
       {{"name", "gpu-reservation-" + node + "-" + std::to_string(serial)},
        {"namespace", "kai-resource-reservation"},
        {"labels", {{"app", "kai-resource-reservation"}, {"runai-gpu-group", group}}},
        {"annotations",
         {{"karpenter.sh/do-not-disrupt", "true"}, {"run.ai/reserve_for_gpu_index", "GPU-" + group}}}}},
      {"spec",
       {{"nodeName", node},
        {"serviceAccountName", "kai-resource-reservation"},
        {"containers", Json::array({{{"name", "resource-reservation"},
                                     {"image", "ghcr.io/nvidia/kai-scheduler/resource-reservation:latest"},
                                     {"resources", {{"limits", {{"nvidia.com/gpu", "1"}}}}}}})}}}};
}

/// `pod` (a running pod's document) as a new bare pod, not yet named: no node, status, uid or group.
Json unplaced(Json pod) {
  Json& meta = pod["metadata"];
  for (const char* field : {"uid", "resourceVersion", "creationTimestamp", "name"}) meta.erase(field);
  if (meta.contains("annotations")) meta["annotations"].erase("pod-group-name");
  pod["spec"].erase("nodeName");
  pod.erase("status");
  return pod;
}

/// The cluster as loaded, and what is left to create on `go`.
struct Loaded {
  int64_t uniform_pods = 0;  ///< bare one-GPU pods to create in kUniformNamespace
  std::vector<model::PodGroup> pending_groups;
  std::map<std::string, std::vector<model::Pod>> pending_by_group;  ///< "ns/group" -> pods
  std::map<std::string, std::string> job_uids;  ///< "ns/group" -> its Job's uid (as_jobs)
  size_t nodes = 0, running = 0, pending = 0, pod_bytes = 0;
  /// A bare CPU-only pod in the namespace and queue of a running one, for the churn (no name yet).
  Json churn_pod;
};

/// The namespaces, and the runtime class admit() gives GPU pods, as the GPU operator installs it: the
/// API server refuses a pod that names a RuntimeClass that does not exist.
void create_namespaces_and_runtime_class(apiserver::ApiServer& server, const std::set<std::string>& namespaces) {
  for (const auto& ns : namespaces)
    create(server, {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", ns}}}});
  const std::string runtime_class = admission::AdmissionOptions{}.gpu_pod_runtime_class;
  create(server, {{"apiVersion", "node.k8s.io/v1"},
                  {"kind", "RuntimeClass"},
                  {"metadata", {{"name", runtime_class}}},
                  {"handler", runtime_class}});
}

Json uniform_node(int64_t i) {
  const Json resources = {{"cpu", "128"}, {"memory", "1099511627776"}, {"nvidia.com/gpu", "8"}, {"pods", "110"}};
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata",
           {{"name", uniform_node_name(i)},
            {"labels", {{"nvidia.com/gpu.count", "8"}, {"nvidia.com/gpu.memory", "81920"}}}}},
          {"spec", Json::object()},
          {"status",
           {{"allocatable", resources},
            {"capacity", resources},
            {"conditions", Json::array({{{"type", "Ready"}, {"status", "True"}}})}}}};
}

/// A bare one-GPU pod of the uniform cluster, as a user would post it (then dressed and admitted).
Json uniform_pod(int64_t i) {
  Json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata",
               {{"name", "gpu-" + std::to_string(i)},
                {"namespace", kUniformNamespace},
                {"labels", {{"kai.scheduler/queue", "bench"}}}}},
              {"spec",
               {{"schedulerName", "kai-scheduler"},
                {"containers",
                 Json::array({{{"name", "main"},
                               {"resources",
                                {{"requests", {{"cpu", "1"}, {"memory", "1073741824"}, {"nvidia.com/gpu", "1"}}},
                                 {"limits", {{"nvidia.com/gpu", "1"}}}}}}})}}}};
  dress(pod);
  admit(pod);
  return pod;
}

/// The uniform cluster (ClusterServerSettings::uniform_nodes): nodes and one queue; the pods come on `go`.
Loaded load_uniform(apiserver::ApiServer& server, const ClusterServerSettings& s) {
  Loaded out;
  create_namespaces_and_runtime_class(server, {"kai-resource-reservation", kUniformNamespace});
  const Json unlimited = {{"quota", -1.0}, {"limit", -1.0}, {"overQuotaWeight", 1.0}};
  create(server, {{"apiVersion", "scheduling.run.ai/v2"},
                  {"kind", "Queue"},
                  {"metadata", {{"name", "bench"}}},
                  {"spec", {{"resources", {{"cpu", unlimited}, {"memory", unlimited}, {"gpu", unlimited}}}}}});
  for (int64_t i = 0; i < s.uniform_nodes; ++i) create(server, uniform_node(i));
  out.nodes = static_cast<size_t>(s.uniform_nodes);
  out.uniform_pods = s.uniform_pods;
  out.pending = static_cast<size_t>(s.uniform_pods);
  server.set_kubelet(true);
  server.set_kubelet_reserves_gpus(true);
  return out;
}

Loaded load(apiserver::ApiServer& server, const ClusterServerSettings& s) {
  if (s.uniform_nodes > 0) return load_uniform(server, s);
  const model::ClusterObjects c =
      gen::generate(gen::ClusterSpec::scaled(static_cast<double>(s.per_mille) / 1000.0));
  Loaded out;
  out.nodes = c.nodes.size();
  std::set<std::string> namespaces = {"kai-resource-reservation"};
  for (const auto& p : c.pods) namespaces.insert(p.meta.namespace_);
  create_namespaces_and_runtime_class(server, namespaces);
  for (const auto& pc : c.priority_classes) create(server, model::encode(pc));
  for (const auto& q : c.queues) create(server, model::encode(q));
  for (const auto& n : c.nodes) create(server, model::encode(n));
  std::map<std::string, std::string> group_nodes;
  for (const auto& p : c.pods) {
    if (p.node_name.empty()) {
      const std::string group = p.meta.annotations.at("pod-group-name");
      out.pending_by_group[p.meta.namespace_ + "/" + group].push_back(p);
      ++out.pending;
      continue;
    }
    Json doc = model::encode(p);
    dress(doc);
    out.pod_bytes += create(server, doc);
    if (out.churn_pod.is_null() && !p.meta.labels.count("runai-gpu-group") &&
        doc["spec"]["containers"].dump().find("nvidia.com/gpu") == std::string::npos) {
      out.churn_pod = unplaced(doc);
    }
    if (++out.running % 20000 == 0)
      std::cerr << "cluster server: " << out.running << " running pods loaded\n";
    if (auto g = p.meta.labels.find("runai-gpu-group"); g != p.meta.labels.end())
      group_nodes[g->second] = p.node_name;
  }
  int serial = 0;
  for (const auto& [group, node] : group_nodes) create(server, reservation_pod(group, node, serial++));
  out.pending_groups = c.pod_groups;
  if (s.as_jobs) {
    for (const auto& pg : c.pod_groups) {
      const std::string n = std::to_string(pg.min_member);
      Json job = {{"apiVersion", "batch/v1"},
                  {"kind", "Job"},
                  {"metadata",
                   {{"name", pg.meta.name},
                    {"namespace", pg.meta.namespace_},
                    {"labels", {{"kai.scheduler/queue", pg.queue}}},
                    {"annotations", {{"kai.scheduler/batch-min-member", n}}}}},
                  {"spec",
                   {{"parallelism", pg.min_member},
                    {"completions", pg.min_member},
                    {"template", {{"spec", {{"containers", Json::array()}}}}}}}};
      auto made = server.create_object(job.dump());
      if (!made.is_ok()) {
        std::cerr << "cluster server: cannot create Job " << pg.meta.name << ": " << made.message() << "\n";
        std::exit(3);
      }
      out.job_uids[pg.meta.namespace_ + "/" + pg.meta.name] = Json::parse(made.value())["metadata"]["uid"];
    }
  }
  // Every pod with a node runs once the kubelet stand-in is on: one MODIFIED event (one
  // resourceVersion) each. Wait for all of them, so that the daemon lists a settled cluster.
  const uint64_t settled = server.resource_version() + out.running + group_nodes.size();
  server.set_kubelet(true);
  const auto until = Clock::now() + std::chrono::minutes(10);
  while (server.resource_version() < settled && Clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  // From now on new reservation pods get a device, as the binder's sharing chain expects.
  server.set_kubelet_reserves_gpus(true);
  // Loading left the allocator's free lists long and fragmented, which made every later create
  // (yaml-cpp allocates a node per value) several times slower than on a fresh server.
  malloc_trim(0);
  if (out.running > 0) out.pod_bytes /= out.running;
  return out;
}

/// Creation and bind times of the pods created on `go`, the binds seen on a watch of all pods.
class BindClock {
 public:
  void created(const std::string& key, int64_t at) {
    std::lock_guard lock(mu_);
    created_[key] = at;
  }
  void on_event(const std::string& line) {
    Json ev = Json::parse(line, nullptr, false);
    if (!ev.is_object() || !ev["object"].is_object()) return;
    const Json& o = ev["object"];
    const std::string node = o.value("spec", Json::object()).value("nodeName", "");
    if (node.empty()) return;
    const Json& meta = o.value("metadata", Json::object());
    const std::string key = meta.value("namespace", "") + "/" + meta.value("name", "");
    const int64_t at = now_ns();
    std::lock_guard lock(mu_);
    if (!created_.count(key) || bound_.count(key)) return;
    bound_[key] = at;
    last_bind_ = std::max(last_bind_, at);
  }
  size_t bound() const {
    std::lock_guard lock(mu_);
    return bound_.size();
  }
  int64_t last_bind() const {
    std::lock_guard lock(mu_);
    return last_bind_;
  }
  /// Creation-to-bind latencies of the bound pods, in µs, sorted.
  std::vector<int64_t> latencies_us() const {
    std::lock_guard lock(mu_);
    std::vector<int64_t> out;
    for (const auto& [key, at] : bound_) out.push_back((at - created_.at(key)) / 1000);
    std::sort(out.begin(), out.end());
    return out;
  }

 private:
  mutable std::mutex mu_;
  std::map<std::string, int64_t> created_, bound_;
  int64_t last_bind_ = 0;
};

void report_calls(Reports& r, apiserver::ApiServer& server) {
  for (const auto& [key, n] : server.request_counts()) r.line("calls " + std::to_string(n) + " " + key);
  r.line("end");
  server.reset_request_counts();
}

int64_t percentile(const std::vector<int64_t>& sorted, double p) {
  if (sorted.empty()) return 0;
  const size_t i = std::min(sorted.size() - 1, static_cast<size_t>(p * static_cast<double>(sorted.size())));
  return sorted[i];
}

/// Creates the pending groups (each PodGroup just before its pods), at `rate` pods/s or all at once,
/// and reports binds until all are bound or nothing happened for `quiet`.
void run(Reports& r, apiserver::ApiServer& server, const Loaded& cluster, double rate,
         std::chrono::milliseconds quiet) {
  BindClock clock;
  http::Endpoint ep;
  ep.port = server.http_port();
  ep.tls = false;
  ep.token = server.token();
  http::WatchStream watch(
      ep, "/api/v1/pods?watch=1&resourceVersion=" + std::to_string(server.resource_version()));
  if (watch.status() != 200) {
    std::cerr << "cluster server: the bind watch failed: " << watch.error() << "\n";
    std::exit(3);
  }
  std::atomic<bool> stop{false};
  std::thread reader([&] {
    while (!stop) {
      if (auto line = watch.next(std::chrono::milliseconds(100))) clock.on_event(*line);
    }
  });
  server.reset_request_counts();  // the bind watch above is ours, not the daemon's

  size_t reported = 0;
  auto progress = [&] {
    const size_t bound = clock.bound();
    if (bound == reported) return;
    reported = bound;
    r.line("progress " + std::to_string(bound) + " " + std::to_string(now_ns()));
  };
  // Everything to create, as text, before the clock starts: what is timed is the server taking the
  // objects, as when clients post them.
  struct Item {
    std::string key;  ///< "ns/name" of a pod, "" for a PodGroup
    std::string document;
  };
  std::vector<Item> items;
  for (const auto& pg : cluster.pending_groups) {
    auto pods = cluster.pending_by_group.find(pg.meta.namespace_ + "/" + pg.meta.name);
    if (pods == cluster.pending_by_group.end()) continue;
    auto job_uid = cluster.job_uids.find(pg.meta.namespace_ + "/" + pg.meta.name);
    if (job_uid == cluster.job_uids.end()) items.push_back({"", model::encode(pg).dump()});
    for (const auto& p : pods->second) {
      Json doc = model::encode(p);
      dress(doc);
      if (job_uid != cluster.job_uids.end()) {
        // As the Job controller makes it: owned by the Job, no group named.
        doc["metadata"]["annotations"].erase("pod-group-name");
        doc["metadata"]["ownerReferences"] = Json::array({{{"apiVersion", "batch/v1"},
                                                           {"kind", "Job"},
                                                           {"name", pg.meta.name},
                                                           {"uid", job_uid->second},
                                                           {"controller", true}}});
      }
      admit(doc);
      items.push_back({p.meta.namespace_ + "/" + p.meta.name, doc.dump()});
    }
  }
  for (int64_t i = 0; i < cluster.uniform_pods; ++i) {
    items.push_back({std::string(kUniformNamespace) + "/gpu-" + std::to_string(i), uniform_pod(i).dump()});
  }
  const int64_t t0 = now_ns();
  size_t created = 0;
  auto last_check = Clock::now();
  for (const Item& item : items) {
    if (!item.key.empty() && rate > 0) {
      const auto due =
          std::chrono::nanoseconds(t0 + static_cast<int64_t>(1e9 * static_cast<double>(created) / rate));
      while (std::chrono::nanoseconds(now_ns()) < due) {
        std::this_thread::sleep_for(std::min<std::chrono::nanoseconds>(
            due - std::chrono::nanoseconds(now_ns()), std::chrono::milliseconds(20)));
        progress();
      }
    }
    if (!item.key.empty()) clock.created(item.key, now_ns());
    create(server, item.document);
    created += !item.key.empty();
    if (Clock::now() - last_check > std::chrono::milliseconds(20)) {
      progress();
      last_check = Clock::now();
    }
  }
  const int64_t created_end = now_ns();
  for (;;) {
    progress();
    if (clock.bound() == created) break;
    const int64_t since = now_ns() - std::max(created_end, clock.last_bind());
    if (std::chrono::nanoseconds(since) > quiet) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  stop = true;
  reader.join();
  watch.stop();
  const auto lat = clock.latencies_us();
  r.line("done " + std::to_string(created) + " " + std::to_string(clock.bound()) + " " + std::to_string(t0) +
         " " + std::to_string(clock.last_bind()) + " " + std::to_string(percentile(lat, 0.5)) + " " +
         std::to_string(percentile(lat, 0.99)) + " " + std::to_string(lat.empty() ? 0 : lat.back()) + " " +
         std::to_string((created_end - t0) / 1000));
  report_calls(r, server);
}

/// The churn of BM_DaemonChurn: every `interval` a new bare CPU-only pod comes (`cluster.churn_pod`,
/// named churn-N) and the one that came `live` intervals earlier is deleted, until `stop`. Returns the
/// pods created.
size_t churn(apiserver::ApiServer& server, const Loaded& cluster, size_t live,
             std::chrono::milliseconds interval, const std::atomic<bool>& stop) {
  std::deque<std::string> names;
  size_t created = 0;
  const std::string ns = cluster.churn_pod["metadata"].value("namespace", "");
  auto next = Clock::now();
  while (!stop) {
    Json pod = cluster.churn_pod;
    pod["metadata"]["name"] = "churn-" + std::to_string(created++);
    names.push_back(pod["metadata"]["name"]);
    create(server, pod);
    if (names.size() > live) {
      if (auto st = server.delete_object("v1", "Pod", ns, names.front()); !st.is_ok()) {
        std::cerr << "cluster server: cannot delete " << names.front() << ": " << st.message() << "\n";
        std::exit(3);
      }
      names.pop_front();
    }
    next += interval;
    std::this_thread::sleep_until(next);
  }
  return created;
}

}  // namespace

std::string uniform_node_name(int64_t i) {
  char name[32];
  std::snprintf(name, sizeof name, "node-%05lld", static_cast<long long>(i));
  return name;
}

std::vector<std::string> cluster_server_args(const ClusterServerSettings& s) {
  return {std::to_string(s.per_mille),         std::to_string(s.service_us),
          std::to_string(s.max_in_flight),     std::to_string(s.kubelet_delay_ms),
          s.as_jobs ? "jobs" : "podgroups",    std::to_string(s.uniform_nodes),
          std::to_string(s.uniform_pods)};
}

int run_cluster_server(int argc, char** argv) {
  if (argc != 7) {
    std::cerr << "cluster server: expected <per-mille> <service us> <max in flight> <kubelet delay ms> "
                 "<podgroups|jobs> <uniform nodes> <uniform pods>\n";
    return 2;
  }
  ClusterServerSettings s;
  s.per_mille = std::atoll(argv[0]);
  s.service_us = std::atoll(argv[1]);
  s.max_in_flight = std::atoll(argv[2]);
  s.kubelet_delay_ms = std::atoll(argv[3]);
  s.as_jobs = std::string(argv[4]) == "jobs";
  s.uniform_nodes = std::atoll(argv[5]);
  s.uniform_pods = std::atoll(argv[6]);
  Reports reports;

  apiserver::ServerOptions o = e2e::test_server_options();
  o.kubelet = false;  // on once loaded, so that the cluster starts settled (see load())
  o.kubelet_reserves_gpus = false;
  o.kubelet_delay = std::chrono::milliseconds(s.kubelet_delay_ms);
  o.cost.service_time = std::chrono::microseconds(s.service_us);
  o.cost.max_in_flight = static_cast<int>(s.max_in_flight);
  apiserver::ApiServer server(o);
  if (auto st = server.start(); !st.is_ok()) {
    std::cerr << "cluster server: " << st.message() << "\n";
    return 3;
  }
  const auto start = Clock::now();
  const Loaded cluster = load(server, s);
  size_t groups = 0;
  for (const auto& pg : cluster.pending_groups)
    groups += cluster.pending_by_group.count(pg.meta.namespace_ + "/" + pg.meta.name);
  groups += static_cast<size_t>(cluster.uniform_pods);  // a group each
  const auto load_ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
  reports.line("ready " + server.kubeconfig_path() + " " + std::to_string(cluster.nodes) + " " +
               std::to_string(cluster.running) + " " + std::to_string(cluster.pending) + " " +
               std::to_string(groups) + " " + std::to_string(cluster.pod_bytes) + " " +
               std::to_string(load_ms));

  std::string command;
  while (std::getline(std::cin, command)) {
    if (command == "counts") {
      report_calls(reports, server);
    } else if (command.rfind("go ", 0) == 0) {
      double rate = 0;
      long long quiet_ms = 0;
      if (std::sscanf(command.c_str(), "go %lf %lld", &rate, &quiet_ms) != 2) return 2;
      // On a thread of its own, whose malloc arena the loading did not fragment.
      std::thread([&] { run(reports, server, cluster, rate, std::chrono::milliseconds(quiet_ms)); }).join();
    } else if (command.rfind("churn ", 0) == 0) {
      long long live = 0, interval_ms = 0;
      if (std::sscanf(command.c_str(), "churn %lld %lld", &live, &interval_ms) != 2 ||
          cluster.churn_pod.is_null())
        return 2;
      std::atomic<bool> stop{false};
      size_t created = 0;
      std::thread churner([&] {
        created =
            churn(server, cluster, static_cast<size_t>(live), std::chrono::milliseconds(interval_ms), stop);
      });
      while (std::getline(std::cin, command) && command != "stop") {
      }
      stop = true;
      churner.join();
      reports.line("churned " + std::to_string(created));
    }
  }
  server.stop();
  return 0;
}

}  // namespace kai::bench
