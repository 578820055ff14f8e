#include "actors/scheduler/core/job_state_memo.hpp"

#include <algorithm>

#include "actors/scheduler/core/paired_lists.hpp"
#include "k8s/model/time.hpp"

namespace kai::core {
namespace {

using events::JobField;
using events::JobStateChange;
using events::JobStateSource;

/// One group's job state: the records' entry `st`, unless its PodGroup `pg` (null: none) shows a
/// value someone else wrote, or shows the records' value while older ones are still expected; each
/// such field is asked for as a watched change.
JobTimes resolve(const std::string& uid, const events::JobState& st, const model::PodGroup* pg,
                 uint64_t cycle_id, std::vector<JobStateChange>& changes) {
  JobTimes t;
  std::optional<int64_t>* slots[events::kJobFields] = {&t.last_start, &t.stale_since, &t.last_eviction};
  for (int f = 0; f < events::kJobFields; ++f) {
    const events::JobValue& v = st.fields[f];
    *slots[f] = v.value;
    if (pg == nullptr) continue;
    const auto field = static_cast<JobField>(f);
    const std::optional<int64_t> shown = annotation_time(*pg, field);
    const bool expected = std::find(v.expected.begin(), v.expected.end(), shown) != v.expected.end();
    const bool foreign = shown != v.value && !expected;
    const bool caught_up = shown == v.value && v.expected.size() > 1;
    if (!foreign && !caught_up) continue;
    *slots[f] = shown;
    changes.push_back(
        JobStateChange{cycle_id, uid, st.group, field, shown, std::nullopt, JobStateSource::kWatched});
  }
  return t;
}

}  // namespace

std::optional<int64_t> annotation_time(const model::PodGroup& pg, JobField field) {
  auto it = pg.meta.annotations.find(events::job_field_annotation(field));
  if (it == pg.meta.annotations.end()) return std::nullopt;
  auto t = model::parse_rfc3339(it->second);
  if (!t) return std::nullopt;
  return *t;
}

void JobStateMemo::update(const events::ScheduleRecords* records,
                          const std::vector<const model::PodGroup*>& pod_groups, uint64_t cycle_id,
                          std::vector<JobStateChange>& changes) {
  ++generation_;
  changed_.clear();
  const bool held = held_;
  held_ = false;
  // Every group, unless the last update's objects are alive and the records are the ones read
  // last, with every change since then still in their log.
  if (!held || records == nullptr || records->job_state_log.id() != log_id_ ||
      !records->job_state_log.since(log_end_, changed_) || !replace_pod_groups(pod_groups)) {
    resolve_all(records, pod_groups, cycle_id, changes);
    return;
  }
  changed_.insert(changed_.end(), asked_.begin(), asked_.end());
  std::sort(changed_.begin(), changed_.end());
  changed_.erase(std::unique(changed_.begin(), changed_.end()), changed_.end());
  // In uid order, as a resolution of every group walks the records.
  for (const std::string& uid : changed_) {
    auto st = records->job_states.find(uid);
    if (st == records->job_states.end()) {
      times_.erase(uid);
      continue;
    }
    auto pg = by_uid_.find(uid);
    times_.insert_or_assign(
        uid, resolve(uid, st->second, pg == by_uid_.end() ? nullptr : pg->second, cycle_id, changes));
  }
  all_ = false;
  remember(records, pod_groups);
}

void JobStateMemo::resolve_all(const events::ScheduleRecords* records,
                               const std::vector<const model::PodGroup*>& pod_groups, uint64_t cycle_id,
                               std::vector<JobStateChange>& changes) {
  changed_.clear();
  by_uid_.clear();
  by_uid_.reserve(pod_groups.size());
  shared_uid_ = false;
  for (const auto* pg : pod_groups) shared_uid_ |= !by_uid_.emplace(pg->meta.uid, pg).second;
  times_.clear();
  if (records != nullptr) {
    times_.reserve(records->job_states.size());
    for (const auto& [uid, st] : records->job_states) {
      auto pg = by_uid_.find(uid);
      times_.emplace(uid, resolve(uid, st, pg == by_uid_.end() ? nullptr : pg->second, cycle_id, changes));
    }
  }
  all_ = true;
  remember(records, pod_groups);
}

bool JobStateMemo::replace_pod_groups(const std::vector<const model::PodGroup*>& pod_groups) {
  // Two PodGroups shared a uid: the one indexed may go while the other stays, unindexed.
  if (shared_uid_) return false;
  // Paired in order (paired_lists.hpp): what does not pair is taken out or put in.
  const auto [went, came] = went_and_came(pod_groups_, pod_groups);
  // The old ones out first: a uid may have moved from one PodGroup to another.
  for (const model::PodGroup* old : went) {
    if (auto it = by_uid_.find(old->meta.uid); it != by_uid_.end() && it->second == old) by_uid_.erase(it);
    changed_.push_back(old->meta.uid);
  }
  for (const model::PodGroup* pg : came) {
    // Two PodGroups with one uid: which one a full resolution sees depends on their order.
    if (!by_uid_.emplace(pg->meta.uid, pg).second) return false;
    changed_.push_back(pg->meta.uid);
  }
  return true;
}

void JobStateMemo::remember(const events::ScheduleRecords* records,
                            const std::vector<const model::PodGroup*>& pod_groups) {
  pod_groups_ = pod_groups;
  log_id_ = records != nullptr ? records->job_state_log.id() : 0;
  log_end_ = records != nullptr ? records->job_state_log.end() : 0;
}

void JobStateMemo::note_asked(const std::vector<JobStateChange>& changes) {
  asked_.clear();
  for (const auto& c : changes) {
    if (c.source != JobStateSource::kDecided) asked_.push_back(c.group_uid);
  }
}

void JobStateMemo::hold(const std::vector<const model::PodGroup*>& pod_groups) {
  held_ = pod_groups == pod_groups_;
}

}  // namespace kai::core
