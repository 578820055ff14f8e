#pragma once
// The daemon's actors (docs/architecture.md "From watch to bind"): the ingest actor (watch events ->
// the log -> the store of their kind), one entity actor per store, and the scheduler actor (the
// cycle driver). This header keeps CAF out of its includers: daemon_actors.cpp is the only CAF unit.

#include <boost/core/noncopyable.hpp>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "actors/daemon/binder.hpp"
#include "actors/daemon/cycle_driver.hpp"
#include "actors/daemon/entity_store.hpp"
#include "actors/daemon/ingest.hpp"
#include "events/event.hpp"
#include "k8s/client/reflector.hpp"

namespace kai::daemon {

/// Asks the reflector of `kind` to list it again, diffed against `known` (key -> resourceVersion).
using RelistFn = std::function<void(const std::string& kind, std::map<std::string, std::string> known)>;

class DaemonActors : private boost::noncopyable {
 public:
  /// Spawns the actors around `ingest`, `stores` and `driver`, which must outlive them. The
  /// scheduler actor ticks from the start.
  DaemonActors(IngestCore& ingest, EarlyCycleTrigger& trigger, const std::vector<EntityStore*>& stores,
               CycleDriver& driver, RelistFn relist);
  ~DaemonActors();

  /// A reflector's event (any thread): to the ingest actor, and a cycle now when the trigger says so.
  void watch(k8s::ReflectorEvent event);
  /// A binder's report (any thread).
  void outcome(const BindJob& job, events::BinderOutcome outcome);
  /// The elector took or lost the lease (its thread).
  void leadership(const events::LeadershipChange& change);
  /// Once no new cycle starts (the daemon is stopping): a snapshot of the state at the log's end when
  /// the log holds events after the last one, handed to the snapshotter, so that the next start
  /// restores it without reading the log after it.
  enum class StopSnapshot {
    kTaken,      ///< handed over within the timeout
    kNotNeeded,  ///< the newest snapshot is at the log's end already
    kNotTaken,   ///< no snapshotter, the log not writable, or the timeout passed
  };
  StopSnapshot snapshot_at_stop(std::chrono::milliseconds timeout);
  /// Stops the scheduler actor, then the ingest and entity actors; returns when all are gone.
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kai::daemon
