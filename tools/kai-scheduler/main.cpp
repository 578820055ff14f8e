// kai-scheduler: the daemon. `kai-scheduler --kubeconfig K --log-dir D` watches the cluster, schedules
// every pod with `schedulerName: kai-scheduler` as KAI does, binds, and logs every watch event and
// decision. Stops on SIGINT / SIGTERM.

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <csignal>
#include <iostream>
#include <tuple>

#include "actors/daemon/daemon.hpp"
#include "actors/scheduler/core/session_flags.hpp"
#include "k8s/model/quantity.hpp"
#include "k8s/model/time.hpp"
#include "tools/common/guarded_main.hpp"
#include "tools/common/huge_pages.hpp"
#include "tools/common/resident_malloc.hpp"
#include "tools/common/stop_signals.hpp"

static int run_tool(int argc, char** argv) {
  kai::daemon::DaemonOptions o;
  std::string period = "1s";
  std::string listen = ":8080";
  std::string reservation_timeout = "40s";
  std::string log_level = "info";
  std::string lease_duration = "15s", renew_deadline = "10s", retry_period = "2s";
  bool gpu_sharing = true;
  std::string snapshot_period = "10m", retention_age = "168h", retention_size = "20Gi";
  std::string min_free_disk = "256Mi";
  std::string staleness_grace = "60s";
  CLI::App app{"kai-scheduler: a KAI-compatible GPU scheduler with an event log"};
  app.add_option("--kubeconfig", o.kubeconfig,
                 "kubeconfig file (default: $KUBECONFIG, in-cluster, ~/.kube/config)");
  app.add_option("--log-dir", o.log_dir, "directory of the event log (RocksDB)")->required();
  app.add_option("--scheduler-name", o.scheduler_name, "schedule pods that name this scheduler")
      ->capture_default_str();
  app.add_option("--config", o.config_path, "KAI scheduler configuration (YAML or JSON); default: KAI's");
  app.add_option("--qps", o.qps, "API requests per second")->capture_default_str();
  app.add_option("--burst", o.burst, "API requests allowed at once above --qps")->capture_default_str();
  app.add_option("--schedule-period", period, "time between cycles (Go duration, >= 10ms)")
      ->capture_default_str();
  app.add_option("--listen-address", listen, "metrics and health endpoint, \":port\" (\":0\" = off)")
      ->capture_default_str();
  app.add_option("--binder-workers", o.binder_workers, "API calls the binder makes at once")
      ->capture_default_str();
  app.add_option("--reservation-image", o.reservation_image, "image of the GPU reservation pods")
      ->capture_default_str();
  app.add_option("--reservation-runtime-class", o.reservation_runtime_class,
                 "runtimeClassName of reservation pods");
  app.add_option("--resource-reservation-allocation-timeout", reservation_timeout,
                 "how long a reservation pod may take to report its GPU")
      ->capture_default_str();
  app.add_option("--default-staleness-grace-period", staleness_grace,
                 "how long a gang may run below minMember before the rest is evicted (negative: never)")
      ->capture_default_str();
  app.add_flag("--search-legacy-pg{true}", o.grouper.search_legacy_pod_groups,
               "a Job's pod keeps the per-pod PodGroup pg-<pod>-<job uid> an earlier KAI made, where it exists "
               "(default true; =false turns it off)");
  app.add_flag("--knative-gang-schedule{true}", o.grouper.knative_gang_schedule,
               "schedule a Knative revision as one gang (default true; =false: one group per pod)");
  app.add_flag("--keep-sessions{true}", o.keep_sessions,
               "start a cycle from the last cycle's session when only pods and PodGroups changed (default "
               "true; =false builds the session every cycle: the same decisions, more CPU)");
  std::string pod_group_objects = "all";
  app.add_option("--pod-group-objects", pod_group_objects,
                 "which groups get PodGroup objects and pod-group-name annotations: all (as KAI), multi-pod "
                 "(not groups of one pod: two API calls fewer per such pod), none")
      ->check(CLI::IsMember({"all", "multi-pod", "none"}))
      ->capture_default_str();
  app.add_option("--log-level", log_level, "trace (debug plus every watch event), debug, info, warn, error")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error"}))
      ->capture_default_str();
  app.add_flag("--expose-snapshot", o.expose_snapshot,
               "serve /get-snapshot (every pod, unauthenticated) to other hosts, not only on localhost");
  app.add_flag("--leader-elect", o.leader_elect,
               "leader election on a Lease (hot standby while not leading)");
  app.add_option("--lease-namespace,--leader-elect-resource-namespace", o.lease_namespace,
                 "namespace of the leader-election Lease (must exist)")
      ->capture_default_str();
  app.add_option("--leader-elect-resource-name", o.lease_name, "name of the Lease")->capture_default_str();
  app.add_option("--leader-elect-identity", o.identity,
                 "this replica in the Lease (default: $POD_NAME, host name)");
  app.add_option("--leader-elect-lease-duration", lease_duration, "how long a lease is valid without renewal")
      ->capture_default_str();
  app.add_option("--leader-elect-renew-deadline", renew_deadline,
                 "a leader that has not renewed for this long stops acting")
      ->capture_default_str();
  app.add_option("--leader-elect-retry-period", retry_period,
                 "time between attempts to take or renew the lease")
      ->capture_default_str();
  app.add_flag(
      "!--no-gpu-sharing,--gpu-sharing{true}", gpu_sharing,
      "GPU sharing; 'false' is enforced at admission (the scheduler always understands shared GPUs)");
  app.add_option("--webhook-port", o.webhook_port, "HTTPS port of the admission webhooks (0 = not served)")
      ->capture_default_str();
  app.add_option(
      "--webhook-cert-file", o.webhook_cert_file,
      "webhook serving certificate (default: the Secret kai-scheduler-webhook-cert, made if missing)");
  app.add_option("--webhook-key-file", o.webhook_key_file, "webhook serving key");
  app.add_option("--webhook-namespace", o.webhook_namespace, "namespace of the webhook Secret and Service")
      ->capture_default_str();
  app.add_option("--gpu-pod-runtime-class", o.admission.gpu_pod_runtime_class,
                 "runtimeClassName the webhook gives GPU pods that name none (\"\" = leave them)")
      ->capture_default_str();
  app.add_option("--early-cycle-changes", o.early_cycle_changes,
                 "start a cycle before --schedule-period is up after this many watch changes (0 = never)")
      ->capture_default_str();
  app.add_option("--snapshot-events", o.snapshots.every_events,
                 "snapshot the state after this many logged events (0 = only by time)")
      ->capture_default_str();
  app.add_option("--snapshot-period", snapshot_period,
                 "snapshot the state after this long with new events (Go duration, 0 = only by count)")
      ->capture_default_str();
  app.add_option("--retention-age", retention_age,
                 "delete logged events older than this, never past the oldest kept snapshot (0 = keep)")
      ->capture_default_str();
  app.add_option("--retention-size", retention_size,
                 "delete the oldest logged events while the log is larger than this (quantity, 0 = no limit)")
      ->capture_default_str();
  app.add_option("--min-free-disk", min_free_disk,
                 "free space the event log's file system must keep (quantity); below it nothing is decided and "
                 "/readyz answers 503 \"disk full\" until space returns (0 = no floor)")
      ->capture_default_str();
  app.add_option("--snapshots-kept", o.snapshots.retention.keep_snapshots,
                 "snapshots kept, newest first (>= 1)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);
  o.admission.gpu_sharing = gpu_sharing;
  o.pod_group_objects = kai::core::parse_pod_group_objects(pod_group_objects).value();

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
  auto grace = kai::model::parse_go_duration_ns(staleness_grace);
  if (!grace.is_ok()) {
    spdlog::critical("--default-staleness-grace-period {}: {}", staleness_grace, grace.message());
    return 2;
  }
  o.stale_grace_period = std::chrono::seconds(grace.value() / 1000000000);
  const size_t colon = listen.rfind(':');
  const std::string port = colon == std::string::npos ? listen : listen.substr(colon + 1);
  o.metrics_port = static_cast<uint16_t>(std::atoi(port.c_str()));
  for (auto [flag, text, target] :
       {std::tuple{"--leader-elect-lease-duration", &lease_duration, &o.lease_duration},
        std::tuple{"--leader-elect-renew-deadline", &renew_deadline, &o.renew_deadline},
        std::tuple{"--leader-elect-retry-period", &retry_period, &o.retry_period}}) {
    auto d = kai::model::parse_go_duration_ns(*text);
    if (!d.is_ok() || d.value() <= 0) {
      spdlog::critical("{} {}: {}", flag, *text, d.is_ok() ? "must be positive" : d.message());
      return 2;
    }
    *target = std::chrono::milliseconds(d.value() / 1000000);
  }

  for (auto [flag, text, target] :
       {std::tuple{"--snapshot-period", &snapshot_period, &o.snapshots.every},
        std::tuple{"--retention-age", &retention_age, &o.snapshots.retention.max_age}}) {
    auto d = kai::model::parse_go_duration_ns(*text);
    if (!d.is_ok() || d.value() < 0) {
      spdlog::critical("{} {}: {}", flag, *text, d.is_ok() ? "must not be negative" : d.message());
      return 2;
    }
    *target = std::chrono::seconds(d.value() / 1000000000);
  }
  auto size = kai::model::parse_quantity_milli(retention_size);
  if (!size.is_ok() || size.value() < 0) {
    spdlog::critical("--retention-size {}: {}", retention_size,
                     size.is_ok() ? "must not be negative" : size.message());
    return 2;
  }
  o.snapshots.retention.max_bytes = static_cast<uint64_t>(size.value() / 1000);
  auto floor = kai::model::parse_quantity_milli(min_free_disk);
  if (!floor.is_ok() || floor.value() < 0) {
    spdlog::critical("--min-free-disk {}: {}", min_free_disk, floor.is_ok() ? "must not be negative" : floor.message());
    return 2;
  }
  o.min_free_disk = static_cast<uint64_t>(floor.value() / 1000);

  const kai::tools::StopSignals stop_signals;

  kai::daemon::Daemon daemon(o);
  if (auto s = daemon.start(); !s) {
    spdlog::critical("{}", s.message());
    return 1;
  }
  spdlog::info("kai-scheduler running: scheduler name {}, period {} ms, event log {}", o.scheduler_name,
               o.schedule_period.count(), o.log_dir);
  spdlog::info("stopping on signal {}", stop_signals.wait());
  daemon.stop();
  return 0;
}

int main(int argc, char** argv) {
  kai::tools::run_with_huge_pages(argv);
  kai::tools::keep_resident_size_low();
  return kai::tools::guarded_main("kai-scheduler", [&] { return run_tool(argc, argv); });
}
