// kai-demo: the README's main command. Starts the test API server (kubelet stand-in on) with a small
// GPU cluster, starts kai-scheduler against it, and walks through KAI's GPU-sharing guide: two
// fraction pods on one GPU, a gpu-memory pod, a gang that waits until it fits, and a second team that
// reclaims its quota. Each step prints what it waits for, the pods as `kubectl get pods` would, and
// the scheduler's own explanation (`kai-log why`). It ends with two questions answered from the event
// log: what would have happened with team-b guaranteed 2 GPUs (counterfactual replay), and where and
// when a 4-GPU job would run if submitted now (what-if). Exits 0 only when every step ends as expected.

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "k8s/apiserver/api_server.hpp"
#include "k8s/model/json_codec.hpp"
#include "tools/common/guarded_main.hpp"
#include "tools/common/stop_signals.hpp"

namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;
using namespace std::chrono_literals;

extern "C" char** environ;

struct Options {
  std::string scheduler_bin;
  std::string kai_log_bin;
  std::string kai_sim_bin;
  std::string crd_dir = std::string(KAI_SOURCE_DIR) + "/deploy/crds";
  /// The cluster and each step's workloads, as plain YAML a reader can apply to a real cluster.
  std::string manifest_dir = std::string(KAI_SOURCE_DIR) + "/tools/kai-demo/manifests";
  int step_timeout_s = 90;
  bool keep_running = false;
};

/// A finished command: its exit code (-1 when it did not exit normally) and what it printed.
struct Ran {
  int exit_code = -1;
  std::string output;
  bool ok() const { return exit_code == 0; }
};

/// Runs a command through the shell. Its stderr joins the output unless `with_stderr` is false; a
/// redirect inside `command` applies to its stdout alone (the command runs in a subshell).
Ran run(const std::string& command, bool with_stderr = true) {
  Ran r;
  FILE* p = ::popen(("(" + command + ")" + (with_stderr ? " 2>&1" : "")).c_str(), "r");
  if (p == nullptr) {
    r.output = "(cannot run " + command + ")";
    return r;
  }
  std::array<char, 4096> buf;
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) r.output.append(buf.data(), n);
  const int status = ::pclose(p);
  if (status != -1 && WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  return r;
}

class Demo {
 public:
  explicit Demo(Options options) : o_(std::move(options)) {}
  ~Demo() { stop_scheduler(); }

  int run_walkthrough() {
    if (!start_cluster() || !start_scheduler()) return 1;
    bool ok = step_sharing() && step_memory() && step_gang() && step_reclaim();
    // The fair shares are a step like the others: the walkthrough fails with it.
    ok = fair_shares() && ok;
    ok = step_counterfactual() && step_what_if() && ok;
    std::cout << "\n" << (ok ? "Walkthrough complete: every step ended as expected." : "Walkthrough FAILED (see above).")
              << "\n";
    if (o_.keep_running) keep_running();
    stop_scheduler();
    if (!ok) std::cout << "Scheduler log: " << scheduler_log_ << "\n";
    return ok ? 0 : 1;
  }

 private:
  // ------------------------------------------------------------------------------ cluster
  bool start_cluster() {
    kai::apiserver::ServerOptions so;
    so.crd_dir = o_.crd_dir;
    so.kubelet = true;
    so.kubelet_delay = 300ms;
    server_ = std::make_unique<kai::apiserver::ApiServer>(so);
    if (auto s = server_->start(); !s) {
      std::cerr << "kai-demo: cannot start kai-apiserver: " << s.message() << "\n";
      return false;
    }
    dir_ = fs::path(server_->kubeconfig_path()).parent_path().string();
    heading("A cluster of two GPU nodes (4 x 40 GiB GPUs each) on the embedded API server");
    std::cout << "API server: " << server_->https_url() << "   kubeconfig: " << server_->kubeconfig_path() << "\n";
    if (!apply("cluster.yaml")) return false;
    std::cout << "Queues: default -> {test (4 GPUs guaranteed), team-b (4 GPUs guaranteed)}\n";
    kubectl_ = kubectl_usable();
    if (kubectl_) {
      std::cout << "kubectl works against it, for example:\n  kubectl --kubeconfig " << server_->kubeconfig_path()
                << " get pods -A -o wide\n";
    }
    return true;
  }

  /// Creates the objects of one manifest file of `manifest_dir`.
  bool apply(const std::string& manifest) {
    const std::string path = o_.manifest_dir + "/" + manifest;
    std::ifstream in(path);
    std::stringstream yaml;
    yaml << in.rdbuf();
    if (!in) {
      std::cerr << "kai-demo: cannot read " << path << "\n";
      return false;
    }
    auto docs = kai::model::yaml_documents_to_json(yaml.str());
    if (!docs.is_ok()) {
      std::cerr << "kai-demo: bad manifest: " << docs.message() << "\n";
      return false;
    }
    for (const auto& d : docs.value()) {
      if (d.is_null()) continue;
      auto created = server_->create_object(d.dump());
      if (!created.is_ok()) {
        std::cerr << "kai-demo: cannot create " << d.value("kind", "") << " " << d["metadata"].value("name", "")
                  << ": " << created.message() << "\n";
        return false;
      }
    }
    return true;
  }

  static bool kubectl_usable() {
    const std::string v = run("kubectl version --client -o json").output;
    const size_t brace = v.find('{');
    if (brace == std::string::npos) return false;
    Json j = Json::parse(v.substr(brace), nullptr, false);
    if (j.is_discarded()) return false;
    return std::atoi(j["clientVersion"].value("minor", "0").c_str()) >= 27;
  }

  // ---------------------------------------------------------------------------- scheduler
  bool start_scheduler() {
    if (!fs::exists(o_.scheduler_bin)) {
      std::cerr << "kai-demo: " << o_.scheduler_bin << " does not exist (build the kai-scheduler target)\n";
      return false;
    }
    log_dir_ = dir_ + "/event-log";
    scheduler_log_ = dir_ + "/kai-scheduler.log";
    std::vector<std::string> args = {o_.scheduler_bin, "--kubeconfig", server_->kubeconfig_path(), "--log-dir",
                                     log_dir_, "--schedule-period", "200ms",
                                     // the demo reads no endpoint: any free port, so that one in use
                                     // (another scheduler, a test) does not stop the walkthrough
                                     "--listen-address", ":0"};
    std::vector<char*> argv;
    argv.reserve(args.size() + 1);
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, scheduler_log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    const int rc = posix_spawn(&scheduler_pid_, argv[0], &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) {
      std::cerr << "kai-demo: cannot start " << o_.scheduler_bin << ": " << std::strerror(rc) << "\n";
      return false;
    }
    std::cout << "Started kai-scheduler (pid " << scheduler_pid_ << "), event log " << log_dir_ << "\n";
    return true;
  }

  void stop_scheduler() {
    if (scheduler_pid_ <= 0) return;
    ::kill(scheduler_pid_, SIGTERM);
    int status = 0;
    for (int i = 0; i < 50 && ::waitpid(scheduler_pid_, &status, WNOHANG) == 0; ++i) std::this_thread::sleep_for(100ms);
    if (::waitpid(scheduler_pid_, &status, WNOHANG) == 0) {
      ::kill(scheduler_pid_, SIGKILL);
      ::waitpid(scheduler_pid_, &status, 0);
    }
    scheduler_pid_ = -1;
  }

  bool scheduler_alive() {
    int status = 0;
    return scheduler_pid_ > 0 && ::waitpid(scheduler_pid_, &status, WNOHANG) == 0;
  }

  // ------------------------------------------------------------------------------- reading
  Json pods(const std::string& ns = "") const {
    auto list = server_->list_objects("v1", "Pod", ns);
    return list.is_ok() ? Json::parse(list.value())["items"] : Json::array();
  }

  Json pod(const std::string& ns, const std::string& name) const {
    auto got = server_->get_object("v1", "Pod", ns, name);
    return got.is_ok() ? Json::parse(got.value()) : Json(nullptr);
  }

  /// Whether every named pod of namespace `ns` runs.
  bool running(const std::string& ns, std::initializer_list<const char*> names) const {
    return std::all_of(names.begin(), names.end(), [&](const char* name) { return phase(pod(ns, name)) == "Running"; });
  }

  static std::string phase(const Json& p) { return p.is_null() ? "Gone" : p["status"].value("phase", "Pending"); }
  static std::string label(const Json& p, const std::string& key) {
    if (p.is_null()) return "";
    return p["metadata"].value("labels", Json::object()).value(key, "");
  }
  static std::string annotation(const Json& p, const std::string& key) {
    if (p.is_null()) return "";
    return p["metadata"].value("annotations", Json::object()).value(key, "");
  }
  static std::string unschedulable_message(const Json& p) {
    if (p.is_null()) return "";
    for (const auto& c : p["status"].value("conditions", Json::array())) {
      if (c.value("type", "") == "PodScheduled" && c.value("status", "") == "False") return c.value("message", "");
    }
    return "";
  }

  /// Polls until `done` holds, printing `what` once and a dot per second.
  bool wait_for(const std::string& what, const std::function<bool()>& done) {
    std::cout << "  waiting for " << what << " " << std::flush;
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(o_.step_timeout_s);
    auto next_dot = std::chrono::steady_clock::now() + 1s;
    while (std::chrono::steady_clock::now() < until) {
      if (done()) {
        std::cout << " done\n";
        return true;
      }
      if (!scheduler_alive()) {
        std::cout << " kai-scheduler exited\n";
        return false;
      }
      if (std::chrono::steady_clock::now() >= next_dot) {
        std::cout << "." << std::flush;
        next_dot += 1s;
      }
      std::this_thread::sleep_for(100ms);
    }
    std::cout << " TIMED OUT after " << o_.step_timeout_s << " s\n";
    return false;
  }

  // -------------------------------------------------------------------------------- output
  static void heading(const std::string& text) {
    std::cout << "\n== " << text << " " << std::string(text.size() < 90 ? 90 - text.size() : 0, '=') << "\n";
  }

  void table() {
    std::printf("  %-58s %-9s %-11s %-13s %s\n", "NAME", "STATUS", "NODE", "GPU-FRACTION", "GPU-GROUP");
    for (const auto& p : pods()) {
      const std::string ns = p["metadata"].value("namespace", "");
      const std::string name = ns + "/" + p["metadata"].value("name", "");
      std::string gpu = annotation(p, "gpu-fraction");
      if (gpu.empty() && !annotation(p, "gpu-memory").empty()) gpu = annotation(p, "gpu-memory") + "MiB";
      if (gpu.empty()) {
        for (const auto& c : p["spec"].value("containers", Json::array())) {
          const Json& l = c.value("resources", Json::object()).value("limits", Json::object());
          if (l.contains("nvidia.com/gpu")) gpu = l["nvidia.com/gpu"].is_string() ? l["nvidia.com/gpu"].get<std::string>()
                                                                                   : l["nvidia.com/gpu"].dump();
        }
      }
      std::string group = label(p, "runai-gpu-group");
      if (ns == "kai-resource-reservation") group += " (GPU " + annotation(p, "run.ai/reserve_for_gpu_index") + ")";
      std::printf("  %-58s %-9s %-11s %-13s %s\n", name.c_str(), phase(p).c_str(),
                  p["spec"].value("nodeName", "").c_str(), gpu.empty() ? "-" : gpu.c_str(),
                  group.empty() ? "-" : group.c_str());
    }
    if (kubectl_) {
      std::cout << "  (kubectl --kubeconfig " << server_->kubeconfig_path()
                << " get pods -A -o custom-columns=NAME:.metadata.name,STATUS:.status.phase,NODE:.spec.nodeName,"
                   "GPU-FRACTION:.metadata.annotations.gpu-fraction,GPU-GROUP:.metadata.labels.runai-gpu-group)\n";
    }
  }

  /// Prints `kai-log why` for `pod`; false when kai-log failed.
  bool why(const std::string& pod) {
    std::cout << "  $ kai-log --log-dir " << log_dir_ << " why " << pod << "\n";
    const Ran ran = run(o_.kai_log_bin + " --log-dir " + log_dir_ + " why --limit 4 " + pod);
    std::cout << indented(ran.output);
    if (!ran.ok()) std::cout << "  NOT AS EXPECTED: kai-log why exited " << ran.exit_code << "\n";
    return ran.ok();
  }

  // --------------------------------------------------------------------------------- steps
  bool step_sharing() {
    heading("Step 1: two inference servers share one GPU (gpu-fraction 0.7 and 0.2)");
    if (!apply("step1-fraction-pods.yaml")) return false;
    bool ok = wait_for("both pods to run", [&] { return running("team-a", {"vllm-large", "vllm-small"}); });
    table();
    const Json a = pod("team-a", "vllm-large"), b = pod("team-a", "vllm-small");
    group_1_ = label(a, "runai-gpu-group");
    ok = ok && !group_1_.empty() && group_1_ == label(b, "runai-gpu-group") &&
         a["spec"].value("nodeName", "") == b["spec"].value("nodeName", "");
    std::cout << (ok ? "  OK: one node, one GPU group (" + group_1_ + ")\n"
                     : "  NOT AS EXPECTED: the two pods should share one GPU group\n");
    return ok;
  }

  bool step_memory() {
    heading("Step 2: a notebook asks for 10 GiB of GPU memory (gpu-memory: 10240)");
    if (!apply("step2-memory-pod.yaml")) return false;
    bool ok = wait_for("the notebook to run", [&] { return phase(pod("team-a", "notebook")) == "Running"; });
    table();
    const std::string group = label(pod("team-a", "notebook"), "runai-gpu-group");
    // 0.7 + 0.2 + 0.25 > 1: the notebook cannot join the first GPU and opens a second one.
    ok = ok && !group.empty() && group != group_1_;
    std::cout << (ok ? "  OK: 10 GiB of a 40 GiB GPU is a quarter; it does not fit next to 0.9, so a second GPU\n"
                     : "  NOT AS EXPECTED: the notebook should run on a second shared GPU\n");
    return ok;
  }

  bool step_gang() {
    heading("Step 3: a gang of two 3-GPU workers waits until both fit");
    if (!apply("step3-gang.yaml")) return false;
    bool ok = wait_for("the scheduler to report why the gang waits", [&] {
      return !unschedulable_message(pod("team-a", "train-gang-0")).empty() &&
             phase(pod("team-a", "train-gang-0")) == "Pending" && phase(pod("team-a", "train-gang-1")) == "Pending";
    });
    table();
    std::cout << "  train-gang-0: PodScheduled=False: " << unschedulable_message(pod("team-a", "train-gang-0")) << "\n";
    ok = why("team-a/train-gang") && ok;
    std::cout << "  Deleting the notebook frees its GPU; now both workers fit.\n";
    if (auto s = server_->delete_object("v1", "Pod", "team-a", "notebook"); !s) {
      std::cout << "  cannot delete the notebook: " << s.message() << "\n";
      return false;
    }
    ok = ok &&
         wait_for("both workers to run", [&] { return running("team-a", {"train-gang-0", "train-gang-1"}); });
    // The notebook's GPU group has no pod left: its reservation pod goes and the device is free.
    ok = ok && wait_for("the notebook's reservation pod to be deleted", [&] {
      return pods("kai-resource-reservation").size() == 1;
    });
    table();
    std::cout << (ok ? "  OK: all or nothing\n" : "  NOT AS EXPECTED: the gang should wait, then run together\n");
    return ok;
  }

  bool step_reclaim() {
    heading("Step 4: team-b claims its 4 guaranteed GPUs; queue test is over its quota");
    if (!apply("step4-team-b.yaml")) return false;
    bool ok = wait_for("team-b's two 2-GPU pods to run",
                       [&] { return running("team-b", {"team-b-train-0", "team-b-train-1"}); });
    table();
    const bool inference_kept = running("team-a", {"vllm-large", "vllm-small"});
    ok = ok && inference_kept;
    ok = why("team-a/train-gang-0") && ok;
    std::cout << (ok ? "  OK: reclaim evicted test's preemptible gang (train, priority 50), kept its inference "
                       "pods (priority 125), and bound team-b\n"
                     : "  NOT AS EXPECTED: team-b should run, test's inference pods should stay\n");
    return ok;
  }

  /// The fair shares the log's state gives, through `kai-log snapshot export` and kai-sim (the tools a
  /// user would chain); false when either tool fails or the result has no queues.
  bool fair_shares() {
    heading("Queues: fair shares now (from the event log, through kai-sim)");
    const std::string snapshot = dir_ + "/snapshot.json";
    const Ran exported = run(o_.kai_log_bin + " --log-dir " + log_dir_ + " snapshot export > " + snapshot);
    if (!exported.ok()) {
      std::cout << "  NOT AS EXPECTED: kai-log snapshot export exited " << exported.exit_code << ": "
                << exported.output.substr(0, 300) << "\n";
      return false;
    }
    // Only kai-sim's stdout is its JSON result; its notes and warnings go to stderr.
    const Ran sim_run =
        run(o_.kai_sim_bin + " --snapshot " + snapshot + " --actions '' --format json", false);
    const Json sim = Json::parse(sim_run.output, nullptr, false);
    if (!sim_run.ok() || sim.is_discarded() || !sim.contains("queues") || sim["queues"].empty()) {
      std::cout << "  NOT AS EXPECTED: kai-sim exited " << sim_run.exit_code
                << " without fair shares: " << sim_run.output.substr(0, 300) << "\n";
      return false;
    }
    std::printf("  %-10s %-8s %10s %14s\n", "QUEUE", "PARENT", "GPU-SHARE", "GPU-ALLOCATED");
    for (const auto& q : sim["queues"]) {
      std::printf("  %-10s %-8s %10.2f %14.2f\n", q.value("name", "").c_str(), q.value("parent", "").c_str(),
                  q["fairShare"].value("gpu", 0.0), q["allocated"].value("gpu", 0.0));
    }
    return true;
  }

  /// Counterfactual replay of this walkthrough's log: first with the recorded queues (it must
  /// reproduce what happened), then with team-b guaranteed 2 GPUs instead of 4.
  bool step_counterfactual() {
    heading("Step 5: what if team-b had been guaranteed 2 GPUs? (counterfactual replay of this log)");
    const std::string base = o_.kai_log_bin + " --log-dir " + log_dir_ + " replay ";
    const Ran same = run(base + "--counterfactual --format json", false);
    const Json same_json = Json::parse(same.output, nullptr, false);
    if (!same.ok() || same_json.is_discarded()) {
      std::cout << "  NOT AS EXPECTED: kai-log replay --counterfactual exited " << same.exit_code << "\n";
      return false;
    }
    const int differently = same_json["summary"].value("placedDifferently", -1);
    std::cout << "  With the recorded queues the replay reproduces the walkthrough: " << differently
              << " pods placed differently (node or cycle) out of " << same_json["summary"].value("pods", 0) << "\n";
    const std::string queues = o_.manifest_dir + "/step5-team-b-quota-2.yaml";
    std::cout << "  $ kai-log --log-dir " << log_dir_ << " replay --queues step5-team-b-quota-2.yaml\n";
    const Ran table = run(base + "--queues " + queues, false);
    std::cout << indented(table.output);
    const Ran answer = run(base + "--queues " + queues + " --format json", false);
    const Json j = Json::parse(answer.output, nullptr, false);
    if (!table.ok() || !answer.ok() || j.is_discarded()) {
      std::cout << "  NOT AS EXPECTED: kai-log replay --queues exited " << answer.exit_code << "\n";
      return false;
    }
    for (const auto& q : j["queues"]) {
      const Json& rec = q["recorded"];
      const Json& cf = q["counterfactual"];
      std::cout << "  " << q.value("queue", "") << ": " << rec.value("bound", 0) << " pods bound and "
                << rec.value("evictions", 0) << " evicted; with team-b at 2 GPUs " << cf.value("bound", 0)
                << " bound and " << cf.value("evictions", 0) << " evicted\n";
    }
    const bool ok = differently == 0;
    std::cout << (ok ? "  OK: the same log answers what happened and what would have\n"
                     : "  NOT AS EXPECTED: the replay with the recorded queues should place every pod as recorded\n");
    return ok;
  }

  /// What-if on the daemon's log: a 4-GPU job for queue test, nothing created.
  bool step_what_if() {
    heading("Step 6: if team-a submitted a 4-GPU job to queue test now, where and when would it run?");
    const std::string workload = o_.manifest_dir + "/step6-what-if-job.yaml";
    std::cout << "  $ kai-sim --log " << log_dir_ << " --what-if step6-what-if-job.yaml\n";
    const Ran answer = run(o_.kai_sim_bin + " --log " + log_dir_ + " --what-if " + workload);
    std::cout << indented(answer.output);
    const bool created = !pod("team-a", "finetune").is_null();
    const bool ok = answer.ok() && !answer.output.empty() && !created;
    std::cout << (ok ? "  OK: answered from the log with the daemon's cycle; nothing was created\n"
                     : "  NOT AS EXPECTED: kai-sim --what-if exited " + std::to_string(answer.exit_code) + "\n");
    return ok;
  }

  static std::string indented(const std::string& text) {
    std::string out;
    size_t start = 0;
    while (start < text.size()) {
      size_t end = text.find('\n', start);
      if (end == std::string::npos) end = text.size();
      out += "    " + text.substr(start, end - start) + "\n";
      start = end + 1;
    }
    return out;
  }

  void keep_running() {
    std::cout << "\n--keep-running: the API server and kai-scheduler keep running; Ctrl-C ends the demo.\n";
    kai::tools::StopSignals().wait();
  }

  Options o_;
  std::unique_ptr<kai::apiserver::ApiServer> server_;
  std::string dir_;
  std::string log_dir_;
  std::string scheduler_log_;
  pid_t scheduler_pid_ = -1;
  bool kubectl_ = false;
  std::string group_1_;
};

}  // namespace

static int run_tool(int argc, char** argv) {
  Options o;
  const fs::path tools = fs::absolute(fs::path(argv[0])).parent_path().parent_path();
  o.scheduler_bin = (tools / "kai-scheduler" / "kai-scheduler").string();
  o.kai_log_bin = (tools / "kai-log" / "kai-log").string();
  o.kai_sim_bin = (tools / "kai-sim" / "kai-sim").string();
  CLI::App app{"kai-demo: KAI's GPU-sharing walkthrough against an embedded API server"};
  app.add_option("--scheduler-bin", o.scheduler_bin, "the kai-scheduler binary")->capture_default_str();
  app.add_option("--kai-log-bin", o.kai_log_bin, "the kai-log binary")->capture_default_str();
  app.add_option("--kai-sim-bin", o.kai_sim_bin, "the kai-sim binary")->capture_default_str();
  app.add_option("--crd-dir", o.crd_dir, "the CRDs the API server serves")->capture_default_str();
  app.add_option("--manifest-dir", o.manifest_dir, "the cluster and the steps' workloads")->capture_default_str();
  app.add_option("--step-timeout", o.step_timeout_s, "seconds each step may wait")->capture_default_str();
  app.add_flag("--keep-running", o.keep_running, "keep the cluster and scheduler running at the end (Ctrl-C stops)");
  CLI11_PARSE(app, argc, argv);
  Demo demo(o);
  return demo.run_walkthrough();
}

int main(int argc, char** argv) {
  return kai::tools::guarded_main("kai-demo", [&] { return run_tool(argc, argv); });
}
