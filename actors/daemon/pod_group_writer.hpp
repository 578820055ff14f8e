#pragma once
// The one place that writes PodGroups (docs/one-truth.md). Today it writes the job state KAI keeps
// as PodGroup annotations (kai.scheduler/last-start-timestamp, kai.scheduler/stale-podgroup-
// timestamp), each write derived from a logged JobStateChange; the pod grouper and the status
// writers extend it. Writes are coalesced per PodGroup (the newest value of each annotation wins)
// and run on one thread of their own, so they never hold up a bind.

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "actors/daemon/background_worker.hpp"
#include "actors/daemon/pod_group_api.hpp"
#include "events/event.hpp"

namespace kai::daemon {

class PodGroupWriter : public BackgroundWorker {
 public:
  /// `may_act` is asked before every write (a standby writes nothing).
  PodGroupWriter(PodGroupApi& api, std::function<bool()> may_act);
  ~PodGroupWriter();

  /// Queues the annotation write of a logged change (`group` is "namespace/name" of an existing
  /// PodGroup). Called from the scheduler actor after the record is durable.
  void write(const events::JobStateChange& change);

 private:
  void work();

  PodGroupApi& api_;
  std::function<bool()> may_act_;
  /// PodGroup "namespace/name" -> annotation -> value (nullopt = remove).
  std::map<std::string, std::map<std::string, std::optional<std::string>>> pending_;
};

}  // namespace kai::daemon
