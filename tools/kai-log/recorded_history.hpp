#pragma once
// What happened, as a log records it, for counterfactual replay (docs/counterfactual-replay.md): each
// pod's arrival, bind, completion, deletion and eviction, and the cycles that ran. Read in one pass
// before the simulation, which needs a pod's recorded run time when it binds the pod.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "events/event.hpp"
#include "k8s/model/status.hpp"
#include "storage/event_log.hpp"

namespace kai::kailog {

/// A moment of the log: the record's sequence number and its wall clock (milliseconds).
struct LogMoment {
  uint64_t seq = 0;
  int64_t ms = 0;
};

/// A decision of this scheduler about one pod, as logged.
struct RecordedDecision {
  uint64_t cycle = 0;
  events::DecisionKind kind = events::DecisionKind::kBind;
  std::string node;
  bool operator==(const RecordedDecision&) const = default;
};

/// One pod's recorded life.
struct RecordedPod {
  std::string key;  ///< "namespace/name"
  std::string uid;
  std::string owner_uid;  ///< Its first owner reference's; empty for a bare pod.
  std::string scheduler_name;
  int64_t created_ms = 0;  ///< metadata.creationTimestamp (seconds precision), else when first seen.
  LogMoment first_seen;
  /// The first watch event that showed it on a node, the node, and the last bind decision's cycle
  /// before it (0: bound by no recorded decision, e.g. before the log or by another scheduler). A
  /// pod evicted while its bind was in flight counts as bound by that decision (its cycle and node;
  /// the moment is the eviction's): the cycles held its place from the decision on.
  std::optional<LogMoment> bound;
  std::string node;
  uint64_t bind_cycle = 0;
  int64_t bind_cycle_ms = 0;  ///< That cycle's clock: when the scheduler decided the bind.
  std::optional<LogMoment> finished;  ///< The first event showing Succeeded or Failed.
  std::string final_phase;
  std::optional<LogMoment> deleted;  ///< Gone from the watch (DELETED, or missing from a relist).
  /// An eviction decision of this scheduler came before it was deleted: its deletion is the
  /// scheduler's doing, not its user's.
  std::optional<LogMoment> evicted;
  /// The cycle of the first eviction decision about it, also when its deletion came first (the cycle
  /// decided on a cut that still had it).
  uint64_t evict_cycle = 0;
  /// Created within 30 s after an eviction of a pod with the same owner: a controller recreating it.
  bool recreated_after_eviction = false;
  /// Every decision about it (binds, pipelines, evictions), in log order.
  std::vector<RecordedDecision> decisions;

  /// When the scheduler decided its bind (the decision's cycle clock), else when the watch showed it.
  std::optional<int64_t> bind_ms() const {
    if (bind_cycle_ms != 0) return bind_cycle_ms;
    if (bound) return bound->ms;
    return std::nullopt;
  }
  /// How long it ran to completion from its bind, when it did.
  std::optional<int64_t> run_ms() const {
    auto b = bind_ms();
    if (!b || !finished) return std::nullopt;
    return std::max<int64_t>(0, finished->ms - *b);
  }
};

/// One recorded cycle: its start record and where it sits in the log.
struct RecordedCycle {
  events::CycleStart start;
  uint64_t seq = 0;  ///< The CycleStart's own sequence number.
};

struct RecordedHistory {
  std::map<std::string, RecordedPod> pods;  ///< By UID.
  std::vector<RecordedCycle> cycles;        ///< In log order.
  std::vector<events::ConfigChange> configs;
  uint64_t last_seq = 0;
  int64_t last_ms = 0;
  uint64_t unreadable = 0;  ///< Records that failed their checksum or decoding (reported, skipped).

  /// The median time from an eviction decision to the victim's deletion; 0 when nothing was evicted.
  int64_t eviction_latency_ms() const;
};

/// Pods a controller recreated after an eviction: created at most this long after it.
inline constexpr int64_t kRecreatedWithinMs = 30 * 1000;

/// Reads the retained log once. Unreadable records are counted and named on `err`.
model::Result<RecordedHistory> read_recorded_history(const storage::EventLog& log, std::ostream& err);

}  // namespace kai::kailog
