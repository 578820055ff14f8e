// kai-scheduler: the daemon. `kai-scheduler --kubeconfig K --log-dir D` watches the cluster, schedules
// every pod with `schedulerName: kai-scheduler` as KAI does, binds, and logs every watch event and
// decision. Stops on SIGINT / SIGTERM.

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <csignal>
#include <iostream>

#include "actors/daemon/daemon.hpp"
#include "k8s/model/time.hpp"

int main(int argc, char** argv) {
  kai::daemon::DaemonOptions o;
  std::string period = "1s";
  std::string listen = ":8080";
  std::string reservation_timeout = "40s";
  std::string log_level = "info";
  bool leader_elect = false;
  std::string lease_namespace = "kai-scheduler";
  bool gpu_sharing = true;
  CLI::App app{"kai-scheduler: a KAI-compatible GPU scheduler with an event log"};
  app.add_option("--kubeconfig", o.kubeconfig, "kubeconfig file (default: $KUBECONFIG, in-cluster, ~/.kube/config)");
  app.add_option("--log-dir", o.log_dir, "directory of the event log (RocksDB)")->required();
  app.add_option("--scheduler-name", o.scheduler_name, "schedule pods that name this scheduler")->capture_default_str();
  app.add_option("--config", o.config_path, "KAI scheduler configuration (YAML or JSON); default: KAI's");
  app.add_option("--qps", o.qps, "API requests per second")->capture_default_str();
  app.add_option("--burst", o.burst, "API requests allowed at once above --qps")->capture_default_str();
  app.add_option("--schedule-period", period, "time between cycles (Go duration, >= 10ms)")->capture_default_str();
  app.add_option("--listen-address", listen, "metrics and health endpoint, \":port\" (\":0\" = off)")->capture_default_str();
  app.add_option("--binder-workers", o.binder_workers, "API calls the binder makes at once")->capture_default_str();
  app.add_option("--reservation-image", o.reservation_image, "image of the GPU reservation pods")->capture_default_str();
  app.add_option("--reservation-runtime-class", o.reservation_runtime_class, "runtimeClassName of reservation pods");
  app.add_option("--resource-reservation-allocation-timeout", reservation_timeout,
                 "how long a reservation pod may take to report its GPU")->capture_default_str();
  app.add_option("--log-level", log_level, "trace, debug, info, warn, error")->capture_default_str();
  app.add_flag("--leader-elect", leader_elect, "leader election (issue 9: not implemented yet, refused)");
  app.add_option("--lease-namespace", lease_namespace, "namespace of the leader-election Lease");
  app.add_flag("!--no-gpu-sharing,--gpu-sharing{true}", gpu_sharing,
               "GPU sharing; 'false' is enforced at admission (the scheduler always understands shared GPUs)");
  CLI11_PARSE(app, argc, argv);

  auto logger = spdlog::stderr_color_mt("kai-scheduler");
  spdlog::set_default_logger(logger);
  spdlog::set_level(spdlog::level::from_str(log_level));
  auto ns = kai::model::parse_go_duration_ns(period);
  if (!ns.is_ok()) {
    spdlog::critical("--schedule-period {}: {}", period, ns.message());
    return 2;
  }
  o.schedule_period = std::chrono::milliseconds(ns.value() / 1000000);
  auto rt = kai::model::parse_go_duration_ns(reservation_timeout);
  if (!rt.is_ok()) {
    spdlog::critical("--resource-reservation-allocation-timeout {}: {}", reservation_timeout, rt.message());
    return 2;
  }
  o.reservation_timeout = std::chrono::milliseconds(rt.value() / 1000000);
  const size_t colon = listen.rfind(':');
  const std::string port = colon == std::string::npos ? listen : listen.substr(colon + 1);
  o.metrics_port = static_cast<uint16_t>(std::atoi(port.c_str()));
  if (leader_elect) {
    spdlog::critical("--leader-elect: leader election is not wired into the daemon yet (issue 9); run one replica");
    return 2;
  }

  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  kai::daemon::Daemon daemon(o);
  if (auto s = daemon.start(); !s) {
    spdlog::critical("{}", s.message());
    return 1;
  }
  spdlog::info("kai-scheduler running: scheduler name {}, period {} ms, event log {}", o.scheduler_name,
               o.schedule_period.count(), o.log_dir);
  int sig = 0;
  sigwait(&signals, &sig);
  spdlog::info("stopping on signal {}", sig);
  daemon.stop();
  return 0;
}
