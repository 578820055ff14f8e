#pragma once
// An in-process kai-apiserver (kubelet stand-in on) and helpers to create objects and wait for the
// daemon's effects, for the end-to-end tests of kai-scheduler.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>

#include "actors/daemon/daemon.hpp"
#include "k8s/apiserver/api_server.hpp"
#include "storage/event_log.hpp"
#include "tests/daemon/daemon_harness.hpp"
#include "tools/kai-log/replay.hpp"

extern "C" char** environ;

namespace kai::e2e {

using Json = nlohmann::json;
using namespace std::chrono_literals;

class Cluster {
 public:
  Cluster() {
    apiserver::ServerOptions o = test_server_options();
    o.kubelet_delay = 20ms;
    o.bookmark_interval = 200ms;
    server = std::make_unique<apiserver::ApiServer>(o);
    auto s = server->start();
    EXPECT_TRUE(s.is_ok()) << s.message();
    dir = std::filesystem::path(server->kubeconfig_path()).parent_path().string();
  }

  /// An in-process daemon against this cluster: a 50 ms period (and status pacing to match), no
  /// metrics port, its own log.
  daemon::DaemonOptions daemon_options() const {
    daemon::DaemonOptions o = in_process_daemon_options(server->kubeconfig_path(), dir + "/log");
    o.schedule_period = std::chrono::milliseconds(50);
    // The default pacing of the status writes, scaled down with the period.
    o.status_pacing = {std::chrono::milliseconds(50), std::chrono::milliseconds(100), std::chrono::milliseconds(250)};
    o.reservation_timeout = std::chrono::milliseconds(5000);
    return o;
  }

  /// A kai-scheduler process against this cluster with `flags`; its stderr appended to `stderr_path`.
  pid_t spawn_scheduler(const std::vector<std::string>& flags, const std::string& stderr_path) const {
    std::vector<std::string> args = {KAI_SCHEDULER_BIN, "--kubeconfig", server->kubeconfig_path(),
                                     "--listen-address", ":0"};
    args.insert(args.end(), flags.begin(), flags.end());
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 2, stderr_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    pid_t pid = -1;
    EXPECT_EQ(posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ), 0);
    posix_spawn_file_actions_destroy(&actions);
    return pid;
  }

  void create(const Json& object) {
    auto r = server->create_object(object.dump());
    ASSERT_TRUE(r.is_ok()) << object.dump() << ": " << r.message();
  }

  /// Namespace team-a, node n1 with `gpus` GPUs, queues default -> test: the smallest useful cluster.
  void small(int gpus) {
    namespace_("team-a");
    node("n1", gpus);
    test_queues();
  }

  /// Queue test under queue default, neither with a GPU quota: where most tests put their pods.
  void test_queues() {
    queue("default", "", -1);
    queue("test", "default", -1);
  }

  /// Binds take `delay` each on the server, so that many are in flight at once.
  void slow_binds(std::chrono::milliseconds delay) {
    apiserver::Faults slow;
    slow.match = "/binding";
    slow.delay = delay;
    server->set_faults(slow);
  }

  void namespace_(const std::string& name) {
    create({{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", name}}}});
  }

  void node(const std::string& name, int gpus, const std::string& cpu = "32") {
    create(
        {{"apiVersion", "v1"},
         {"kind", "Node"},
         // kubernetes.io/hostname as the kubelet registers it on every node.
         {"metadata", {{"name", name}, {"labels", {{"nvidia.com/gpu.memory", "40960"}, {"kubernetes.io/hostname", name}}}}},
         {"status",
          {{"allocatable",
            {{"cpu", cpu}, {"memory", "256Gi"}, {"pods", "110"}, {"nvidia.com/gpu", std::to_string(gpus)}}},
           {"capacity",
            {{"cpu", cpu}, {"memory", "256Gi"}, {"pods", "110"}, {"nvidia.com/gpu", std::to_string(gpus)}}},
           {"conditions", Json::array({{{"type", "Ready"}, {"status", "True"}}})}}}});
  }

  void queue(const std::string& name, const std::string& parent, double gpu_quota, int priority = 100) {
    Json spec = {{"resources",
                  {{"gpu", {{"quota", gpu_quota}, {"limit", -1}, {"overQuotaWeight", 1}}},
                   {"cpu", {{"quota", -1}, {"limit", -1}, {"overQuotaWeight", 1}}},
                   {"memory", {{"quota", -1}, {"limit", -1}, {"overQuotaWeight", 1}}}}},
                 {"priority", priority}};
    if (!parent.empty()) spec["parentQueue"] = parent;
    create({{"apiVersion", "scheduling.run.ai/v2"},
            {"kind", "Queue"},
            {"metadata", {{"name", name}}},
            {"spec", spec}});
  }

  void pod_group(const std::string& ns, const std::string& name, const std::string& queue, int min_member) {
    create({{"apiVersion", "scheduling.run.ai/v2alpha2"},
            {"kind", "PodGroup"},
            {"metadata", {{"name", name}, {"namespace", ns}}},
            {"spec", {{"minMember", min_member}, {"queue", queue}}}});
  }

  void priority_class(const std::string& name, int value) {
    create({{"apiVersion", "scheduling.k8s.io/v1"},
            {"kind", "PriorityClass"},
            {"metadata", {{"name", name}}},
            {"value", value}});
  }

  /// A pod of this scheduler in `queue` asking for `gpus` whole GPUs (0: CPU only).
  Json pod(const std::string& ns, const std::string& name, const std::string& queue, int gpus,
           const std::string& priority_class = "", Json annotations = Json::object()) {
    Json resources = gpus > 0 ? Json{{"limits", {{"nvidia.com/gpu", std::to_string(gpus)}}}}
                              : Json{{"requests", {{"cpu", "1"}}}};
    Json p = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata",
               {{"name", name},
                {"namespace", ns},
                {"labels", {{"kai.scheduler/queue", queue}}},
                {"annotations", annotations}}},
              {"spec",
               {{"schedulerName", "kai-scheduler"},
                {"containers",
                 Json::array({{{"name", "main"}, {"image", "busybox"}, {"resources", resources}}})}}}};
    if (!priority_class.empty()) p["spec"]["priorityClassName"] = priority_class;
    return p;
  }

  Json pods(const std::string& ns = "") const {
    auto list = server->list_objects("v1", "Pod", ns);
    return list.is_ok() ? Json::parse(list.value())["items"] : Json::array();
  }

  Json get_pod(const std::string& ns, const std::string& name) const {
    for (const auto& p : pods(ns)) {
      if (p["metadata"]["name"] == name) return p;
    }
    return nullptr;
  }

  static std::string node_of(const Json& p) { return p.is_null() ? "" : p["spec"].value("nodeName", ""); }

  static std::string condition_message(const Json& p) {
    if (p.is_null()) return "";
    for (const auto& c : p["status"].value("conditions", Json::array())) {
      if (c.value("type", "") == "PodScheduled" && c.value("status", "") == "False")
        return c.value("message", "");
    }
    return "";
  }

  /// SIGTERM and wait for a scheduler started with spawn_scheduler; one that has not exited after
  /// `timeout` is a failure (with the end of its log), killed so that the test goes on.
  static void stop_scheduler(pid_t pid, const std::string& stderr_path, std::chrono::seconds timeout = 30s) {
    ::kill(pid, SIGTERM);
    const auto until = std::chrono::steady_clock::now() + timeout;
    int status = 0;
    while (::waitpid(pid, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > until) {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, &status, 0);
        std::ifstream in(stderr_path);
        std::stringstream text;
        text << in.rdbuf();
        const std::string log = text.str();
        ADD_FAILURE() << "kai-scheduler did not stop within " << timeout.count()
                      << " s of SIGTERM; its log ends:\n"
                      << log.substr(log.size() > 4000 ? log.size() - 4000 : 0);
        return;
      }
      std::this_thread::sleep_for(20ms);
    }
  }

  /// Polls `done` every 50 ms for up to `timeout`.
  static bool eventually(const std::function<bool()>& done, std::chrono::seconds timeout = 30s) {
    const auto until = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < until) {
      if (done()) return true;
      std::this_thread::sleep_for(50ms);
    }
    return done();
  }

  std::unique_ptr<apiserver::ApiServer> server;
  std::string dir;
};

/// Calls `f` with every event of the log at `log_dir` (opened read-only), in order.
inline void for_each_event(const std::string& log_dir, const std::function<void(const events::Event&)>& f) {
  storage::EventLogOptions o;
  o.read_only = true;
  auto log = storage::EventLog::open(log_dir, o);
  ASSERT_TRUE(log.is_ok()) << log_dir << ": " << log.message();
  ASSERT_TRUE(log.value()->read(1, UINT64_MAX, [&](uint64_t seq, const storage::Result<events::Event>& e) {
    EXPECT_TRUE(e.is_ok()) << seq << ": " << e.message();
    if (e.is_ok()) f(e.value());
    return true;
  }));
}

/// `kai-log replay` of a stopped daemon's log: every recorded cycle recomputed gives its records
/// exactly (docs/one-truth.md). Returns replay's summary line. `require_cycles`: a log without a
/// cycle is a failure (the test meant to compare something).
inline std::string expect_replay_matches(const std::string& log_dir, bool require_cycles = true) {
  storage::EventLogOptions o;
  o.read_only = true;
  auto log = storage::EventLog::open(log_dir, o);
  EXPECT_TRUE(log.is_ok()) << log_dir << ": " << log.message();
  if (!log.is_ok()) return "";
  std::ostringstream out, err;
  const int code = kailog::replay(*log.value(), {}, out, err);
  EXPECT_EQ(code, 0) << out.str().substr(0, 6000) << err.str();
  EXPECT_NE(out.str().find(" 0 differences"), std::string::npos) << out.str().substr(0, 6000);
  if (require_cycles) {
    EXPECT_EQ(out.str().find("replayed 0 cycles"), std::string::npos) << "nothing was compared: " << out.str();
  }
  return out.str();
}

/// Runs a shell command and returns its standard output.
inline std::string run_command(const std::string& cmd) {
  std::string out;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) return "popen failed";
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  ::pclose(p);
  return out;
}

#ifdef KAI_LOG_BIN
/// Runs `kai-log <args>` and returns what it printed (stdout and stderr).
inline std::string run_kai_log(const std::string& args) {
  return run_command(std::string(KAI_LOG_BIN) + " " + args + " 2>&1");
}
#endif

/// A test with one in-process daemon against a fresh cluster; like every daemon end-to-end test, it
/// ends with replay of the daemon's log.
class DaemonTest : public ::testing::Test {
 protected:
  void TearDown() override {
    if (!daemon_) return;
    daemon_->stop();
    expect_replay_matches(cluster_.dir + "/log", require_cycles_);
  }
  /// Starts the daemon with the cluster's options, changed by `adjust`.
  void start_daemon(const std::function<void(daemon::DaemonOptions&)>& adjust) {
    daemon::DaemonOptions o = cluster_.daemon_options();
    if (adjust) adjust(o);
    daemon_ = std::make_unique<daemon::Daemon>(o);
    auto s = daemon_->start();
    ASSERT_TRUE(s.is_ok()) << s.message();
  }
  /// Stops the daemon and replays its log, expecting 0 differences (TearDown then has nothing left
  /// to do); the log stays readable for the test.
  std::string stop_and_replay() {
    daemon_->stop();
    daemon_.reset();
    return expect_replay_matches(cluster_.dir + "/log", require_cycles_);
  }
  bool bound(const std::string& ns, const std::string& name) {
    return !Cluster::node_of(cluster_.get_pod(ns, name)).empty();
  }

  Cluster cluster_;
  std::unique_ptr<daemon::Daemon> daemon_;
  /// Whether a log without a recorded cycle fails the replay at the end (tests of the daemon's
  /// operations may stop before one ran).
  bool require_cycles_ = true;
};

}  // namespace kai::e2e
