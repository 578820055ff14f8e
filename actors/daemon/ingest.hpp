#pragma once
// What the ingest actor owns (docs/architecture.md "From watch to bind"): the log appends of watch
// events, in the order the reflectors deliver them, and the kinds not listed yet. A watch event goes
// to the store of its kind once its append is written (the stores are read only at cuts, which wait
// for every append), so a store never holds what the log lacks. An event the log did not take (a
// full disk, docs/degraded-modes.md) is dropped, and its kind is listed again, diffed against its
// store, once the log takes appends. Plain C++: the actor around it is in daemon_actors.cpp.

#include <cstdint>
#include <deque>
#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "actors/endpoints/metrics.hpp"
#include "events/event.hpp"
#include "k8s/client/reflector.hpp"
#include "storage/event_log.hpp"

namespace kai::daemon {

/// A logged watch event on its way to the store of its kind.
using WatchEventPtr = std::shared_ptr<const events::WatchEvent>;

/// The log's name for a reflector's event type.
events::WatchType watch_type(k8s::ReflectorEventType t);

/// A watch event whose append is queued; it goes to its store once the log has it.
struct PendingWatch {
  std::future<storage::Result<storage::AppendResult>> appended;
  WatchEventPtr event;
  bool list_end = false;  ///< The BOOKMARK that ends a list.
};

struct IngestCore {
  using Forward = std::function<void(const WatchEventPtr&)>;
  storage::EventLog* log = nullptr;
  endpoints::SchedulerMetrics* metrics = nullptr;
  std::deque<PendingWatch> pending;
  /// The log refused an append and recover() has not found it writable since: events are dropped.
  bool log_refusing = false;
  /// Kinds with a dropped event: their stores lack it until the kind is listed again.
  std::set<std::string> dropped_kinds;
  /// Kinds whose relist was asked and has not ended (its BOOKMARK not logged yet).
  std::set<std::string> relisting_kinds;
  /// Kinds whose first list has not been delivered yet: no cycle runs on a partial cluster (a pod
  /// bound to a node whose other pods are not known yet could overcommit it).
  std::set<std::string> unlisted_kinds;
  /// An append failed since the last cut.
  bool failed_since_cut = false;
  /// The trigger's number of the last event taken (EarlyCycleTrigger::admit): a cut holds it and
  /// every event before it.
  uint64_t last_event_number = 0;

  /// Every kind's store holds what the log holds of it and what the API server said last.
  bool current() const { return unlisted_kinds.empty() && dropped_kinds.empty() && relisting_kinds.empty(); }

  /// Appends `ev` (redacted) to the log without waiting and hands on the events already written.
  void on_watch(const k8s::ReflectorEvent& ev, const Forward& forward);
  /// Hands on the events whose appends are written, in order; with `wait`, waits for all of them.
  void reap(const Forward& forward, bool wait);
  /// While events are dropped: whether the log takes appends again (it resumes RocksDB when the space
  /// is back); then the kinds that lost events are to be listed again. Returns those kinds.
  std::set<std::string> recover(const Forward& forward);

 private:
  void drop(const std::string& kind, const std::string& why);
  void settle(PendingWatch& p, const Forward& forward);
};

/// When watch changes ask for a cycle before the period is up: once `early_after` changes arrived
/// since the last cut (0: never), and once when the last kind's first list ends, so that the first
/// cycle runs then and not a period later. The reflector threads admit every event through it: it
/// numbers the event and hands it to the ingest under one lock, so that the numbers follow the ingest's
/// mailbox order; a cut records the last number it holds, and an early request for an event a cut
/// already holds is dropped. This lets the reflectors wake the scheduler directly, so that the ingest
/// actor holds no handle to it.
///
/// A hungry binder asks sooner: when the binder is short of work (`binder_short`: the daemon's binder
/// has fewer jobs than four per worker) kHungryAfter additions start a cycle, so that the first binds
/// of a burst do not wait for its 500th pod. Only while cycles cost little: the time since the last cycle ended must
/// be at least four times what that cycle took (a cluster whose cycle takes a second is not cycled
/// more than a fifth of the time for it).
class EarlyCycleTrigger {
 public:
  using Clock = std::chrono::steady_clock;
  /// Additions after which a binder short of work asks for a cycle (or `early_after`, when fewer).
  static constexpr uint64_t kHungryAfter = 50;

  EarlyCycleTrigger(uint64_t early_after, std::set<std::string> unlisted_kinds,
                    std::function<bool()> binder_short = {})
      : early_after_(early_after), unlisted_(std::move(unlisted_kinds)), binder_short_(std::move(binder_short)) {}

  /// A cycle ran: it took `took` and ended at `ended`. Called from the scheduler.
  void cycle_ran(Clock::duration took, Clock::time_point ended);

  /// Numbers `ev` and calls `enqueue(number)` under the lock; true when the scheduler should cycle
  /// now for it (then `number` is what the early request carries).
  bool admit(const k8s::ReflectorEvent& ev, const std::function<void(uint64_t)>& enqueue, uint64_t& number);
  /// A cut holding every event up to number `upto` was taken: the count starts again from the events
  /// after it (admitted while the cut was on its way, so not in it). True when those already reach
  /// `early_after`: the caller asks for a cycle for them (admit has not, and will not).
  bool cut_taken(uint64_t upto);

 private:
  std::mutex mu_;
  const uint64_t early_after_;
  std::set<std::string> unlisted_;
  /// The numbers of the counted changes (additions, deletions) no cut holds yet, oldest first.
  std::deque<uint64_t> counted_;
  uint64_t last_number_ = 0;
  bool full_asked_ = false;  ///< A request at `early_after` changes went out since the last cut.
  std::function<bool()> binder_short_;
  bool hungry_asked_ = false;  ///< A hungry request went out since the last cut.
  Clock::duration last_took_{};
  Clock::time_point last_ended_{};
};

}  // namespace kai::daemon
