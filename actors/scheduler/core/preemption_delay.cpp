#include "actors/scheduler/core/preemption_delay.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "k8s/model/time.hpp"

namespace kai::core {

std::optional<int64_t> preemption_delay_end_ms(const JobInfo& job) {
  if (!job.preemption_delay_seconds || *job.preemption_delay_seconds <= 0) return std::nullopt;
  const int64_t anchor = std::max(job.creation, job.last_eviction.value_or(job.creation));
  return anchor * 1000 + std::llround(*job.preemption_delay_seconds * 1000.0);
}

bool within_preemption_delay(const JobInfo& job, int64_t now_ms) {
  const auto end = preemption_delay_end_ms(job);
  return end && now_ms < *end;
}

void record_preemption_delay(JobInfo& job) {
  const bool recorded = std::any_of(job.fit_errors.begin(), job.fit_errors.end(), [](const FitReason& r) {
    return r.reason == kPreemptionDelayNotElapsed;
  });
  const auto end = preemption_delay_end_ms(job);
  if (recorded || !end) return;
  // KAI's words: the delay as Go prints a duration, the end as RFC 3339 in UTC (whole seconds).
  const int64_t delay_ns = std::llround(*job.preemption_delay_seconds * 1e9);
  const int64_t end_s = *end >= 0 ? *end / 1000 : -((-*end + 999) / 1000);
  job.fit_errors.push_back({kPreemptionDelayNotElapsed, "Workload is within its preemption delay window (" +
                                                            model::format_go_duration(delay_ns) +
                                                            ") and may not trigger evictions before " +
                                                            model::format_rfc3339(end_s)});
}

}  // namespace kai::core
