#pragma once
// Writes what users read with kubectl, coalesced and below the binds in priority: a pending pod's
// PodScheduled=False condition (reason Unschedulable, or BindingError while its group backs off
// after failed binds) with KAI's message and a Warning event, written only when they change; Evict events on evicted pods; a Scheduled event ("Successfully assigned
// ns/pod to node", as kube-scheduler writes it) per bound pod. One worker thread; a cycle that
// produces the same reasons again writes nothing. Scheduled events wait until the other writes are
// done and keep one per pod. The writes go through StatusApi (status_api.hpp).

#include <deque>
#include <functional>
#include <map>
#include <string>

#include "actors/daemon/background_worker.hpp"
#include "actors/daemon/cycle.hpp"
#include "actors/daemon/status_api.hpp"

namespace kai::daemon {

class StatusWriter : public BackgroundWorker {
 public:
  explicit StatusWriter(StatusApi& api, size_t max_queue = 10000);
  ~StatusWriter();

  /// Queues the writes a cycle calls for. Called from the scheduler actor.
  void after_cycle(const CycleOutput& out);
  /// Queues the Scheduled event of a pod the binder bound ("namespace/name"). Called from any thread.
  void pod_bound(const std::string& pod, const std::string& uid, const std::string& node);

 private:
  void work();
  void enqueue(std::function<void()> write);

  StatusApi& api_;
  size_t max_queue_;
  std::map<std::string, std::string> last_message_;  // scheduler thread only
  std::deque<std::function<void()>> queue_;
  /// Bound pods whose Scheduled event is not written yet: pod -> (uid, node), oldest first in order.
  std::map<std::string, std::pair<std::string, std::string>> scheduled_;
  std::deque<std::string> scheduled_order_;
};

}  // namespace kai::daemon
