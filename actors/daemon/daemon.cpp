// The daemon's assembly (docs/architecture.md): it opens the log, restores the state, connects, and
// wires the reflectors, the actors (daemon_actors.hpp), the cycle driver, the binder and the writers
// together; it serves readiness and waits for disk space. No CAF here: the actors are behind
// DaemonActors.

#include "actors/daemon/daemon.hpp"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>
#include <utility>

#include "actors/daemon/binder.hpp"
#include "actors/daemon/cycle_driver.hpp"
#include "actors/daemon/daemon_actors.hpp"
#include "actors/daemon/entity_store.hpp"
#include "actors/daemon/ingest.hpp"
#include "actors/daemon/kube_lease_api.hpp"
#include "actors/daemon/kube_sharing_api.hpp"
#include "actors/daemon/kube_webhook_cert_api.hpp"
#include "actors/daemon/kube_writer_apis.hpp"
#include "actors/daemon/leadership.hpp"
#include "actors/daemon/owner_only.hpp"
#include "actors/daemon/owner_watch.hpp"
#include "actors/daemon/pod_group_writer.hpp"
#include "actors/daemon/reservation_namespace.hpp"
#include "actors/daemon/snapshotter.hpp"
#include "actors/daemon/status_writer.hpp"
#include "actors/daemon/wall_clock.hpp"
#include "actors/endpoints/endpoints.hpp"
#include "actors/endpoints/webhook_certs.hpp"
#include "actors/endpoints/webhook_tls_files.hpp"
#include "actors/gpu_sharing/sharing_chain.hpp"
#include "actors/leader/elector_loop.hpp"
#include "actors/scheduler/core/behaviour_version.hpp"
#include "actors/scheduler/core/export_job_state.hpp"
#include "actors/scheduler/core/scheduler_config.hpp"
#include "actors/scheduler/core/session_flags.hpp"
#include "events/projection.hpp"
#include "k8s/client/reflector.hpp"
#include "k8s/model/codec.hpp"
#include "k8s/model/kinds.hpp"
#include "storage/event_log.hpp"
#include "storage/restore.hpp"

namespace kai::daemon {

struct Daemon::Impl {
  DaemonOptions options;
  std::unique_ptr<storage::EventLog> log;
  std::unique_ptr<k8s::KubeClient> client;
  std::unique_ptr<KubeSharingApi> sharing_api;
  /// Holds the deferred writers while the binder has work (write_gate.hpp).
  WriteGate gate;
  std::unique_ptr<KubeWriterApis> writer_apis;
  std::unique_ptr<gpu_sharing::SharingChain> chain;
  std::unique_ptr<Binder> binder;
  std::unique_ptr<StatusWriter> status;
  std::unique_ptr<PodGroupWriter> pod_group_writer;
  std::unique_ptr<endpoints::SchedulerMetrics> metrics;
  std::unique_ptr<endpoints::DaemonEndpoints> endpoints;
  std::unique_ptr<endpoints::DaemonEndpoints> webhooks;
  endpoints::TlsFiles webhook_tls;  ///< Private copy of the Secret's certificate and key, removed at the end.
  std::atomic<bool> reflectors_started{false};  ///< The endpoints answer before the reflectors exist.

  ~Impl() { endpoints::remove_tls_files(webhook_tls); }
  std::unique_ptr<CycleDriver> driver;
  std::unique_ptr<Snapshotter> snapshotter;
  std::unique_ptr<Leadership> leadership;
  std::unique_ptr<KubeLeaseApi> lease_api;
  std::unique_ptr<leader::LeaderElector> elector;
  std::unique_ptr<leader::ElectorLoop> elector_loop;
  /// The entity actors' state: nodes; queues and priority classes; pod groups with their pods and
  /// bind requests (each touched only by its actor once they run).
  std::vector<std::unique_ptr<EntityStore>> stores;
  IngestCore ingest_core;
  std::unique_ptr<EarlyCycleTrigger> trigger;
  std::unique_ptr<DaemonActors> actors;
  std::atomic<bool> stopping{false};
  std::vector<std::unique_ptr<k8s::Reflector>> reflectors;
  std::atomic<uint64_t> cycles{0};
  std::atomic<uint64_t> idle_cycles{0};
  std::mutex last_cycle_mu;
  std::shared_ptr<const LastCycle> last_cycle;
  bool started = false;

  /// The restored objects may lack what the log held (an older snapshot format, skipped records):
  /// every kind is listed at start instead of watched on from its restored resourceVersion.
  bool list_at_start = false;
  /// What start() worked out, for start_scheduling() (which may run later, once the disk has room).
  core::SessionOptions session;
  std::string config_text;
  k8s::ClusterConfig cluster;
  /// Started on a full disk: the log opened read-only, waiting for space (docs/degraded-modes.md).
  std::atomic<bool> disk_wait{false};
  std::unique_ptr<storage::EventLog> read_only_log;
  std::thread disk_wait_thread;
  /// Everything runs (start_scheduling() succeeded); `log`, `client` and the reflectors are set.
  std::atomic<bool> running{false};
  std::mutex start_error_mu;
  std::string start_error;  ///< A start_scheduling() after the wait that failed.
  /// When a watch event last arrived (steady_clock since its epoch).
  std::atomic<int64_t> watch_contact_ns{0};
  std::mutex reflectors_mu;
  std::map<std::string, k8s::Reflector*> reflector_of_kind;  ///< guarded by reflectors_mu
  std::unique_ptr<OwnerWatch> owner_watch;
  /// Every reflector's events go here: to the ingest, noting the API server's contact.
  void deliver(k8s::ReflectorEvent ev) {
    watch_contact_ns.store(std::chrono::steady_clock::now().time_since_epoch().count(), std::memory_order_relaxed);
    actors->watch(std::move(ev));
  }
  /// The disk-wait and the API-contact threads sleep on this; stop() wakes them.
  std::mutex wait_mu;
  std::condition_variable wait_cv;
  bool wait_stopping = false;  ///< guarded by wait_mu
  std::thread contact_thread;

  model::Status start_scheduling();

  storage::EventLogOptions log_options() const {
    storage::EventLogOptions o;
    o.min_free_bytes = options.min_free_disk;
    if (options.test_free_disk) o.free_bytes = options.test_free_disk;
    return o;
  }

  /// Free bytes of the log's file system (UINT64_MAX when unknown: nothing to wait for then).
  uint64_t free_disk() const {
    auto free = options.test_free_disk ? options.test_free_disk() : storage::free_disk_bytes(options.log_dir);
    return free.is_ok() ? free.value() : UINT64_MAX;
  }

  /// The last answer of the API server: a call answered or a watch event.
  std::chrono::steady_clock::time_point last_api_contact() const {
    const auto watched = std::chrono::steady_clock::time_point(
        std::chrono::steady_clock::duration(watch_contact_ns.load(std::memory_order_relaxed)));
    return std::max(watched, client->last_answer());
  }

  /// /readyz: whether this replica can act (docs/degraded-modes.md): the log takes appends, every
  /// kind was listed, the API server answered within api_contact_window, and it leads or stands by.
  endpoints::Readiness readiness(bool synced) {
    if (disk_wait.load()) {
      return {false, "disk full: " + std::to_string(free_disk()) + " bytes free in " + options.log_dir + ", " +
                         std::to_string(options.min_free_disk) +
                         " needed (--min-free-disk); the event log is open read-only until space returns"};
    }
    {
      std::lock_guard lock(start_error_mu);
      if (!start_error.empty()) return {false, "start failed: " + start_error};
    }
    if (!running.load(std::memory_order_acquire)) return {false, "starting"};
    if (const storage::LogHealth h = log->health(); !h.writable()) return {false, h.message};
    if (!synced) return {false, "waiting for the initial lists"};
    const auto silent = std::chrono::steady_clock::now() - last_api_contact();
    if (silent > options.api_contact_window) {
      return {false, "API server not reached for " +
                         std::to_string(std::chrono::duration_cast<std::chrono::seconds>(silent).count()) +
                         " s (no call answered, no watch event)"};
    }
    // Without leader election this replica is the only one and acts: it is the leader. A standby is
    // ready too: it watches and logs, and takes over within one cycle of taking the lease.
    if (!leadership->electing()) return {true, "synced; leader"};
    return {true, leadership->may_act() ? "synced; leader" : "synced; standby"};
  }

  /// Started on a full disk: looks at the free space every second and starts once it is enough.
  void wait_for_disk() {
    std::unique_lock lock(wait_mu);
    for (;;) {
      wait_cv.wait_for(lock, std::chrono::seconds(1), [&] { return wait_stopping; });
      if (wait_stopping) return;
      if (free_disk() < options.min_free_disk) continue;
      lock.unlock();
      spdlog::info("disk space is back: opening the event log read-write");
      read_only_log.reset();
      if (auto s = start_scheduling(); !s) {
        spdlog::critical("start after the disk wait failed: {}", s.message());
        std::lock_guard err(start_error_mu);
        start_error = s.message();
      }
      disk_wait = false;
      return;
    }
  }

  /// Asks the API server something cheap (a node list of one, which the scheduler may read) when it
  /// has said nothing for a third of the window, so that an idle cluster stays ready.
  void run_contact_probe() {
    const auto every = std::max<std::chrono::milliseconds>(options.api_contact_window / 6, std::chrono::milliseconds(100));
    std::unique_lock lock(wait_mu);
    for (;;) {
      wait_cv.wait_for(lock, every, [&] { return wait_stopping; });
      if (wait_stopping) return;
      if (std::chrono::steady_clock::now() - last_api_contact() < options.api_contact_window / 3) continue;
      lock.unlock();
      (void)client->get("/api/v1/nodes?limit=1");
      lock.lock();
    }
  }

  /// The webhooks' HTTPS server, with the configured certificate or the one kept in the Secret.
  model::Status start_webhooks(const endpoints::EndpointsCallbacks& callbacks) {
    endpoints::EndpointsOptions eo;
    eo.port = options.webhook_port == 1 ? 0 : options.webhook_port;  // 1: an ephemeral port (tests)
    eo.webhooks = true;  // only here: the metrics port is plain HTTP
    eo.admission = options.admission;
    eo.admission.scheduler_name = options.scheduler_name;
    eo.cert_file = options.webhook_cert_file;
    eo.key_file = options.webhook_key_file;
    if (eo.cert_file.empty() != eo.key_file.empty()) {
      return model::Status::error("webhooks: give both a certificate and a key file, or neither");
    }
    if (eo.cert_file.empty()) {
      KubeWebhookCertApi api(*client);
      endpoints::WebhookCertOptions co;
      co.ns = options.webhook_namespace;
      std::vector<std::string> warnings;
      auto pem = endpoints::ensure_webhook_certificate(api, co, &warnings);
      if (!pem.is_ok()) return model::Status::error("webhook certificate: " + pem.message());
      for (const auto& w : warnings) spdlog::warn("webhooks: {}", w);
      auto files = endpoints::write_private_tls_files(pem.value());
      if (!files.is_ok()) return files.status();
      webhook_tls = std::move(files).value();
      eo.cert_file = webhook_tls.cert_file;
      eo.key_file = webhook_tls.key_file;
    }
    webhooks = std::make_unique<endpoints::DaemonEndpoints>(eo, callbacks, *metrics);
    if (auto s = webhooks->start(); !s) return model::Status::error("webhooks: " + s.message());
    spdlog::info("admission webhooks served over HTTPS on port {}", webhooks->port());
    return model::Status::ok();
  }

  /// Rebuilds the state from the log (newest snapshot + the events after it) and logs the decisions of
  /// an earlier run that have no outcome: they are never executed again (docs/event-ordering.md
  /// "Restart: unconfirmed binds"). A bind is logged unconfirmed (the earlier run may have sent it:
  /// its placement stays held until the watch shows the pod or the hold runs out), an eviction
  /// abandoned (if it still lands, it only frees what it held).
  model::Status restore(events::ClusterState& state) {
    const auto started = std::chrono::steady_clock::now();
    auto restored = storage::restore_state(*log);
    if (!restored.is_ok()) {
      return model::Status::error("event log " + options.log_dir + " cannot rebuild the state: " +
                                  restored.message() + " (move the directory aside to start a new log)");
    }
    for (const auto& w : restored.value().warnings) spdlog::warn("restore: {}", w);
    // The watches go on from the restored resourceVersions only when the restored objects are whole.
    list_at_start = restored.value().upgraded || restored.value().skipped_records > 0;
    if (list_at_start) {
      spdlog::info("restore: {}; every kind is listed again",
                   restored.value().upgraded ? "the snapshot is of an older format" : "log records were skipped");
    }
    state = std::move(restored.value().state);
    const auto ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started)
            .count();
    if (state.seq > 0) {
      spdlog::info(
          "restored the state at log position {} from snapshot {} + {} events in {} ms: {} nodes, {} pods",
          state.seq, restored.value().snapshot_seq, restored.value().tail_events, ms, state.nodes.size(),
          state.pods.size());
    }
    const auto open = state.records.open_decisions();
    if (open.empty()) return model::Status::ok();
    std::vector<events::Event> batch;
    size_t unconfirmed = 0;
    for (const auto& [seq, pod] : open) {
      events::Event e;
      e.timestamp_us = wall_us();
      const bool bind = state.records.assumed.at(seq).decision.kind == events::DecisionKind::kBind;
      unconfirmed += bind;
      e.payload =
          bind ? events::BinderOutcome{seq, pod, events::Outcome::kUnconfirmed,
                                       "the scheduler restarted before the binder reported; the bind may "
                                       "still land, so its node stays held until the pod shows bound or " +
                                           std::to_string(events::kUnconfirmedBindHoldMs / 1000) +
                                           " s pass, then it is decided again"}
               : events::BinderOutcome{seq, pod, events::Outcome::kAbandoned,
                                       "the scheduler restarted before the binder reported; decided again"};
      batch.push_back(std::move(e));
    }
    spdlog::info("restart: {} decisions without an outcome are logged: {} binds unconfirmed (held), {} "
                 "evictions abandoned",
                 batch.size(), unconfirmed, batch.size() - unconfirmed);
    auto appended = log->append(batch);
    if (!appended.is_ok())
      return model::Status::error("event log " + options.log_dir + ": " + appended.message());
    for (events::Event& e : batch) (void)events::apply(state, e);
    state.seq = log->last_seq();
    return model::Status::ok();
  }
};

Daemon::Daemon(DaemonOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
}

Daemon::~Daemon() {
  stop();
}

model::Status Daemon::start() {
  Impl& m = *impl_;
  if (m.started) return model::Status::ok();
  if (m.options.log_dir.empty()) return model::Status::error("--log-dir is required");
  if (m.options.schedule_period < std::chrono::milliseconds(10)) {
    return model::Status::error("--schedule-period must be at least 10ms");
  }
  core::SessionOptions session;
  session.scheduler_name = m.options.scheduler_name;
  session.stale_grace_period_seconds = m.options.stale_grace_period.count();
  session.pod_group_objects = m.options.pod_group_objects;
  session.grouper = m.options.grouper;
  std::string config_text;
  if (!m.options.config_path.empty()) {
    std::ifstream in(m.options.config_path);
    if (!in) return model::Status::error("--config " + m.options.config_path + ": cannot be read");
    std::stringstream ss;
    ss << in.rdbuf();
    config_text = ss.str();
    auto config = core::parse_scheduler_config(config_text);
    if (!config.is_ok())
      return model::Status::error("--config " + m.options.config_path + ": " + config.message());
    session.config = std::move(config).value();
    if (session.config.usage_db) {
      spdlog::info("--config {}: time-based fair share on, usage from this scheduler's event log "
                   "(docs/time-based-fair-share.md)",
                   m.options.config_path);
      if (!session.config.usage_db->connection.empty()) {
        spdlog::warn("--config {}: usageDBConfig.{} is not queried: the event log holds the same history",
                     m.options.config_path, session.config.usage_db->connection);
      }
    }
  }
  auto cluster = k8s::resolve_cluster_config(m.options.kubeconfig);
  if (!cluster.is_ok()) return cluster.status();
  spdlog::info("API server {}:{} from {}", cluster.value().endpoint.host, cluster.value().endpoint.port,
               cluster.value().source);
  if (auto s = make_owner_only(m.options.log_dir); !s) {
    return model::Status::error("event log " + m.options.log_dir + ": " + s.message());
  }
  m.session = session;
  m.config_text = config_text;
  m.cluster = cluster.value();
  m.metrics = std::make_unique<endpoints::SchedulerMetrics>();
  m.metrics->set_leader(!m.options.leader_elect);
  // The endpoints start before any thread that acts, so that a port in use fails the start cleanly.
  if (m.options.metrics_port != 0) {
    endpoints::EndpointsOptions eo;
    eo.port = m.options.metrics_port == 1 ? 0 : m.options.metrics_port;  // 1: an ephemeral port (tests)
    eo.expose_snapshot = m.options.expose_snapshot;
    endpoints::EndpointsCallbacks cb;
    Impl* impl = &m;
    cb.readiness = [this] { return impl_->readiness(synced()); };
    cb.snapshot = [impl]() -> model::Result<std::string> {
      std::shared_ptr<const LastCycle> last;
      {
        std::lock_guard lock(impl->last_cycle_mu);
        last = impl->last_cycle;
      }
      if (!last) return model::Status::error("no cycle has run yet");
      // Encoded on request only: a copy of the cycle's objects (in-flight decisions applied).
      model::ClusterObjects objects;
      model::for_each_kind([&](auto kind) {
        const auto& from = decltype(kind)::in(last->refs);
        auto& to = decltype(kind)::in(objects);
        to.reserve(from.size());
        for (const auto* x : from) to.push_back(*x);
      });
      events::ScheduleRecords records;
      if (last->job_states) records.job_states = *last->job_states;
      core::export_job_state(objects, records, last->scheduler_name, "default-queue");
      return model::encode_snapshot_json(objects);
    };
    m.endpoints = std::make_unique<endpoints::DaemonEndpoints>(eo, cb, *m.metrics);
    if (auto s = m.endpoints->start(); !s) return model::Status::error("metrics endpoint: " + s.message());
  }

  // A full disk at the start: the log is opened read-only and the endpoints answer (/readyz: "disk
  // full") until space returns; then the daemon starts as usual (docs/degraded-modes.md).
  if (const uint64_t free = m.free_disk(); free < m.options.min_free_disk) {
    storage::EventLogOptions ro;
    ro.read_only = true;
    ro.create_if_missing = false;
    if (auto log = storage::EventLog::open(m.options.log_dir, ro); log.is_ok()) {
      m.read_only_log = std::move(log).value();
    } else {
      spdlog::warn("event log {}: not opened read-only either: {}", m.options.log_dir, log.message());
    }
    spdlog::error("disk full: {} bytes free in {}, --min-free-disk is {}; the event log is open read-only and "
                  "nothing is decided until space returns",
                  free, m.options.log_dir, m.options.min_free_disk);
    m.disk_wait = true;
    m.disk_wait_thread = std::thread([&m] { m.wait_for_disk(); });
    m.started = true;
    return model::Status::ok();
  }
  if (auto s = m.start_scheduling(); !s) return s;
  m.started = true;
  return model::Status::ok();
}

model::Status Daemon::Impl::start_scheduling() {
  Impl& m = *this;
  const core::SessionOptions& session = m.session;
  const std::string& config_text = m.config_text;
  const k8s::ClusterConfig& cluster = m.cluster;
  auto log = storage::EventLog::open(m.options.log_dir, log_options());
  if (!log.is_ok()) return model::Status::error("event log " + m.options.log_dir + ": " + log.message());
  m.log = std::move(log).value();
  events::ClusterState restored_state;
  if (auto s = m.restore(restored_state); !s) return s;

  k8s::ClientOptions co;
  co.qps = m.options.qps;
  co.burst = m.options.burst;
  co.max_connections = m.options.binder_workers + 2;
  m.client = std::make_unique<k8s::KubeClient>(cluster, co);
  m.leadership = std::make_unique<Leadership>(m.options.leader_elect);
  if (m.options.leader_elect) {
    leader::ElectorOptions eo;
    eo.identity = m.options.identity;
    if (eo.identity.empty()) {
      if (const char* pod = std::getenv("POD_NAME"); pod != nullptr && *pod != '\0') eo.identity = pod;
    }
    if (eo.identity.empty()) {
      char host[256] = {};
      if (gethostname(host, sizeof host - 1) == 0) eo.identity = host;
    }
    eo.lease_duration = m.options.lease_duration;
    eo.renew_deadline = m.options.renew_deadline;
    eo.retry_period = m.options.retry_period;
    if (auto s = leader::LeaderElector::validate(eo); !s) return s;
    m.lease_api = std::make_unique<KubeLeaseApi>(*m.client, m.options.lease_namespace, m.options.lease_name);
    if (auto s = m.lease_api->check_namespace(); !s) return s;
    m.elector = std::make_unique<leader::LeaderElector>(*m.lease_api, eo);
    spdlog::info("leader election on Lease {}/{} as \"{}\"", m.options.lease_namespace, m.options.lease_name,
                 eo.identity);
  }
  if (auto s = ensure_reservation_namespace(*m.client); !s) return s;
  m.sharing_api = std::make_unique<KubeSharingApi>(*m.client);
  gpu_sharing::ChainOptions chain_options;
  chain_options.image = m.options.reservation_image;
  chain_options.runtime_class = m.options.reservation_runtime_class;
  chain_options.reservation_timeout = m.options.reservation_timeout;
  m.chain = std::make_unique<gpu_sharing::SharingChain>(*m.sharing_api, chain_options,
                                                        [] { return admission::system_random_suffix()(5); });
  m.writer_apis = std::make_unique<KubeWriterApis>(*m.client, &m.gate);
  m.status = std::make_unique<StatusWriter>(*m.writer_apis);
  m.pod_group_writer = std::make_unique<PodGroupWriter>(
      *m.writer_apis, [leadership = m.leadership.get()] { return leadership->may_act(); }, m.options.status_pacing);

  const std::string flags = core::encode_session_flags(session);
  const uint64_t config_hash = events::config_hash(config_text, core::kBehaviourVersion, flags);
  // Cycle ids go on from the last one logged, so that an id names one cycle across restarts.
  uint64_t last_cycle_id = 0;
  if (auto last = m.log->get_meta("last_cycle"); last.is_ok() && !last.value().empty()) {
    last_cycle_id = std::strtoull(last.value().c_str(), nullptr, 10);
  }
  if (auto s = record_config(*m.log, config_text, flags, config_hash); !s) return s;
  m.snapshotter = std::make_unique<Snapshotter>(*m.log, m.options.snapshots);
  CycleDriverPorts ports;
  ports.log = m.log.get();
  ports.leadership = m.leadership.get();
  ports.execute = [binder = &m.binder](BindJob job) { (*binder)->submit(std::move(job)); };
  ports.write_job_state = [writer = m.pod_group_writer.get()](const events::JobStateChange& j) { writer->write(j); };
  ports.write_pod_group = [writer = m.pod_group_writer.get()](const events::PodGroupWrite& w) { writer->write(w); };
  ports.write_status = [writer = m.pod_group_writer.get()](const events::StatusWrite& w) { writer->write(w); };
  ports.after_cycle = [status = m.status.get()](const CycleOutput& out) { status->after_cycle(out); };
  ports.publish = [&m](std::shared_ptr<const LastCycle> last) {
    {
      std::lock_guard lock(m.last_cycle_mu);
      m.last_cycle = std::move(last);
    }
    m.cycles.fetch_add(1);
  };
  ports.on_idle = [&m] {
    m.idle_cycles.fetch_add(1);
    m.cycles.fetch_add(1);
  };
  ports.stopping = [&m] { return m.stopping.load(); };
  ports.metrics = m.metrics.get();
  ports.snapshotter = m.snapshotter.get();
  m.driver = std::make_unique<CycleDriver>(m.options, session, config_hash, std::move(ports),
                                           std::move(restored_state.records), last_cycle_id);
  // Three entity stores: nodes; queues and priority classes; pod groups with their pods and bind
  // requests (the design's entity actors).
  std::vector<EntityStore*> stores;
  for (int store = 0; store < model::kinds::kEntityStores; ++store) {
    std::set<std::string, std::less<>> owned;
    model::for_each_kind([&](auto kind) {
      if (decltype(kind)::kEntityStore == store) owned.insert(std::string(decltype(kind)::kName));
    });
    m.stores.push_back(std::make_unique<EntityStore>(std::move(owned)));
    m.stores.back()->restore(restored_state);
    stores.push_back(m.stores.back().get());
  }
  std::set<std::string> kinds;
  model::for_each_kind([&](auto kind) {
    if (!decltype(kind)::kListPath.empty()) kinds.insert(std::string(decltype(kind)::kName));
  });
  // The owner kinds are watched each on its own, as API discovery finds them (owner_watch.hpp).
  m.owner_watch = std::make_unique<OwnerWatch>(*m.client, [&m](k8s::ReflectorEvent ev) { m.deliver(std::move(ev)); });
  for (std::string& kind : m.owner_watch->discover()) kinds.insert(std::move(kind));
  m.ingest_core.log = m.log.get();
  m.ingest_core.metrics = m.metrics.get();
  m.ingest_core.unlisted_kinds = kinds;
  // The binder is short of work with fewer than four jobs per worker queued or running.
  m.trigger = std::make_unique<EarlyCycleTrigger>(
      m.options.early_cycle_changes, kinds,
      [&m] { return m.gate.urgent() < 4 * static_cast<uint64_t>(std::max(1, m.options.binder_workers)); });

  if (m.options.webhook_port != 0) {
    if (auto s = m.start_webhooks({}); !s) return s;
  }
  // The binder reports to the scheduler actor; the actors exist before its first job.
  m.binder = std::make_unique<Binder>(
      *m.writer_apis, *m.chain, m.options.binder_workers,
      [&m, status = m.status.get()](const BindJob& job, events::BinderOutcome o) {
        if (o.outcome == events::Outcome::kBound && job.decision.kind == events::DecisionKind::kBind) {
          status->pod_bound(job.decision.pod, job.decision.pod_uid, job.decision.node);
        }
        m.actors->outcome(job, std::move(o));
      },
      [leadership = m.leadership.get()] { return leadership->may_act(); }, BinderTiming{}, &m.gate);
  // What each reflector already holds and where its watch resumes, read before the actors own the
  // stores.
  std::map<std::string, std::map<std::string, std::string>> known;
  std::map<std::string, std::string> positions;
  for (const auto& store : m.stores) {
    for (const std::string& kind : kinds) {
      if (!store->owns(kind)) continue;
      known[kind] = store->known(kind);
      if (!m.list_at_start) positions[kind] = store->position(kind);
    }
  }
  m.actors = std::make_unique<DaemonActors>(
      m.ingest_core, *m.trigger, stores, *m.driver,
      [&m](const std::string& kind, std::map<std::string, std::string> logged) {
        std::lock_guard lock(m.reflectors_mu);
        if (auto it = m.reflector_of_kind.find(kind); it != m.reflector_of_kind.end()) {
          spdlog::info("listing {} again ({} objects logged)", kind, logged.size());
          it->second->relist(std::move(logged));
        } else {
          m.owner_watch->relist(kind, std::move(logged));
        }
      });
  if (m.elector) {
    m.elector_loop = std::make_unique<leader::ElectorLoop>(
        *m.elector, m.options.retry_period, [] { return wall_us(); },
        [leadership = m.leadership.get()](leader::Clock::time_point until, uint64_t epoch) {
          leadership->publish(until, epoch);
        },
        [&m](uint64_t epoch, const std::string& holder, bool acquired) {
          m.actors->leadership(events::LeadershipChange{epoch, holder, acquired});
        });
    m.elector_loop->start();
  }

  model::for_each_kind([&](auto k) {
    using K = decltype(k);
    if (K::kListPath.empty()) return;  // the owners: owner_watch below
    k8s::ReflectorOptions ro;
    ro.kind = std::string(K::kName);
    ro.list_path = std::string(K::kListPath);
    ro.absent_is_empty = K::kMayBeAbsent;
    const std::string kind = ro.kind;
    m.reflectors.push_back(std::make_unique<k8s::Reflector>(
        *m.client, ro,
        [&m](k8s::ReflectorEvent ev) { m.deliver(std::move(ev)); },
        [kind](const std::string& message) { spdlog::warn("reflector {}: {}", kind, message); }));
    {
      std::lock_guard lock(m.reflectors_mu);
      m.reflector_of_kind[kind] = m.reflectors.back().get();
    }
    m.reflectors.back()->start(positions[kind], std::move(known[kind]));
  });
  m.owner_watch->start(known, positions);
  m.reflectors_started = true;
  m.contact_thread = std::thread([&m] { m.run_contact_probe(); });
  m.running.store(true, std::memory_order_release);
  return model::Status::ok();
}

void Daemon::stop() {
  Impl& m = *impl_;
  if (!m.started) return;
  m.started = false;
  {
    std::lock_guard lock(m.wait_mu);
    m.wait_stopping = true;
  }
  m.wait_cv.notify_all();
  if (m.disk_wait_thread.joinable()) m.disk_wait_thread.join();
  if (m.contact_thread.joinable()) m.contact_thread.join();
  if (!m.running.load()) {  // stopped while waiting for disk space: only the endpoints run
    if (m.endpoints) m.endpoints->stop();
    m.read_only_log.reset();
    return;
  }
  for (auto& r : m.reflectors) r->stop();
  m.owner_watch->stop();
  if (m.endpoints) m.endpoints->stop();
  if (m.webhooks) m.webhooks->stop();
  if (m.elector_loop) m.elector_loop->stop();
  m.stopping = true;  // no new cycle: the binder's queue only shrinks from here
  m.binder->stop();   // in-flight calls finish and report while the actors still live
  m.gate.open();      // the writers' last calls wait for nothing
  m.status->stop();   // advisory writes still queued are dropped (the next leader derives them again)
  m.pod_group_writer->stop();
  if (m.elector) {
    // Nothing writes to the API server any more: hand the lease over now, so that a standby takes
    // over while this one still takes its snapshot and closes its log (its own, not the standby's).
    m.leadership->revoke();
    m.elector->release(wall_us());
  }
  // Every watch event and outcome is logged by now: a snapshot at the log's end spares the next
  // start the log after the last one (a second at 5,000 nodes; bench/README.md "Restart on the
  // same log"). Bounded: a stop never waits long for it.
  switch (m.actors->snapshot_at_stop(std::chrono::seconds(20))) {
    case DaemonActors::StopSnapshot::kTaken:
      spdlog::info("snapshot at stop taken");
      break;
    case DaemonActors::StopSnapshot::kNotNeeded:
      spdlog::info("snapshot at stop not needed: the newest snapshot is at the log's end");
      break;
    case DaemonActors::StopSnapshot::kNotTaken:
      break;
  }
  m.actors->stop();   // the scheduler first, then the ingest and the stores
  m.driver->drain_appends();
  m.ingest_core.reap([](const WatchEventPtr&) {}, true);
  m.log->cancel_manual_compaction();  // retention's space reclaim must not hold up the stop
  m.snapshotter->stop();              // a snapshot being written finishes before the log closes
  m.log.reset();
}

bool Daemon::synced() const {
  if (!impl_->reflectors_started) return false;
  for (const auto& r : impl_->reflectors) {
    if (!r->synced()) return false;
  }
  return !impl_->reflectors.empty();
}

uint64_t Daemon::cycles() const {
  return impl_->cycles.load();
}

uint64_t Daemon::idle_cycles() const {
  return impl_->idle_cycles.load();
}

bool Daemon::leading() const {
  return impl_->leadership && impl_->leadership->may_act();
}

uint16_t Daemon::metrics_port() const {
  return impl_->endpoints ? impl_->endpoints->port() : 0;
}

uint16_t Daemon::webhook_port() const {
  return impl_->webhooks ? impl_->webhooks->port() : 0;
}

}  // namespace kai::daemon
