#pragma once
// The kai-scheduler daemon: reflectors -> the event log -> the projected cluster state -> a scheduling
// cycle every period -> decisions logged (fsync) -> the binder -> outcomes logged. CAF runs the
// scheduler actor; this header stays free of CAF so that main.cpp and tests compile fast.

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "k8s/model/status.hpp"

namespace kai::daemon {

/// Command-line settings, with KAI's defaults (contracts.md §3).
struct DaemonOptions {
  std::string kubeconfig;  ///< "" = $KUBECONFIG, in-cluster, ~/.kube/config
  std::string log_dir;     ///< the event log (RocksDB); required
  std::string scheduler_name = "kai-scheduler";
  std::string config_path;  ///< KAI's scheduler configuration (YAML/JSON); "" = KAI's defaults
  double qps = 500;
  int burst = 1000;
  std::chrono::milliseconds schedule_period{1000};
  /// Metrics / health port (KAI's --listen-address :8080); 0 = off.
  uint16_t metrics_port = 8080;
  int binder_workers = 4;
  /// Decisions the watch has not confirmed after this long are forgotten (the cycle decides again).
  std::chrono::seconds in_flight_timeout{60};
  /// Reservation pods' image and runtime class (KAI's resourceReservation settings).
  std::string reservation_image = "ghcr.io/nvidia/kai-scheduler/resource-reservation:latest";
  std::string reservation_runtime_class;
  std::chrono::milliseconds reservation_timeout{40000};
};

class Daemon {
 public:
  explicit Daemon(DaemonOptions options);
  ~Daemon();
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;

  /// Opens the log, connects, starts the reflectors and the scheduler actor.
  model::Status start();
  /// Stops everything: no new decisions, in-flight binder calls finish, the log is closed.
  void stop();
  /// True once every kind was listed.
  bool synced() const;
  /// Cycles run so far.
  uint64_t cycles() const;
  /// The metrics/health port actually bound (0 when off).
  uint16_t metrics_port() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kai::daemon
