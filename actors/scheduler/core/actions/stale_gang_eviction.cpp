#include "actors/scheduler/core/actions/eviction_actions.hpp"

#include <optional>
#include <string>

#include "actors/scheduler/core/grouping.hpp"
#include "actors/scheduler/core/statement.hpp"
#include "k8s/model/time.hpp"

namespace kai::core {

namespace {

/// A job with pods running (or bound) below some pod set's minimum that has not succeeded.
bool is_stale(const Session& ssn, const JobInfo& job) {
  // The common single-pod workload: running, it meets a minimum of at most one (no pass over its
  // pods, which costs a cache miss per job at 150,000 jobs). A job's minMember is at least its only
  // pod set's minimum (session_builder_jobs.cpp), which is read from the job itself, not its set.
  if (job.tasks.size() == 1 && job.pod_sets.size() == 1 && job.min_member <= 1) return false;
  for (uint32_t t : job.tasks) {
    if (ssn.tasks[t].status == PodStatus::kSucceeded) return false;
  }
  if (ssn.active_used_count(job) == 0) return false;
  for (const auto& ps : job.pod_sets) {
    int32_t used = 0;
    for (uint32_t t : ps.tasks) used += is_active_used(ssn.tasks[t].status);
    if (used < ps.min_available) return true;
  }
  return false;
}

}  // namespace

void stale_gang_eviction_action(Session& ssn) {
  for (uint32_t j = 0; j < ssn.jobs.size(); ++j) {
    JobInfo& job = ssn.jobs[j];
    const bool stale = is_stale(ssn, job);
    if (!stale) {
      if (job.stale_since) {
        job.stale_since.reset();
        ssn.annotation_updates[j][model::kStaleSinceAnnotation] = std::nullopt;
      }
      continue;
    }
    const double grace =
        job.staleness_grace_seconds.value_or(static_cast<double>(ssn.options().stale_grace_period_seconds));
    if (!job.stale_since) {
      job.stale_since = ssn.record_time();
      ssn.annotation_updates[j][model::kStaleSinceAnnotation] = model::format_rfc3339(*job.stale_since);
    }
    if (grace < 0 || static_cast<double>(ssn.now_ms()) < (static_cast<double>(*job.stale_since) + grace) * 1000) continue;
    Statement stmt(ssn);
    int32_t min_available = 0;
    for (const auto& ps : job.pod_sets) min_available += ps.min_available;
    for (uint32_t t : job.tasks) {
      if (!is_active_allocated(ssn.tasks[t].status) || ssn.tasks[t].node == kNoNode) continue;
      stmt.evict(t,
                 "Workload doesn't meet the minimum required number of pods (" +
                     std::to_string(min_available) + "), evicting remaining pod: " + ssn.tasks[t].key,
                 job.key);
    }
    stmt.commit(std::string(action_names::kStaleGangEviction), job.key);
  }
}

}  // namespace kai::core
