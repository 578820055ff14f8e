#pragma once
// The kai-scheduler daemon: reflectors -> the event log -> the projected cluster state -> a scheduling
// cycle every period -> decisions logged (fsync) -> the binder -> outcomes logged. CAF runs the
// scheduler actor; this header stays free of CAF so that main.cpp and tests compile fast.

#include <boost/core/noncopyable.hpp>
#include <chrono>
#include <functional>
#include <optional>
#include <cstdint>
#include <memory>
#include <string>

#include "actors/daemon/snapshotter.hpp"
#include "actors/daemon/status_pacing.hpp"
#include "actors/scheduler/core/pod_group_objects_flag.hpp"
#include "k8s/admission/admission.hpp"
#include "k8s/model/status.hpp"

namespace kai::daemon {

/// Command-line settings, with KAI's defaults (docs/configuration.md "Defaults").
struct DaemonOptions {
  std::string kubeconfig;  ///< "" = $KUBECONFIG, in-cluster, ~/.kube/config
  std::string log_dir;     ///< the event log (RocksDB); required
  std::string scheduler_name = "kai-scheduler";
  std::string config_path;  ///< KAI's scheduler configuration (YAML/JSON); "" = KAI's defaults
  double qps = 1000;
  int burst = 2000;
  std::chrono::milliseconds schedule_period{1000};
  /// How the PodGroup and Queue status writes are paced (status_pacing.hpp). Default: 1 s settle, 2 s
  /// per PodGroup, 5 s per Queue.
  StatusPacing status_pacing;
  /// A cycle starts before its period is up once this many objects were added or deleted since the
  /// last one (a burst of new pods waits less; updates do not count). Default: 500; 0 = only by period.
  uint64_t early_cycle_changes = 500;
  /// Metrics / health port (KAI's --listen-address :8080); 0 = off.
  uint16_t metrics_port = 8080;
  /// Answer /get-snapshot (every pod, unauthenticated) on the metrics port to any peer. Default: false
  /// (loopback peers only: this host, `kubectl port-forward`).
  bool expose_snapshot = false;
  int binder_workers = 8;
  /// A bind or eviction not started this long after its decision is cancelled by the binder, which
  /// logs the outcome, so that the pod may be decided again. 0 = twice `reservation_timeout`.
  /// Default: 0.
  std::chrono::milliseconds bind_cap{0};
  /// How long a gang may run below minMember before the rest is evicted (KAI's
  /// --default-staleness-grace-period); negative = never. Default: 60 s.
  std::chrono::seconds stale_grace_period{60};
  /// Which groups get PodGroup objects and pod annotations (--pod-group-objects: all, as KAI;
  /// multi-pod: not the one-pod groups; none). Default: all.
  core::PodGroupObjects pod_group_objects = core::PodGroupObjects::kAll;
  /// KAI's pod grouper flags --search-legacy-pg and --knative-gang-schedule. Default: both on.
  core::GrouperFlags grouper;
  /// --keep-sessions: a cycle whose cut changed only some pods and PodGroups starts from the last
  /// cycle's session (core/session_keeper.hpp) instead of building one; false builds every cycle,
  /// with the same decisions, more slowly. Default: true.
  bool keep_sessions = true;
  /// Tests only: each cycle's `now` (Unix seconds) from this clock instead of the wall clock, so a
  /// test can compare the daemon's cycles with kai-sim --now. Default: unset.
  std::function<int64_t()> test_clock;
  /// Tests only: every cycle's seed (kai-sim --seed) instead of one derived from the cycle. Default:
  /// unset.
  std::optional<uint64_t> test_seed;
  /// Tests only: a cycle runs only when every decision of the earlier ones is reported by the binder
  /// and shows on the watch as done (bound pods running, evicted pods gone), as kai-sim --rounds
  /// applies a round before the next. Default: false.
  bool lockstep = false;
  /// Reservation pods' image and runtime class (KAI's resourceReservation settings).
  std::string reservation_image = "ghcr.io/nvidia/kai-scheduler/resource-reservation:latest";
  std::string reservation_runtime_class;
  std::chrono::milliseconds reservation_timeout{40000};
  /// HTTPS port of the admission webhooks (deploy/ uses 9443). Default: 0 (not served).
  uint16_t webhook_port = 0;
  /// Serving certificate and key (PEM files). Both "": the Secret kai-scheduler-webhook-cert in
  /// `webhook_namespace`, made by the first replica, and the caBundle of the scheduler's two webhook
  /// configurations set to it (no cert-manager needed).
  std::string webhook_cert_file;
  std::string webhook_key_file;
  std::string webhook_namespace = "kai-scheduler";
  /// What the webhooks enforce (KAI's global.gpuSharing, the GPU pods' runtime class).
  admission::AdmissionOptions admission;
  /// Leader election on a coordination.k8s.io/v1 Lease. Default: off (docs/configuration.md "Defaults"); deploy/
  /// turns it on for its two replicas. A standby keeps watching and logging (hot standby) and
  /// schedules within one cycle of taking the lease.
  bool leader_elect = false;
  std::string lease_namespace = "kai-scheduler";  ///< Must exist: a missing one is a fatal error.
  std::string lease_name = "kai-scheduler";
  std::string identity;  ///< This replica in the Lease; "" = $POD_NAME, else the host name.
  /// KAI's defaults (controller-runtime): 15 s / 10 s / 2 s.
  std::chrono::milliseconds lease_duration{15000};
  std::chrono::milliseconds renew_deadline{10000};
  std::chrono::milliseconds retry_period{2000};
  /// State snapshots of the event log and its retention (restart = newest snapshot + the log after it).
  SnapshotOptions snapshots;
  /// Free bytes the event log's file system must keep (--min-free-disk). Below it nothing is decided,
  /// /readyz answers 503 "disk full", endpoints and watches go on, and the daemon resumes by itself
  /// when space returns; a start below it opens the log read-only and waits (docs/degraded-modes.md).
  /// Default: 256 MiB.
  uint64_t min_free_disk = 256ull << 20;
  /// Tests only: the free bytes of the log's file system instead of statvfs. Default: unset.
  std::function<model::Result<uint64_t>()> test_free_disk = {};
  /// /readyz needs an answer of the API server (a call answered below 500, or a watch event) within
  /// this window; the daemon asks for a one-node list when the server has been quiet for a third of
  /// it. Default: 30 s.
  std::chrono::milliseconds api_contact_window{30000};
};

class Daemon : private boost::noncopyable {
 public:
  explicit Daemon(DaemonOptions options);
  ~Daemon();

  /// Opens the log, connects, starts the reflectors and the scheduler actor.
  model::Status start();
  /// Stops everything: no new decisions, in-flight binder calls finish, the log is closed.
  void stop();
  /// True once every kind was listed.
  bool synced() const;
  /// Cycles run so far, the idle ones included (ticks that found nothing changed and ran no session).
  uint64_t cycles() const;
  /// Of those, the idle ones (docs/performance-targets.md "Idle cycles").
  uint64_t idle_cycles() const;
  /// Whether this replica may act now (always true without leader election).
  bool leading() const;
  /// The metrics/health port actually bound (0 when off).
  uint16_t metrics_port() const;
  /// The webhook HTTPS port actually bound (0 when off).
  uint16_t webhook_port() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kai::daemon
