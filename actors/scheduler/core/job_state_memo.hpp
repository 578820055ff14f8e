#pragma once
// Step 2 of a cycle (cycle.hpp): the job state each group starts the cycle with, resolved from the
// records and its PodGroup's annotations, kept between the cycles of one caller. A group's
// resolution reads only its records entry and its PodGroup, so a cycle resolves again only the
// groups whose entry changed (events::JobStateChangeLog), whose PodGroup was replaced, came or went, or for
// which the last cycle asked for a record (which may not have been logged); every other group resolves as it
// did. At 5,000 nodes that is a few hundred groups of 150,000 (docs/performance-targets.md "The cycle's
// passes over every job"). The result is what resolving every group gives, records and all
// (tests/core/job_state_memo_test.cpp).
//
// The PodGroups are compared by address, which is sound only while the last cut's objects are
// alive: `hold` says the caller keeps them (SessionKeeper::keep); otherwise the next update
// resolves every group.

#include <boost/unordered/unordered_flat_map.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "actors/scheduler/core/session.hpp"
#include "events/event.hpp"
#include "events/schedule_records.hpp"
#include "k8s/model/objects.hpp"

namespace kai::core {

/// The cut's PodGroups by uid (the first in the cut's order where two share one). The keys view the
/// objects' uids.
using PodGroupsByUid =
    boost::unordered_flat_map<std::string_view, const model::PodGroup*, std::hash<std::string_view>>;

/// The time PodGroup annotation `field` shows; an absent or unreadable one is no time (the session
/// warns about the latter).
std::optional<int64_t> annotation_time(const model::PodGroup& pg, events::JobField field);

class JobStateMemo {
 public:
  /// Brings the job state to the cut's `pod_groups` and `records` (null: none), appending to
  /// `changes` the records a resolution of every group asks for, in uid order: a PodGroup showing a
  /// value that is neither the records' nor one they expect was changed by someone else (the value
  /// is adopted), and one showing the records' value drops the older expectations.
  void update(const events::ScheduleRecords* records, const std::vector<const model::PodGroup*>& pod_groups,
              uint64_t cycle_id, std::vector<events::JobStateChange>& changes);

  /// Each group's job state, by uid, as the last update resolved it.
  const JobTimesByUid& times() const { return times_; }
  /// The last update's PodGroups by uid.
  const PodGroupsByUid& pod_groups() const { return by_uid_; }
  /// Whether the last update resolved every group; otherwise `changed` lists the only groups whose
  /// job state may differ from the update's before.
  bool resolved_all() const { return all_; }
  /// The groups the last update resolved again (when not every one), sorted and unique.
  const std::vector<std::string>& changed() const { return changed_; }
  /// Counts the updates: a session that took the times of update N - 1 takes only `changed` at N.
  uint64_t generation() const { return generation_; }

  /// The cycle's records, once it has them all: the groups it asked a watched or forget change for
  /// are resolved again by the next update, whether or not those records were logged.
  void note_asked(const std::vector<events::JobStateChange>& changes);
  /// The caller keeps the objects of `pod_groups` alive until the next update; unless they are
  /// those of the last update, the next one resolves every group.
  void hold(const std::vector<const model::PodGroup*>& pod_groups);

 private:
  void resolve_all(const events::ScheduleRecords* records,
                   const std::vector<const model::PodGroup*>& pod_groups, uint64_t cycle_id,
                   std::vector<events::JobStateChange>& changes);
  /// Takes out the PodGroups of the last list that the cut's has not (by address) and puts in those
  /// it has that the last had not; false when a uid turns up twice.
  bool replace_pod_groups(const std::vector<const model::PodGroup*>& pod_groups);
  void remember(const events::ScheduleRecords* records,
                const std::vector<const model::PodGroup*>& pod_groups);

  JobTimesByUid times_;
  PodGroupsByUid by_uid_;
  /// Two PodGroups of the last list share a uid (by_uid_ holds the first).
  bool shared_uid_ = false;
  std::vector<const model::PodGroup*> pod_groups_;  ///< The last update's, in the cut's order.
  bool held_ = false;
  uint64_t log_id_ = 0;   ///< Of the records' change log read last; 0: none.
  uint64_t log_end_ = 0;  ///< How far it was read.
  std::vector<std::string> changed_;
  std::vector<std::string> asked_;
  bool all_ = true;
  uint64_t generation_ = 0;
};

}  // namespace kai::core
