#pragma once
// What the scheduler actor owns (docs/architecture.md "From watch to bind"): the scheduler's own
// records (assumed decisions, job state, the logged clock), the appends of its records, and the
// cycle run on each consistent cut of the stores: the cycle's records are appended (fsync) before
// anything executes them, then binds and evictions go to the binder and job-state writes to the
// PodGroup writer. Plain C++ with its outputs behind callbacks, so that it is tested without CAF or
// an API server (tests/daemon/cycle_driver_test.cpp); the actor around it is in daemon_actors.cpp.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "actors/daemon/binder.hpp"
#include "actors/daemon/cycle.hpp"
#include "actors/daemon/daemon.hpp"
#include "actors/daemon/entity_store.hpp"
#include "actors/daemon/job_states_at_cut.hpp"
#include "actors/daemon/leadership.hpp"
#include "actors/daemon/snapshotter.hpp"
#include "actors/endpoints/metrics.hpp"
#include "actors/scheduler/core/grouping_memo.hpp"
#include "actors/scheduler/core/session.hpp"
#include "actors/scheduler/core/session_keeper.hpp"
#include "actors/scheduler/core/usage_history.hpp"
#include "events/state_codec.hpp"
#include "storage/event_log.hpp"

namespace kai::daemon {

/// Every store at one log position, assembled from the stores' answers to one cut request.
struct CutResult {
  ClusterCut cut;
  bool listed = false;          ///< Every kind's first list was delivered, and no kind waits for a relist.
  bool appends_failed = false;  ///< An append failed since the last cut: nothing may be decided on it.
  bool encoded = false;         ///< `sections` holds a snapshot of the cut.
  /// The number of the last watch event the cut holds (EarlyCycleTrigger::admit).
  uint64_t last_event_number = 0;
  /// Changes after the cut already ask for the next cycle (EarlyCycleTrigger::cut_taken).
  bool early_due = false;
  events::StateSections sections;
  std::map<std::string, std::string> resource_versions;
};
using CutPtr = std::shared_ptr<const CutResult>;

/// What /get-snapshot serves: the last cycle's cut with the in-flight decisions applied, encoded only
/// when someone asks.
struct LastCycle {
  CutPtr cut;
  std::shared_ptr<const std::deque<model::Pod>> patched;
  model::ObjectRefs refs;
  /// The job states at the cut (they go out on PodGroups), and the scheduler's name.
  std::shared_ptr<const JobStatesAtCut::Table> job_states;
  std::string scheduler_name;
};

/// Where a cycle's effects go.
struct CycleDriverPorts {
  storage::EventLog* log = nullptr;
  const Leadership* leadership = nullptr;
  /// A logged bind, eviction or reservation clean-up to execute (the binder).
  std::function<void(BindJob)> execute;
  /// A decided job-state change of a PodGroup object to write (the PodGroup writer).
  std::function<void(const events::JobStateChange&)> write_job_state;
  /// Hands a logged PodGroup write (the pod grouper's object and pod annotations) to the PodGroup
  /// writer; called after the cycle's binds were handed to the binder.
  std::function<void(const events::PodGroupWrite&)> write_pod_group;
  /// Hands a logged status write (PodGroup or Queue) to the PodGroup writer.
  std::function<void(const events::StatusWrite&)> write_status;
  /// The cycle's output for the pod conditions and events (the status writer).
  std::function<void(const CycleOutput&)> after_cycle;
  /// A tick found the cluster idle and ran no session (CycleDriver::idle).
  std::function<void()> on_idle;
  /// The last cycle, for /get-snapshot.
  std::function<void(std::shared_ptr<const LastCycle>)> publish;
  /// True once the daemon stops: no new decisions.
  std::function<bool()> stopping;
  endpoints::SchedulerMetrics* metrics = nullptr;  ///< Optional.
  Snapshotter* snapshotter = nullptr;              ///< Optional.
};

/// Logs the configuration body when it is not the one the log holds last (docs/event-log-format.md),
/// so that replay runs each cycle with the configuration its CycleStart names; a restart with the
/// same text adds nothing. Appended before the first cycle, whose CycleStart refers to it.
model::Status record_config(storage::EventLog& log, const std::string& text, const std::string& flags,
                            uint64_t hash);

/// The bind job of decision `d` (logged at `seq`): what the binder and the GPU-sharing chain need to
/// know of its pod, and the time after which an unstarted job is cancelled.
BindJob make_bind_job(const model::Pod* pod, const events::Decision& d, uint64_t seq,
                      std::chrono::steady_clock::time_point deadline);

class CycleDriver {
 public:
  CycleDriver(DaemonOptions options, core::SessionOptions session, uint64_t config_hash, CycleDriverPorts ports,
              events::ScheduleRecords restored, uint64_t last_cycle_id);

  /// The binder's report of a decision: logged (its fold waits for the next drain).
  void on_outcome(const BindJob& job, const events::BinderOutcome& outcome);
  /// The elector took or lost the lease: logged, so that the audit trail says who decided when.
  void on_leadership(const events::LeadershipChange& change);

  /// What the next tick needs from the stores: a cut to schedule on, and/or a snapshot.
  struct Plan {
    bool cycle = false;
    bool snapshot = false;
    /// The snapshot at stop: it waits for one still being written rather than being dropped.
    bool last = false;
    /// The snapshot at stop is not needed: the newest snapshot is at the log's end already.
    bool up_to_date = false;
  };
  Plan plan();
  /// The plan of the snapshot a graceful stop takes when the log holds events after the last one
  /// (so that the next start restores it without reading the log after it): no cycle.
  Plan plan_last_snapshot();
  /// Runs on a consistent cut of the stores at log position cut.seq: nothing this driver appended is
  /// after it (it drained its appends before the cut was asked for and appended nothing since), so
  /// its records are the projection's at that position too.
  void on_cut(const CutPtr& cut, const Plan& plan);
  /// Waits for the records appended so far and folds each one written into the records (the
  /// projection's fold, in log order); the ones refused wait to be appended again. True when none
  /// waits.
  bool drain_appends();

  const events::ScheduleRecords& records() const { return records_; }
  /// The earliest deadline the last cycle reported (Unix seconds), for the next tick.
  std::optional<int64_t> next_deadline() const { return next_deadline_; }
  /// The number of the last watch event the last cut held: an early-cycle request for an event up to
  /// it is already served.
  uint64_t last_cut_event_number() const { return last_cut_event_number_; }
  std::chrono::milliseconds schedule_period() const { return options_.schedule_period; }

 private:
  struct PendingRecord {
    std::future<storage::Result<storage::AppendResult>> appended;
    events::Event event;
  };
  void append_record(events::Payload payload, storage::Durability durability = storage::Durability::kSynced);
  void retry_unlogged();
  std::vector<events::UnschedulableEvent> changed_reasons(const std::vector<events::UnschedulableEvent>& all);
  bool previous_cycles_done(const ClusterCut& cut) const;
  /// Whether a cycle on `cut` at `now_ms` would see exactly what the last quiet cycle saw, but for
  /// the clock, and no deadline, backoff or write retry falls between the two: then it would decide
  /// nothing too.
  bool idle(const CutResult& cut, int64_t now_ms) const;
  void schedule(const CutPtr& cut);

  DaemonOptions options_;
  core::SessionOptions session_;
  uint64_t config_hash_ = 0;
  CycleDriverPorts ports_;
  /// The projection's records (events/schedule_records.hpp), kept here because this driver appends
  /// every record that changes them: the same fold (events::apply_record) over the same records, so
  /// at a cut they are exactly the log's up to the cut's position.
  events::ScheduleRecords records_;
  /// Records appended and not confirmed yet; folded into `records_` once written, in log order.
  std::deque<PendingRecord> pending_appends_;
  /// Records the log did not take (a full disk): appended again, in order, once it takes appends;
  /// no cycle runs before they are logged (they are outcomes the next cycle must see).
  std::deque<events::Event> unlogged_;
  /// The log refuses appends: no cycles (logged once when it starts and when it ends).
  bool degraded_ = false;
  uint64_t cycle_id_ = 0;
  uint64_t last_cut_event_number_ = 0;
  /// The reasons last logged per pending group: a group's Unschedulable record is appended only when
  /// they change (an output, not a cycle input).
  std::map<std::string, std::pair<std::vector<events::UnschedulableReason>, std::vector<events::PendingPodRef>>>
      logged_reasons_;
  std::optional<int64_t> next_deadline_;
  /// Time-based fair share: the usage computed at the last fetch step (cycles up to the next reuse it).
  core::UsageMemo usage_memo_;
  /// The pod grouper's decisions of the last cycle, reused for pods whose objects did not change.
  core::GroupingMemo grouping_memo_;
  core::SessionKeeper session_keeper_;
  JobStatesAtCut job_states_at_cut_;
  /// What the last cycle that decided nothing (and logged nothing) saw: its cut (kept, so that an
  /// object list of a later cut is the same list only if no watch event changed that kind), the
  /// records appended by then, and its clock.
  struct QuietCycle {
    CutPtr cut;
    uint64_t record_appends = 0;
    int64_t now_ms = 0;
  };
  std::optional<QuietCycle> quiet_;
  uint64_t record_appends_ = 0;  ///< Records (outcomes, leadership changes) appended so far.
};

}  // namespace kai::daemon
