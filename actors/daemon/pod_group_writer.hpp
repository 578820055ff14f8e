#pragma once
// The one place that writes PodGroups (docs/one-truth.md). Today it writes the job state KAI keeps
// as PodGroup annotations (kai.scheduler/last-start-timestamp, kai.scheduler/stale-podgroup-
// timestamp), each write derived from a logged JobStateChange; the pod grouper and the status
// writers extend it. Writes are coalesced per PodGroup (the newest value of each annotation wins)
// and run on one thread of their own, so they never hold up a bind.

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "actors/daemon/pod_group_api.hpp"
#include "events/event.hpp"

namespace kai::daemon {

class PodGroupWriter {
 public:
  /// `may_act` is asked before every write (a standby writes nothing).
  PodGroupWriter(PodGroupApi& api, std::function<bool()> may_act);
  ~PodGroupWriter();
  PodGroupWriter(const PodGroupWriter&) = delete;
  PodGroupWriter& operator=(const PodGroupWriter&) = delete;

  /// Queues the annotation write of a logged change (`group` is "namespace/name" of an existing
  /// PodGroup). Called from the scheduler actor after the record is durable.
  void write(const events::JobStateChange& change);
  /// Writes what is queued, then stops.
  void stop();
  uint64_t written() const;

 private:
  void work();

  PodGroupApi& api_;
  std::function<bool()> may_act_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  /// PodGroup "namespace/name" -> annotation -> value (nullopt = remove).
  std::map<std::string, std::map<std::string, std::optional<std::string>>> pending_;
  bool stopping_ = false;
  uint64_t written_ = 0;
  std::thread thread_;
};

}  // namespace kai::daemon
