#pragma once
// Executes logged decisions against the API server on a few worker threads (several calls in
// flight): binds through pods/binding, after the GPU-sharing chain for shared-GPU pods; evicts by
// DELETE with a uid precondition and the pod's own grace period. PodDisruptionBudgets are not
// consulted: KAI evicts with a plain DELETE as well (docs/kai-compatibility.md "Components"), and the scheduler's
// victim rules (priorities, quotas, min-runtime) decide who may go. Every outcome is reported. Its
// own API server calls go through BindApi (bind_api.hpp), the chain's through its SharingApi.

#include <boost/core/noncopyable.hpp>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "actors/daemon/bind_api.hpp"
#include "actors/daemon/write_gate.hpp"
#include "actors/gpu_sharing/sharing_chain.hpp"
#include "events/event.hpp"

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

/// How the binder reads unreported reservation pods (how long it waits in all is the chain's
/// ChainOptions::reservation_timeout).
struct BinderTiming {
  /// First pause between two reads of an unreported reservation pod; doubles up to `max_poll`.
  std::chrono::milliseconds first_poll{100};
  std::chrono::milliseconds max_poll{1000};
};

/// Work runs on three lanes: evictions (reservation clean-ups, reclaims) first, so that binds
/// cannot starve them; then binds, whole-GPU and shared alike, one API step at a time. A shared bind
/// whose reservation pod has not reported its GPU is parked on a timer and read again later: no
/// worker waits for it, so nothing queues behind it, for any number of workers. The gate (when given)
/// holds the deferred writers while work is queued or running (write_gate.hpp).
class Binder : private boost::noncopyable {
 public:
  Binder(BindApi& api, gpu_sharing::SharingChain& chain, int workers, OutcomeFn on_outcome,
         MayActFn may_act = [] { return true; }, BinderTiming timing = {}, WriteGate* gate = nullptr);
  ~Binder();

  void submit(BindJob job);
  /// Finishes queued work; binds still waiting for a reservation pod are given up (logged abandoned:
  /// the next leader decides them again and adopts their reservation pods). Then stops the workers.
  void stop();
  /// Jobs waiting for a worker.
  size_t queued() const;
  /// Shared binds parked until their reservation pods report.
  size_t waiting() const;

 private:
  using Clock = std::chrono::steady_clock;
  /// One job and where it stands.
  struct Work {
    BindJob job;
    bool started = false;
    gpu_sharing::SharedBind shared;
    std::shared_ptr<gpu_sharing::ChainState> chain;  ///< Set once a shared bind started its chain.
    Clock::time_point give_up_at{};                  ///< When its reservation wait ends.
    std::chrono::milliseconds poll{0};
  };
  void work();
  /// One step of `w`: an outcome, or nullopt when it was parked again.
  std::optional<events::BinderOutcome> step(Work& w);
  std::optional<events::BinderOutcome> start(Work& w);
  std::optional<events::BinderOutcome> continue_chain(Work& w);
  events::BinderOutcome bind(const Work& w);
  /// The pod of `job` as bound where the API server shows it, or nullopt when it is not bound.
  std::optional<events::BinderOutcome> found_bound(const BindJob& job, const std::string& why);
  void park(Work w);

  BindApi& api_;
  gpu_sharing::SharingChain& chain_;
  OutcomeFn on_outcome_;
  MayActFn may_act_;
  BinderTiming timing_;
  WriteGate* gate_;  ///< Told of every job queued, taken up again or done; may be null.
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Work> evictions_;
  std::deque<Work> binds_;
  std::multimap<Clock::time_point, Work> parked_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace kai::daemon
