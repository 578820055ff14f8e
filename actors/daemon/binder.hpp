#pragma once
// Executes logged decisions against the API server on a few worker threads (several calls in
// flight): binds through pods/binding, after the GPU-sharing chain for shared-GPU pods; evicts by
// DELETE with a uid precondition and the pod's own grace period. PodDisruptionBudgets are not
// consulted: KAI evicts with a plain DELETE as well (kai-behaviour.md §1), and the scheduler's
// victim rules (priorities, quotas, min-runtime) decide who may go. Every outcome is reported.

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "actors/gpu_sharing/sharing_chain.hpp"
#include "events/event.hpp"
#include "k8s/client/kube_client.hpp"

namespace kai::daemon {

/// One decision to execute, with what the chain needs to know about the pod.
struct BindJob {
  uint64_t log_seq = 0;  ///< Sequence of the DecisionEvent in the log.
  events::Decision decision;
  std::string config_map_prefix;        ///< runai/shared-gpu-configmap, "" if not mutated.
  std::string container_suffix = "0";  ///< the GPU container's configmap suffix
  std::vector<model::Toleration> tolerations;  ///< the pod's, for its reservation pods
  /// Not started by then: cancelled (logged), so the decision stops being assumed and the pod may be
  /// decided again. No cycle computes an expiry itself (docs/one-truth.md). Default: never.
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
};

using OutcomeFn = std::function<void(const BindJob&, events::BinderOutcome)>;
/// Whether this replica may still write to the API server (leader election); checked before every call.
using MayActFn = std::function<bool()>;

class Binder {
 public:
  Binder(k8s::KubeClient& client, gpu_sharing::SharingChain& chain, int workers, OutcomeFn on_outcome,
         MayActFn may_act = [] { return true; });
  ~Binder();
  Binder(const Binder&) = delete;
  Binder& operator=(const Binder&) = delete;

  void submit(BindJob job);
  /// Queues other API work for the workers (reservation clean-up), behind the binds already queued.
  void submit_task(std::function<void()> task);
  /// Finishes queued work, then stops the workers.
  void stop();
  size_t queued() const;

 private:
  void work();
  events::BinderOutcome execute(const BindJob& job);

  k8s::KubeClient& client_;
  gpu_sharing::SharingChain& chain_;
  OutcomeFn on_outcome_;
  MayActFn may_act_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<BindJob> queue_;
  std::deque<std::function<void()>> tasks_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace kai::daemon
