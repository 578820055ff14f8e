#pragma once
// Writes what users read with kubectl, coalesced and below the binds in priority: a pending pod's
// PodScheduled=False / Unschedulable condition with KAI's message and a Warning event, written only
// when the message changes; Evict events on evicted pods. One worker thread; a cycle that produces
// the same reasons again writes nothing.

#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "actors/daemon/cycle.hpp"
#include "k8s/client/kube_client.hpp"

namespace kai::daemon {

class StatusWriter {
 public:
  explicit StatusWriter(k8s::KubeClient& client, size_t max_queue = 10000);
  ~StatusWriter();
  StatusWriter(const StatusWriter&) = delete;
  StatusWriter& operator=(const StatusWriter&) = delete;

  /// Queues the writes a cycle calls for. Called from the scheduler actor.
  void after_cycle(const CycleOutput& out);
  void stop();
  uint64_t written() const;

 private:
  void work();
  void enqueue(std::function<void()> write);

  k8s::KubeClient& client_;
  size_t max_queue_;
  std::map<std::string, std::string> last_message_;  // scheduler thread only
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;
  bool stopping_ = false;
  uint64_t written_ = 0;
  std::thread thread_;
};

}  // namespace kai::daemon
