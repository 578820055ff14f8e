// The daemon's only CAF unit. One scheduler actor owns the projected state, the in-flight decisions
// and the cycle; reflector threads and binder workers talk to it by message, so the state is touched
// by one thread and every cycle sees one consistent cut of the log.

#include "actors/daemon/daemon.hpp"

#include <spdlog/spdlog.h>
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <caf/all.hpp>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <fstream>
#include <future>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>
#include <utility>

#include "actors/daemon/binder.hpp"
#include "actors/daemon/cycle.hpp"
#include "actors/daemon/entity_store.hpp"
#include "actors/daemon/kube_bind_api.hpp"
#include "actors/daemon/kube_lease_api.hpp"
#include "actors/daemon/kube_sharing_api.hpp"
#include "actors/daemon/kube_status_api.hpp"
#include "actors/daemon/kube_webhook_cert_api.hpp"
#include "actors/daemon/leadership.hpp"
#include "actors/daemon/pod_group_writer.hpp"
#include "actors/daemon/owner_only.hpp"
#include "actors/daemon/reservation_namespace.hpp"
#include "actors/daemon/snapshotter.hpp"
#include "actors/daemon/status_writer.hpp"
#include "actors/endpoints/endpoints.hpp"
#include "actors/endpoints/webhook_certs.hpp"
#include "actors/gpu_sharing/sharing_chain.hpp"
#include "actors/scheduler/core/behaviour_version.hpp"
#include "actors/scheduler/core/export_job_state.hpp"
#include "actors/scheduler/core/session_flags.hpp"
#include "actors/scheduler/core/scheduler_config.hpp"
#include "events/projection.hpp"
#include "events/state_codec.hpp"
#include "k8s/client/reflector.hpp"
#include "k8s/model/codec.hpp"
#include "k8s/model/log_redaction.hpp"
#include "storage/event_log.hpp"
#include "storage/restore.hpp"

namespace kai::daemon {

using WatchMsg = std::shared_ptr<const k8s::ReflectorEvent>;
struct OutcomeMsg {
  BindJob job;
  events::BinderOutcome outcome;
};
using OutcomeMsgPtr = std::shared_ptr<const OutcomeMsg>;
using LeadershipMsg = std::shared_ptr<const events::LeadershipChange>;
/// A logged watch event on its way to the store of its kind.
using WatchEventMsg = std::shared_ptr<const events::WatchEvent>;
/// A store's part of a cut: its view, and its kinds' snapshot sections when a snapshot was asked for.
struct StoreCut {
  std::shared_ptr<const StoreView> view;
  events::StateSections sections;
};
using StoreCutMsg = std::shared_ptr<const StoreCut>;
/// Every store at one log position, assembled by the ingest actor.
struct CutResult {
  ClusterCut cut;
  bool listed = false;          ///< Every kind's first list was delivered, and no kind waits for a relist.
  bool appends_failed = false;  ///< An append failed since the last cut: nothing may be decided on it.
  bool encoded = false;     ///< `sections` holds a snapshot of the cut.
  uint64_t cut_number = 0;  ///< Cuts taken by the ingest actor, this one included.
  events::StateSections sections;
  std::map<std::string, std::string> resource_versions;
};
using CutMsg = std::shared_ptr<const CutResult>;
/// A store's key -> resourceVersion of one kind, for a relist diffed against what was logged.
using KnownMsg = std::shared_ptr<const std::map<std::string, std::string>>;

}  // namespace kai::daemon

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(kai::daemon::WatchMsg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(kai::daemon::OutcomeMsgPtr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(kai::daemon::LeadershipMsg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(kai::daemon::WatchEventMsg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(kai::daemon::StoreCutMsg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(kai::daemon::CutMsg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(kai::daemon::KnownMsg)

namespace kai::daemon {

namespace {

using watch_atom = caf::atom_constant<caf::atom("watch")>;
using tick_atom = caf::atom_constant<caf::atom("tick")>;
using outcome_atom = caf::atom_constant<caf::atom("outcome")>;
using leader_atom = caf::atom_constant<caf::atom("leader")>;
using cut_atom = caf::atom_constant<caf::atom("cut")>;
using early_atom = caf::atom_constant<caf::atom("early")>;
/// A cut that takes longer than this (stores encoding a snapshot take a fraction of a second at 150k
/// pods) is given up: an awaiting scheduler takes no other message, its exit included.
constexpr std::chrono::seconds kCutTimeout{60};
using sched_atom = caf::atom_constant<caf::atom("sched")>;
using known_atom = caf::atom_constant<caf::atom("known")>;
using probe_atom = caf::atom_constant<caf::atom("probe")>;
/// How often the ingest looks whether the log takes appends again while it drops watch events.
constexpr std::chrono::milliseconds kLogProbePeriod{200};

int64_t wall_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

events::WatchType watch_type(k8s::ReflectorEventType t) {
  switch (t) {
    case k8s::ReflectorEventType::kAdded:
      return events::WatchType::kAdded;
    case k8s::ReflectorEventType::kModified:
      return events::WatchType::kModified;
    case k8s::ReflectorEventType::kDeleted:
      return events::WatchType::kDeleted;
    case k8s::ReflectorEventType::kBookmark:
      return events::WatchType::kBookmark;
  }
  return events::WatchType::kModified;
}

/// Logs the configuration body when it is not the one the log holds last (contracts.md §5), so that
/// replay runs each cycle with the configuration its CycleStart names; a restart with the same text
/// adds nothing. Appended before the first cycle, whose CycleStart refers to it.
model::Status record_config(storage::EventLog& log, const std::string& text, const std::string& flags,
                            uint64_t hash) {
  auto last = log.get_meta("config_hash");
  if (!last.is_ok()) return model::Status::error("event log: " + last.message());
  if (last.value() == std::to_string(hash)) return model::Status::ok();
  events::Event e;
  e.timestamp_us = wall_us();
  e.payload = events::ConfigChange{hash, text, core::kBehaviourVersion, flags};
  auto appended = log.append({std::move(e)});
  if (!appended.is_ok()) return model::Status::error("event log: " + appended.message());
  return model::Status::ok();
}

struct KindSpec {
  const char* kind;
  const char* path;
};
constexpr KindSpec kKinds[] = {
    {"Node", "/api/v1/nodes"},
    {"Pod", "/api/v1/pods"},
    {"Queue", "/apis/scheduling.run.ai/v2/queues"},
    {"PodGroup", "/apis/scheduling.run.ai/v2alpha2/podgroups"},
    {"PriorityClass", "/apis/scheduling.k8s.io/v1/priorityclasses"},
    {"BindRequest", "/apis/scheduling.run.ai/v1alpha2/bindrequests"},
};

}  // namespace

/// A watch event whose append is queued; it goes to its store once the log has it.
struct PendingWatch {
  std::future<storage::Result<storage::AppendResult>> appended;
  WatchEventMsg event;
  bool list_end = false;  ///< The BOOKMARK that ends a list.
};

/// What the ingest actor owns: the log appends of watch events, in the order the reflectors deliver
/// them, and the kinds not listed yet. A watch event goes to the store of its kind once its append is
/// written (the stores are read only at cuts, which wait for every append), so a store never holds
/// what the log lacks. An event the log did not take (a full disk, docs/degraded-modes.md) is
/// dropped, and its kind is listed again, diffed against its store, once the log takes appends.
struct IngestCore {
  using Forward = std::function<void(const WatchEventMsg&)>;
  storage::EventLog* log = nullptr;
  endpoints::SchedulerMetrics* metrics = nullptr;
  std::deque<PendingWatch> pending;
  /// The log refused an append and probe() has not found it writable since: events are dropped.
  bool log_refusing = false;
  /// Kinds with a dropped event: their stores lack it until the kind is listed again.
  std::set<std::string> dropped_kinds;
  /// Kinds whose relist was asked and has not ended (its BOOKMARK not logged yet).
  std::set<std::string> relisting_kinds;
  /// Kinds whose first list has not been delivered yet: no cycle runs on a partial cluster (a pod
  /// bound to a node whose other pods are not known yet could overcommit it).
  std::set<std::string> unlisted_kinds;
  /// Watch changes since the last cut, and the count that asks the scheduler for a cycle before its
  /// period is up (0: never).
  uint64_t changes_since_cut = 0;
  uint64_t early_after = 0;
  uint64_t cuts = 0;  ///< Cuts taken so far; an early-cycle request carries it.
  /// Set by the event that completes the first lists: the first cycle runs then, not a period later.
  bool just_listed = false;
  /// An append failed since the last cut.
  bool failed_since_cut = false;

  /// True once per cut, when enough changed since it for an early cycle, and when the last first list
  /// ended.
  bool want_early_cycle(const k8s::ReflectorEvent& ev) {
    if (std::exchange(just_listed, false)) return true;
    if (ev.type == k8s::ReflectorEventType::kBookmark) return false;
    return early_after > 0 && ++changes_since_cut == early_after;
  }

  /// Every kind's store holds what the log holds of it and what the API server said last.
  bool current() const { return unlisted_kinds.empty() && dropped_kinds.empty() && relisting_kinds.empty(); }

  void drop(const std::string& kind, const std::string& why) {
    if (!log_refusing) {
      spdlog::error("event log takes no watch events ({}); they are dropped and listed again once it does",
                    why);
    }
    log_refusing = true;
    failed_since_cut = true;
    dropped_kinds.insert(kind);
  }

  void settle(PendingWatch& p, const Forward& forward) {
    auto r = p.appended.get();
    if (!r.is_ok()) return drop(p.event->kind, r.message());
    if (p.list_end) relisting_kinds.erase(p.event->kind);
    forward(p.event);
  }

  /// Hands on the events whose appends are written, in order; with `wait`, waits for all of them.
  void reap(const Forward& forward, bool wait) {
    while (!pending.empty() &&
           (wait || pending.front().appended.wait_for(std::chrono::seconds(0)) == std::future_status::ready)) {
      settle(pending.front(), forward);
      pending.pop_front();
    }
  }

  void on_watch(const k8s::ReflectorEvent& ev, const Forward& forward) {
    events::Event e;
    e.timestamp_us = wall_us();
    spdlog::trace("watch {} {} ({} bytes, resourceVersion {})", ev.kind,
                  events::to_string(watch_type(ev.type)), ev.object_json.size(), ev.resource_version);
    // What scheduling never reads and may be secret (env values, managedFields) is not logged.
    e.payload = events::WatchEvent{ev.kind, watch_type(ev.type), model::redact_for_log(ev.object_json),
                                   ev.resource_version};
    if (ev.type == k8s::ReflectorEventType::kBookmark && ev.from_list && unlisted_kinds.erase(ev.kind) &&
        unlisted_kinds.empty()) {
      spdlog::info("every kind listed");
      just_listed = true;
    }
    if (metrics) metrics->events_ingested(ev.kind);
    if (log_refusing) {
      dropped_kinds.insert(ev.kind);
    } else {
      PendingWatch p;
      p.appended = log->append_async({e});
      p.event = std::make_shared<const events::WatchEvent>(std::get<events::WatchEvent>(std::move(e.payload)));
      p.list_end = ev.type == k8s::ReflectorEventType::kBookmark && ev.from_list;
      pending.push_back(std::move(p));
    }
    reap(forward, false);
  }

  /// While events are dropped: whether the log takes appends again (it resumes RocksDB when the space
  /// is back); then the kinds that lost events are to be listed again. Returns those kinds.
  std::set<std::string> recover(const Forward& forward) {
    if (log_refusing) {
      if (!log->probe().writable()) return {};
      log_refusing = false;
      spdlog::info("event log takes appends again: listing {} kind(s) again", dropped_kinds.size());
    }
    reap(forward, true);  // the stores hold every logged event before they are asked what they hold
    if (log_refusing) return {};
    std::set<std::string> kinds;
    kinds.swap(dropped_kinds);
    relisting_kinds.insert(kinds.begin(), kinds.end());
    return kinds;
  }
};

/// What /get-snapshot serves: the last cycle's cut with the in-flight decisions applied, encoded only
/// when someone asks.
struct LastCycle {
  CutMsg cut;
  std::shared_ptr<const std::deque<model::Pod>> patched;
  model::ObjectRefs refs;
  events::ScheduleRecords records;  ///< At the cut: the job state goes out on PodGroups.
};

/// Everything the scheduler actor owns (touched only on its thread, except the atomics).
struct SchedulerCore {
  DaemonOptions options;
  core::SessionOptions session;
  uint64_t config_hash = 0;
  storage::EventLog* log = nullptr;
  Binder* binder = nullptr;
  StatusWriter* status = nullptr;
  PodGroupWriter* pod_groups = nullptr;
  endpoints::SchedulerMetrics* metrics = nullptr;
  /// The projection's records (events/schedule_records.hpp), kept here because this actor appends
  /// every record that changes them: the same fold (events::apply_record) over the same records, so
  /// at a cut they are exactly the log's up to the cut's position.
  events::ScheduleRecords records;
  /// Records appended and not confirmed yet; folded into `records` once written, in log order.
  struct PendingRecord {
    std::future<storage::Result<storage::AppendResult>> appended;
    events::Event event;
  };
  std::deque<PendingRecord> pending_appends;
  /// Records the log did not take (a full disk): appended again, in order, once it takes appends;
  /// no cycle runs before they are logged (they are outcomes the next cycle must see).
  std::deque<events::Event> unlogged;
  /// The log refuses appends: no cycles (logged once when it starts and when it ends).
  bool degraded = false;
  uint64_t cycle_id = 0;
  const Leadership* leadership = nullptr;
  std::atomic<uint64_t>* cycles = nullptr;
  std::mutex* last_cycle_mu = nullptr;
  std::shared_ptr<const LastCycle>* last_cycle = nullptr;
  Snapshotter* snapshotter = nullptr;
  const std::atomic<bool>* stopping = nullptr;
  /// The number of the last cut received: an early-cycle request older than it is already served.
  uint64_t last_cut_number = 0;
  /// The reasons last logged per pending group: a group's Unschedulable record is appended only when
  /// they change (an output, not a cycle input).
  std::map<std::string, std::pair<std::vector<events::UnschedulableReason>, std::vector<events::PendingPodRef>>>
      logged_reasons;
  /// The earliest deadline the last cycle reported (Unix seconds), for the next tick.
  std::optional<int64_t> next_deadline;

  /// Waits for the records appended so far and folds each one written into `records` (the
  /// projection's fold, in log order); the ones refused wait in `unlogged`. True when none waits.
  bool drain_appends() {
    while (!pending_appends.empty()) {
      PendingRecord p = std::move(pending_appends.front());
      pending_appends.pop_front();
      auto r = p.appended.get();
      if (r.is_ok()) {
        p.event.seq = r.value().first_seq;
        (void)events::apply_record(records, p.event);
      } else {
        if (unlogged.empty()) spdlog::error("event log refused a record, kept to append again: {}", r.message());
        unlogged.push_back(std::move(p.event));
      }
    }
    return unlogged.empty();
  }

  /// Appends one record of this actor's without waiting; drain_appends() folds it into `records`
  /// before the next cut, which is all that reads them.
  void append_record(events::Payload payload) {
    events::Event e;
    e.timestamp_us = wall_us();
    e.payload = std::move(payload);
    if (!unlogged.empty()) {  // after the ones waiting, in order
      unlogged.push_back(std::move(e));
      return;
    }
    PendingRecord p;
    p.appended = log->append_async({e});
    p.event = std::move(e);
    pending_appends.push_back(std::move(p));
  }

  /// Appends the refused records again, in order.
  void retry_unlogged() {
    std::deque<events::Event> again;
    again.swap(unlogged);
    for (events::Event& e : again) {
      PendingRecord p;
      p.appended = log->append_async({e});
      p.event = std::move(e);
      pending_appends.push_back(std::move(p));
    }
  }

  void on_outcome(const OutcomeMsg& m) {
    const auto& o = m.outcome;
    if (o.outcome != events::Outcome::kBound) {
      spdlog::warn("{} {}: {}", events::to_string(o.outcome), o.pod, o.reason);
    } else {
      spdlog::info("{} {}: {}", m.job.decision.kind == events::DecisionKind::kEvict ? "evicted" : "bound",
                   o.pod, o.reason);
    }
    append_record(o);
  }

  /// The elector took or lost the lease: logged, so that the audit trail says who decided when.
  void on_leadership(const events::LeadershipChange& change) {
    if (change.acquired) {
      spdlog::info("leader election: this replica leads now (epoch {})", change.epoch);
    } else {
      spdlog::warn("leader election: leadership lost (lease held by \"{}\"); standing by", change.holder);
    }
    if (metrics) metrics->set_leader(change.acquired);
    append_record(change);
  }

  /// What the next tick needs from the stores: a cut to schedule on, and/or a snapshot.
  struct Plan {
    bool cycle = false;
    bool snapshot = false;
  };
  Plan plan() {
    Plan p;
    if (stopping->load()) return p;  // the binder is draining: no new decisions
    drain_appends();
    // No decision the log cannot take (contracts.md §5): below the free-space floor nothing runs;
    // probe() resumes the log by itself when the space is back (docs/degraded-modes.md).
    const storage::LogHealth health = log->probe();
    if (!health.writable()) {
      if (!std::exchange(degraded, true)) spdlog::error("no cycles: {}", health.message);
      return p;
    }
    retry_unlogged();
    if (!drain_appends()) return p;
    if (std::exchange(degraded, false)) spdlog::info("event log writable again: cycles resume");
    // A standby only watches and logs; it decides nothing until it holds the lease.
    p.cycle = leadership->may_act();
    p.snapshot =
        snapshotter != nullptr && snapshotter->due(log->last_seq(), std::chrono::steady_clock::now());
    return p;
  }

  /// Runs on a consistent cut of the stores at log position cut.seq: nothing this actor appended is
  /// after it (it drained its appends before asking and waited for the cut), so `records` is the
  /// projection's at that position too.
  void on_cut(const CutMsg& cut, const Plan& plan) {
    last_cut_number = cut->cut_number;
    if (cut->appends_failed) return;  // the stores lack what the log refused: they are listed again
    if (cut->encoded) {
      std::string bytes;
      events::encode_state(cut->cut.seq, cut->resource_versions, records, cut->sections, bytes);
      snapshotter->offer(cut->cut.seq, std::move(bytes), std::chrono::steady_clock::now());
    }
    if (plan.cycle && cut->listed) schedule(cut);
  }

  /// The Unschedulable records worth logging: a group's, when its reasons or pending pods differ
  /// from the last logged ones. Groups no longer pending are forgotten, so they are logged again if they return.
  std::vector<events::UnschedulableEvent> changed_reasons(const std::vector<events::UnschedulableEvent>& all) {
    std::vector<events::UnschedulableEvent> out;
    std::set<std::string> pending;
    for (const auto& u : all) {
      pending.insert(u.pod_group);
      auto& last = logged_reasons[u.pod_group];
      if (last.first == u.reasons && last.second == u.pods) continue;
      last = {u.reasons, u.pods};
      out.push_back(u);
    }
    std::erase_if(logged_reasons, [&](const auto& kv) { return !pending.count(kv.first); });
    return out;
  }

  BindJob bind_job(const ClusterCut& cut, const events::Decision& d, uint64_t seq) const {
    BindJob job;
    job.log_seq = seq;
    job.decision = d;
    const auto cap = options.bind_cap.count() > 0 ? options.bind_cap : 2 * options.reservation_timeout;
    job.deadline = std::chrono::steady_clock::now() + cap;
    const model::Pod* pod = cut.find_pod(d.pod);
    if (pod == nullptr) return job;
    job.tolerations = pod->tolerations;
    const auto& ann = pod->meta.annotations;
    if (auto it = ann.find("runai/shared-gpu-configmap"); it != ann.end()) job.config_map_prefix = it->second;
    if (auto it = ann.find("gpu-fraction-container-name"); it != ann.end()) {
      for (size_t c = 0; c < pod->containers.size(); ++c) {
        if (pod->containers[c].name == it->second) job.container_suffix = std::to_string(c);
      }
      for (size_t c = 0; c < pod->init_containers.size(); ++c) {
        if (pod->init_containers[c].name == it->second) job.container_suffix = "i" + std::to_string(c);
      }
    }
    return job;
  }

  /// Lockstep (tests): whether every decision so far is reported and done on the watch.
  bool previous_cycles_done(const ClusterCut& cut) const {
    for (const auto& [seq, a] : records.assumed) {
      if (!a.reported) return false;
      const events::Decision& d = a.decision;
      const model::Pod* pod = cut.find_pod(d.pod);
      const bool same = pod != nullptr && pod->meta.uid == d.pod_uid;
      if (d.kind == events::DecisionKind::kEvict && same) return false;
      if (d.kind == events::DecisionKind::kBind && same && pod->phase != "Running") return false;
    }
    return true;
  }

  void schedule(const CutMsg& cut_msg) {
    const ClusterCut& cut = cut_msg->cut;
    if (options.lockstep && !previous_cycles_done(cut)) return;
    const uint64_t epoch = leadership->epoch();
    // The logged clock never goes back, whatever the wall clock does (docs/one-truth.md).
    const int64_t wall_ms = options.test_clock ? options.test_clock() * 1000 : wall_us() / 1000;
    const int64_t now_ms = std::max<int64_t>(wall_ms, records.last_now_ms);
    const int64_t now = now_ms / 1000;
    ++cycle_id;
    core::CycleInput in;
    in.objects = cut.refs();
    in.records = &records;
    in.options = session;
    in.options.now = now;
    in.options.now_ms = now_ms;
    in.options.seed = options.test_seed.value_or(
        events::config_hash(std::to_string(cycle_id) + "/" + std::to_string(cut.seq)) | 1);
    in.cycle_id = cycle_id;
    core::CycleResult out = core::run_cycle(in);
    // What /get-snapshot serves is the cut: its job state, not the one this cycle is about to log.
    events::ScheduleRecords records_at_cut;
    records_at_cut.job_states = records.job_states;
    records_at_cut.scheduler_name = session.scheduler_name;

    std::vector<events::Event> batch;
    auto add = [&](events::Payload p) {
      events::Event e;
      e.timestamp_us = wall_us();
      e.payload = std::move(p);
      batch.push_back(std::move(e));
    };
    add(events::CycleStart{cycle_id, config_hash, cut.seq, now, in.options.seed, session.scheduler_name, epoch,
                           now_ms});
    const std::vector<events::Payload> records_of_cycle = core::cycle_records(out, cycle_id, epoch);
    for (const auto& p : records_of_cycle) add(p);
    for (auto& u : changed_reasons(out.unschedulable)) add(std::move(u));
    add(events::CycleEnd{cycle_id, out.total_us, out.action_us});
    // Quiet cycles are logged now and then only, so that an idle cluster does not fill the disk; a
    // quiet cycle changes nothing, so replay loses nothing by its absence. A CycleStart that times
    // a failed bind changes the records (the backoff counts from it): that cycle is logged.
    const bool quiet = batch.size() == 2 && !records.has_untimed_failures();
    if (!quiet || cycle_id % 60 == 1) {
      auto appended = log->append(batch);  // fsync before the binder acts (contracts.md §5)
      if (!appended.is_ok()) {
        // Nothing of this cycle is executed or folded; the next cycle on a writable log decides again.
        spdlog::error("cycle {}: not logged, so not executed: {}", cycle_id, appended.message());
        logged_reasons.clear();  // the reasons it would have logged are logged by a later cycle
        return;
      }
      for (size_t i = 0; i < batch.size(); ++i) {
        batch[i].seq = appended.value().first_seq + i;
        (void)events::apply_record(records, batch[i]);  // as the projection does
      }
      // Execute what is now durable: binds, evictions and reservation clean-ups, then the
      // annotation writes of the job state (each derived from its record).
      std::set<std::string> pod_group_objects;
      for (const auto* pg : in.objects.pod_groups) pod_group_objects.insert(pg->meta.uid);
      for (const auto& e : batch) {
        if (const auto* d = std::get_if<events::DecisionEvent>(&e.payload)) {
          if (d->decision.kind == events::DecisionKind::kPipeline) continue;
          binder->submit(bind_job(cut, d->decision, e.seq));
        } else if (const auto* j = std::get_if<events::JobStateChange>(&e.payload)) {
          if (j->source == events::JobStateSource::kDecided && pod_group_objects.count(j->group_uid))
            pod_groups->write(*j);
        }
      }
    }
    for (const auto& w : out.warnings) spdlog::debug("cycle {}: {}", cycle_id, w);
    if (!out.decisions.empty() || !out.cleanups.empty()) {
      spdlog::info("cycle {}: {} decisions, {} clean-ups, {} pending groups, {} us", cycle_id,
                   out.decisions.size(), out.cleanups.size(), out.unschedulable.size(), out.total_us);
    }
    next_deadline = out.next_deadline;
    status->after_cycle(out);
    if (metrics) {
      std::vector<std::pair<std::string, double>> actions;
      for (const auto& [a, us] : out.action_us) actions.emplace_back(a, static_cast<double>(us) / 1000.0);
      metrics->observe_cycle(static_cast<double>(out.total_us) / 1000.0,
                             static_cast<double>(out.build_us) / 1000.0, 0, actions);
      for (const auto& q : out.queues) {
        metrics->set_queue(q.name, q.fair_cpu, q.fair_memory, q.fair_gpu, q.used_cpu, q.used_memory,
                           q.used_gpu);
      }
    }
    auto last = std::make_shared<LastCycle>();
    last->cut = cut_msg;
    last->patched = out.patched;
    last->refs = std::move(out.refs);
    last->records = std::move(records_at_cut);
    {
      std::lock_guard lock(*last_cycle_mu);
      *last_cycle = std::move(last);
    }
    cycles->fetch_add(1);
  }
};

namespace {

/// An entity actor: owns one store (nodes; queues and priority classes; pod groups with their pods
/// and bind requests), applies its kinds' watch events, and answers cuts with an immutable view.
caf::behavior store_actor(caf::event_based_actor* /*self*/, EntityStore* store) {
  return {
      [=](watch_atom, const WatchEventMsg& w) {
        if (auto s = store->apply(*w); !s.is_ok()) {
          spdlog::warn("{} {}: skipped: {}", w->kind, events::to_string(w->type), s.message());
        }
      },
      [=](known_atom, const std::string& kind) -> KnownMsg {
        return std::make_shared<const std::map<std::string, std::string>>(store->known(kind));
      },
      [=](cut_atom, uint64_t seq, bool encode) -> StoreCutMsg {
        auto c = std::make_shared<StoreCut>();
        c->view = store->view(seq);
        if (encode) store->encode(c->sections);
        return c;
      },
  };
}

void merge_sections(events::StateSections& into, const events::StateSections& from) {
  for (auto [to, part] :
       {std::pair{&into.nodes, &from.nodes}, std::pair{&into.pods, &from.pods},
        std::pair{&into.queues, &from.queues}, std::pair{&into.pod_groups, &from.pod_groups},
        std::pair{&into.priority_classes, &from.priority_classes},
        std::pair{&into.bind_requests, &from.bind_requests}}) {
    if (!part->empty()) *to = *part;
  }
}

/// The ingest actor: reflectors -> the log -> the store of each event's kind. It also cuts: every
/// event it appended up to the cut was sent to its store before the cut request (one sender, one
/// mailbox order), so each store's answer reflects exactly the log up to the cut's position.
caf::behavior ingest_actor(caf::event_based_actor* self, IngestCore* core,
                           std::map<std::string, caf::actor> store_of_kind, std::vector<caf::actor> stores,
                           std::function<void(const std::string&, std::map<std::string, std::string>)> relist) {
  auto scheduler = std::make_shared<caf::actor>();  // told after both are spawned (sched_atom)
  auto probing = std::make_shared<bool>(false);      // a probe tick is on its way
  const IngestCore::Forward forward = [self, store_of_kind](const WatchEventMsg& w) {
    if (auto it = store_of_kind.find(w->kind); it != store_of_kind.end()) self->send(it->second, watch_atom::value, w);
  };
  // While the log refuses watch events, look every kLogProbePeriod whether it takes them again; then
  // list the kinds that lost events again, diffed against what their stores hold (= what was logged).
  auto keep_probing = [=] {
    if (*probing || (!core->log_refusing && core->dropped_kinds.empty())) return;
    *probing = true;
    self->delayed_send(self, kLogProbePeriod, probe_atom::value);
  };
  auto recover = [=] {
    for (const std::string& kind : core->recover(forward)) {
      auto it = store_of_kind.find(kind);
      if (it == store_of_kind.end()) continue;
      self->request(it->second, kCutTimeout, known_atom::value, kind)
          .then([=](const KnownMsg& known) { relist(kind, *known); },
                [=](caf::error& err) {
                  // Asked again at the next probe: without its list the kind would block every cycle.
                  spdlog::warn("relist of {}: no answer from its store: {}", kind, caf::to_string(err));
                  core->relisting_kinds.erase(kind);
                  core->dropped_kinds.insert(kind);
                  keep_probing();
                });
    }
  };
  return {
      [=](watch_atom, const WatchMsg& m) {
        core->on_watch(*m, forward);
        if (!core->dropped_kinds.empty() && !core->log_refusing) recover();
        keep_probing();
        if (core->want_early_cycle(*m) && *scheduler) self->send(*scheduler, early_atom::value, core->cuts);
      },
      [=](probe_atom) {
        *probing = false;
        recover();
        keep_probing();
      },
      [=](sched_atom, const caf::actor& a) { *scheduler = a; },
      [=](cut_atom, bool encode) {
        auto rp = self->make_response_promise<CutMsg>();
        auto result = std::make_shared<CutResult>();
        core->reap(forward, true);  // the cut holds only persisted events, each in its store
        result->appends_failed = std::exchange(core->failed_since_cut, false);
        result->cut.seq = core->log->last_assigned_seq();
        core->changes_since_cut = 0;
        result->cut_number = ++core->cuts;
        result->listed = core->current();
        result->encoded = encode;
        result->cut.views.resize(stores.size());
        auto remaining = std::make_shared<size_t>(stores.size());  // 0 once answered, error or not
        for (size_t i = 0; i < stores.size(); ++i) {
          self->request(stores[i], kCutTimeout, cut_atom::value, result->cut.seq, encode)
              .then(
                  [=](const StoreCutMsg& part) mutable {
                    if (*remaining == 0) return;
                    result->cut.views[i] = part->view;
                    for (const auto& [kind, rv] : part->view->resource_versions)
                      result->resource_versions[kind] = rv;
                    merge_sections(result->sections, part->sections);
                    if (--*remaining == 0) rp.deliver(CutMsg(result));
                  },
                  [=](caf::error& err) mutable {
                    // A store that cannot answer (shutting down) fails the cut, not the scheduler.
                    if (*remaining == 0) return;
                    *remaining = 0;
                    rp.deliver(std::move(err));
                  });
        }
        return rp;
      },
  };
}

caf::behavior scheduler_actor(caf::event_based_actor* self, SchedulerCore* core, caf::actor ingest) {
  // Ticks carry a generation: an early cycle starts a new one, so the tick already queued for the
  // end of the period is dropped instead of running a second, doubled, chain of cycles.
  auto generation = std::make_shared<uint64_t>(0);
  auto busy = std::make_shared<bool>(false);  // a cut is requested and not yet handled
  self->send(self, tick_atom::value, *generation);
  return {
      [=](outcome_atom, const OutcomeMsgPtr& m) { core->on_outcome(*m); },
      [=](leader_atom, const LeadershipMsg& m) { core->on_leadership(*m); },
      [=](early_atom, uint64_t cuts_before) {
        // The changes came after cut `cuts_before`; a later cut already holds them (an early request
        // that waited while the scheduler awaited a cut arrives after that cut ran).
        if (*busy || cuts_before < core->last_cut_number) return;
        self->send(self, tick_atom::value, ++*generation);
      },
      [=](tick_atom, uint64_t gen) {
        if (gen != *generation) return;
        auto next = [=] {
          // A deadline before the period's end (a stale gang's grace, a min-runtime) brings the
          // next cycle forward: it must decide even if nothing else changed.
          auto delay = std::chrono::duration_cast<std::chrono::milliseconds>(core->options.schedule_period);
          if (core->next_deadline) {
            const int64_t ms = *core->next_deadline * 1000 - wall_us() / 1000;
            delay = std::clamp(std::chrono::milliseconds(ms), std::chrono::milliseconds(10), delay);
          }
          self->delayed_send(self, delay, tick_atom::value, ++*generation);
        };
        const SchedulerCore::Plan plan = core->plan();
        if (!plan.cycle && !plan.snapshot) return next();
        *busy = true;
        // await: outcomes wait until the cycle ran, so that nothing this actor appends falls
        // between the cut and the cycle (open_decisions stays the projection's at the cut).
        self->request(ingest, kCutTimeout, cut_atom::value, plan.snapshot)
            .await(
                [=](const CutMsg& cut) {
                  *busy = false;
                  core->on_cut(cut, plan);
                  next();
                },
                [=](caf::error& err) {
                  *busy = false;
                  spdlog::error("cycle skipped: no cut from the stores: {}", caf::to_string(err));
                  next();
                });
      },
  };
}

}  // namespace

struct Daemon::Impl {
  DaemonOptions options;
  std::unique_ptr<storage::EventLog> log;
  std::unique_ptr<k8s::KubeClient> client;
  std::unique_ptr<KubeSharingApi> sharing_api;
  std::unique_ptr<KubeBindApi> bind_api;
  std::unique_ptr<KubeStatusApi> status_api;
  std::unique_ptr<KubePodGroupApi> pod_group_api;
  std::unique_ptr<gpu_sharing::SharingChain> chain;
  std::unique_ptr<Binder> binder;
  std::unique_ptr<StatusWriter> status;
  std::unique_ptr<PodGroupWriter> pod_group_writer;
  std::unique_ptr<endpoints::SchedulerMetrics> metrics;
  std::unique_ptr<endpoints::DaemonEndpoints> endpoints;
  std::unique_ptr<endpoints::DaemonEndpoints> webhooks;
  std::string webhook_tls_dir;  ///< Private copy of the Secret's certificate and key, removed at the end.
  std::atomic<bool> reflectors_started{false};  ///< The endpoints answer before the reflectors exist.

  ~Impl() {
    if (webhook_tls_dir.empty()) return;
    std::error_code ignored;
    std::filesystem::remove_all(webhook_tls_dir, ignored);
  }
  std::unique_ptr<SchedulerCore> core;
  std::unique_ptr<Snapshotter> snapshotter;
  std::unique_ptr<Leadership> leadership;
  std::unique_ptr<KubeLeaseApi> lease_api;
  std::unique_ptr<leader::LeaderElector> elector;
  std::thread elector_thread;
  std::mutex elector_mu;
  std::condition_variable elector_cv;
  bool elector_stopping = false;
  std::unique_ptr<caf::actor_system_config> cfg;
  std::unique_ptr<caf::actor_system> system;
  caf::actor actor;   ///< The scheduler actor.
  caf::actor ingest;  ///< The ingest actor.
  std::vector<caf::actor> store_actors;
  /// The entity actors' state: nodes; queues and priority classes; pod groups with their pods and
  /// bind requests (each touched only by its actor once they run).
  std::vector<std::unique_ptr<EntityStore>> stores;
  IngestCore ingest_core;
  std::atomic<bool> stopping{false};
  std::vector<std::unique_ptr<k8s::Reflector>> reflectors;
  std::atomic<uint64_t> cycles{0};
  std::mutex last_cycle_mu;
  std::shared_ptr<const LastCycle> last_cycle;
  bool started = false;

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
      const char* tmp = std::getenv("TMPDIR");
      std::string dir = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/kai-webhook-XXXXXX";
      if (mkdtemp(dir.data()) == nullptr)
        return model::Status::error("webhook certificate: cannot make " + dir);
      webhook_tls_dir = dir;
      eo.cert_file = dir + "/tls.crt";
      eo.key_file = dir + "/tls.key";
      for (const auto& [path, text] : {std::pair{eo.cert_file, pem.value().certificate},
                                       std::pair{eo.key_file, pem.value().private_key}}) {
        std::ofstream out(path, std::ios::trunc);
        out << text;
        if (!out) return model::Status::error("webhook certificate: cannot write " + path);
      }
      std::filesystem::permissions(eo.key_file,
                                   std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
    }
    webhooks = std::make_unique<endpoints::DaemonEndpoints>(eo, callbacks, *metrics);
    if (auto s = webhooks->start(); !s) return model::Status::error("webhooks: " + s.message());
    spdlog::info("admission webhooks served over HTTPS on port {}", webhooks->port());
    return model::Status::ok();
  }

  /// Ticks the elector every retry period and publishes the result for the actor and the binder.
  void run_elector() {
    std::unique_lock lock(elector_mu);
    while (!elector_stopping) {
      lock.unlock();
      const auto now = leader::Clock::now();
      const leader::Transition t = elector->tick(now, wall_us());
      leadership->publish(elector->act_until(), static_cast<uint64_t>(elector->epoch()));
      if (!elector->last_error().empty()) spdlog::debug("leader election: {}", elector->last_error());
      if (t != leader::Transition::kNone) {
        auto change = std::make_shared<const events::LeadershipChange>(
            events::LeadershipChange{static_cast<uint64_t>(elector->epoch()), elector->observed_holder(),
                                     t == leader::Transition::kBecameLeader});
        caf::anon_send(actor, leader_atom::value, change);
      }
      lock.lock();
      elector_cv.wait_until(lock, now + options.retry_period, [&] { return elector_stopping; });
    }
  }

  /// Rebuilds the state from the log (newest snapshot + the events after it) and logs the decisions of
  /// an earlier run that have no outcome as abandoned: they are never executed again (contracts.md
  /// §5); the first cycle decides afresh from the listed state.
  model::Status restore(events::ClusterState& state) {
    const auto started = std::chrono::steady_clock::now();
    auto restored = storage::restore_state(*log);
    if (!restored.is_ok()) {
      return model::Status::error("event log " + options.log_dir + " cannot rebuild the state: " +
                                  restored.message() + " (move the directory aside to start a new log)");
    }
    for (const auto& w : restored.value().warnings) spdlog::warn("restore: {}", w);
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
    for (const auto& [seq, pod] : open) {
      events::Event e;
      e.timestamp_us = wall_us();
      e.payload = events::BinderOutcome{seq, pod, events::Outcome::kAbandoned,
                                        "the scheduler restarted before the binder reported; decided again"};
      batch.push_back(std::move(e));
    }
    spdlog::info("restart: {} decisions without an outcome are logged as abandoned", batch.size());
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
      auto copy = [](const auto& refs, auto& to) {
        to.reserve(refs.size());
        for (const auto* x : refs) to.push_back(*x);
      };
      copy(last->refs.nodes, objects.nodes);
      copy(last->refs.pods, objects.pods);
      copy(last->refs.queues, objects.queues);
      copy(last->refs.pod_groups, objects.pod_groups);
      copy(last->refs.priority_classes, objects.priority_classes);
      copy(last->refs.bind_requests, objects.bind_requests);
      core::export_job_state(objects, last->records, last->records.scheduler_name, "default-queue");
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
  m.bind_api = std::make_unique<KubeBindApi>(*m.client);
  m.status_api = std::make_unique<KubeStatusApi>(*m.client);
  m.pod_group_api = std::make_unique<KubePodGroupApi>(*m.client);
  m.status = std::make_unique<StatusWriter>(*m.status_api);
  m.pod_group_writer = std::make_unique<PodGroupWriter>(
      *m.pod_group_api, [leadership = m.leadership.get()] { return leadership->may_act(); });

  m.core = std::make_unique<SchedulerCore>();
  SchedulerCore& c = *m.core;
  c.options = m.options;
  c.session = session;
  const std::string flags = core::encode_session_flags(session);
  c.config_hash = events::config_hash(config_text, core::kBehaviourVersion, flags);
  // Cycle ids go on from the last one logged, so that an id names one cycle across restarts.
  if (auto last = m.log->get_meta("last_cycle"); last.is_ok() && !last.value().empty()) {
    c.cycle_id = std::strtoull(last.value().c_str(), nullptr, 10);
  }
  if (auto s = record_config(*m.log, config_text, flags, c.config_hash); !s) return s;
  c.log = m.log.get();
  c.status = m.status.get();
  c.pod_groups = m.pod_group_writer.get();
  c.metrics = m.metrics.get();
  c.cycles = &m.cycles;
  c.leadership = m.leadership.get();
  c.last_cycle_mu = &m.last_cycle_mu;
  c.last_cycle = &m.last_cycle;
  c.records = std::move(restored_state.records);
  for (std::set<std::string> kinds :
       {std::set<std::string>{"Node"}, std::set<std::string>{"Queue", "PriorityClass"},
        std::set<std::string>{"Pod", "PodGroup", "BindRequest"}}) {
    m.stores.push_back(std::make_unique<EntityStore>(std::move(kinds)));
    m.stores.back()->restore(restored_state);
  }
  m.ingest_core.log = m.log.get();
  m.ingest_core.metrics = m.metrics.get();
  for (const auto& k : kKinds) m.ingest_core.unlisted_kinds.insert(k.kind);
  m.ingest_core.early_after = m.options.early_cycle_changes;
  m.snapshotter = std::make_unique<Snapshotter>(*m.log, m.options.snapshots);
  c.snapshotter = m.snapshotter.get();
  c.stopping = &m.stopping;

  if (m.options.webhook_port != 0) {
    if (auto s = m.start_webhooks({}); !s) return s;
  }
  m.cfg = std::make_unique<caf::actor_system_config>();
  m.cfg->set("scheduler.max-threads", 2);
  m.system = std::make_unique<caf::actor_system>(*m.cfg);
  // The binder reports to the actor; it exists before the actor starts its first cycle.
  caf::actor* actor_ref = &m.actor;
  m.binder = std::make_unique<Binder>(
      *m.bind_api, *m.chain, m.options.binder_workers,
      [actor_ref, status = m.status.get()](const BindJob& job, events::BinderOutcome o) {
        if (o.outcome == events::Outcome::kBound && job.decision.kind == events::DecisionKind::kBind) {
          status->pod_bound(job.decision.pod, job.decision.pod_uid, job.decision.node);
        }
        caf::anon_send(*actor_ref, outcome_atom::value,
                       std::make_shared<const OutcomeMsg>(OutcomeMsg{job, std::move(o)}));
      },
      [leadership = m.leadership.get()] { return leadership->may_act(); });
  c.binder = m.binder.get();
  // What each reflector already holds, read before the actors own the stores.
  std::map<std::string, std::map<std::string, std::string>> known;
  std::map<std::string, caf::actor> store_of_kind;
  for (auto& store : m.stores) {
    m.store_actors.push_back(m.system->spawn(store_actor, store.get()));
    for (const auto& k : kKinds) {
      if (!store->owns(k.kind)) continue;
      known[k.kind] = store->known(k.kind);
      store_of_kind[k.kind] = m.store_actors.back();
    }
  }
  m.ingest = m.system->spawn(
      ingest_actor, &m.ingest_core, store_of_kind, m.store_actors,
      [&m](const std::string& kind, std::map<std::string, std::string> known) {
        std::lock_guard lock(m.reflectors_mu);
        if (auto it = m.reflector_of_kind.find(kind); it != m.reflector_of_kind.end()) {
          spdlog::info("listing {} again ({} objects logged)", kind, known.size());
          it->second->relist(std::move(known));
        }
      });
  m.actor = m.system->spawn(scheduler_actor, &c, m.ingest);
  caf::anon_send(m.ingest, sched_atom::value, m.actor);
  if (m.elector) m.elector_thread = std::thread([&m] { m.run_elector(); });

  for (const auto& k : kKinds) {
    k8s::ReflectorOptions ro;
    ro.kind = k.kind;
    ro.list_path = k.path;
    caf::actor a = m.ingest;
    const std::string kind = k.kind;
    m.reflectors.push_back(std::make_unique<k8s::Reflector>(
        *m.client, ro,
        [a, contact = &m.watch_contact_ns](k8s::ReflectorEvent ev) {
          contact->store(std::chrono::steady_clock::now().time_since_epoch().count(), std::memory_order_relaxed);
          caf::anon_send(a, watch_atom::value, std::make_shared<const k8s::ReflectorEvent>(std::move(ev)));
        },
        [kind](const std::string& message) { spdlog::warn("reflector {}: {}", kind, message); }));
    {
      std::lock_guard lock(m.reflectors_mu);
      m.reflector_of_kind[kind] = m.reflectors.back().get();
    }
    m.reflectors.back()->start("", std::move(known[kind]));
  }
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
  if (m.endpoints) m.endpoints->stop();
  if (m.webhooks) m.webhooks->stop();
  if (m.elector_thread.joinable()) {
    {
      std::lock_guard lock(m.elector_mu);
      m.elector_stopping = true;
    }
    m.elector_cv.notify_all();
    m.elector_thread.join();
  }
  m.stopping = true;  // no new cycle: the binder's queue only shrinks from here
  m.binder->stop();   // in-flight calls finish and report while the actor still lives
  {
    // The scheduler first, and wait for it: while it awaits a cut it takes no other message, the exit
    // included, so the ingest and store actors must live until it has its answer.
    caf::scoped_actor self{*m.system};
    self->send_exit(m.actor, caf::exit_reason::user_shutdown);
    self->wait_for(m.actor);
  }
  caf::anon_send_exit(m.ingest, caf::exit_reason::user_shutdown);
  for (auto& a : m.store_actors) caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
  m.system.reset();  // waits for the actors to finish their current message
  m.status->stop();
  m.pod_group_writer->stop();
  m.core->drain_appends();
  m.ingest_core.reap([](const WatchEventMsg&) {}, true);
  m.log->cancel_manual_compaction();  // retention's space reclaim must not hold up the stop
  m.snapshotter->stop();              // a snapshot being written finishes before the log closes
  if (m.elector) {
    // Nothing acts any more: hand the lease over so that a standby takes over at once.
    m.leadership->revoke();
    m.elector->release(wall_us());
  }
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
