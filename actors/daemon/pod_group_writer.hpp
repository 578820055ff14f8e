#pragma once
// The one place that writes PodGroups (docs/one-truth.md): the job state KAI keeps as PodGroup
// annotations (kai.scheduler/last-start-timestamp, kai.scheduler/stale-podgroup-timestamp), each
// write derived from a logged JobStateChange, and the pod grouper's PodGroup objects and pod
// annotations, each derived from a logged PodGroupWrite (docs/pod-grouping.md "Objects written"),
// and the PodGroup and Queue statuses, each derived from a logged StatusWrite (docs/status.md).
// Writes are coalesced per PodGroup (the newest value of each annotation, the newest object) and run
// on one thread of their own, after the cycle's binds were handed to the binder, so they never hold
// up a bind.

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "actors/daemon/background_worker.hpp"
#include "actors/daemon/pod_group_api.hpp"
#include "actors/daemon/status_pacing.hpp"
#include "events/event.hpp"

namespace kai::daemon {

class PodGroupWriter : public BackgroundWorker {
 public:
  /// `may_act` is asked before every write (a standby writes nothing).
  PodGroupWriter(PodGroupApi& api, std::function<bool()> may_act, StatusPacing pacing = {});
  ~PodGroupWriter();

  /// Queues the annotation write of a logged change (`group` is "namespace/name" of an existing
  /// PodGroup). Called from the scheduler actor after the record is durable.
  void write(const events::JobStateChange& change);

  /// Queues a logged PodGroup write: the object created (or read and updated by KAI's rules,
  /// pod_group_update.hpp), then its pods annotated. A newer write of the same group replaces one
  /// still queued. Called from the scheduler actor after the record is durable.
  void write(const events::PodGroupWrite& write);

  /// Queues a logged status write (a merge patch of a PodGroup's or Queue's status subresource),
  /// made after every queued object and annotation, paced by StatusPacing. A newer write of the same
  /// object replaces one still queued, so a burst of changes costs one call. Called from the scheduler actor after the
  /// record is durable.
  void write(const events::StatusWrite& write);

 private:
  void work();
  void write_object(const events::PodGroupWrite& w);
  void annotate_pods(const events::PodGroupWrite& w);

  PodGroupApi& api_;
  std::function<bool()> may_act_;
  /// PodGroup "namespace/name" -> annotation -> value (nullopt = remove).
  std::map<std::string, std::map<std::string, std::optional<std::string>>> pending_;
  /// PodGroup "namespace/name" -> the newest logged write not yet made.
  std::map<std::string, events::PodGroupWrite> pending_objects_;
  using Clock = std::chrono::steady_clock;
  struct PendingStatus {
    events::StatusWrite write;  ///< The newest logged one.
    Clock::time_point due;      ///< Not made before (StatusPacing).
  };
  /// The pending status due first, or pending_statuses_.end().
  std::map<std::string, PendingStatus>::iterator earliest_status();

  StatusPacing pacing_;
  /// StatusWrite::mark_key() -> the newest logged status write not yet made.
  std::map<std::string, PendingStatus> pending_statuses_;
  /// (due, key) of every pending status: the earliest first.
  std::set<std::pair<Clock::time_point, std::string>> status_due_;
  /// StatusWrite::mark_key() -> when its status was last written (pruned once its interval passed).
  std::map<std::string, Clock::time_point> last_status_write_;
  size_t pruned_at_size_ = 0;
};

}  // namespace kai::daemon
