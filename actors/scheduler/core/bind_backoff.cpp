#include "actors/scheduler/core/bind_backoff.hpp"

#include <algorithm>

#include "k8s/model/time.hpp"

namespace kai::core {

int64_t bind_backoff_ms(uint32_t failures) {
  int64_t ms = kBindBackoffBaseMs;
  for (uint32_t i = 1; i < failures && ms < kBindBackoffMaxMs; ++i) ms *= 2;
  return std::min(ms, kBindBackoffMaxMs);
}

std::optional<int64_t> hold_backing_off_jobs(const events::ScheduleRecords& records, Session& ssn) {
  if (records.bind_failures.empty()) return std::nullopt;
  const int64_t now_ms = ssn.now_ms();
  std::optional<int64_t> earliest;
  for (JobInfo& job : ssn.jobs) {
    // The group waits until every pending pod of it has waited its own backoff; it reports the
    // most failures of one pod (the group's attempts) and the latest failure's reason.
    const events::BindFailures* latest = nullptr;
    int64_t latest_at = 0, retry_at = 0;
    uint32_t failures = 0;
    for (uint32_t t : job.tasks) {
      const TaskInfo& task = ssn.tasks[t];
      if (task.status != PodStatus::kPending) continue;
      auto it = records.bind_failures.find(task.key);
      if (it == records.bind_failures.end() || it->second.pod_uid != task.uid) continue;
      const events::BindFailures& f = it->second;
      const int64_t at = f.failed_at_ms.value_or(now_ms);  // not timed yet: this cycle is the first after it
      failures = std::max(failures, f.failures);
      retry_at = std::max(retry_at, at + bind_backoff_ms(f.failures));
      if (latest == nullptr || at >= latest_at) {
        latest = &f;
        latest_at = at;
      }
    }
    if (latest == nullptr || retry_at <= now_ms) continue;
    const int64_t retry_s = (retry_at + 999) / 1000;
    job.invalid.push_back(
        {kBindingErrorReason,
         "pod group " + job.key + " is backing off after " + std::to_string(failures) + " failed bind" +
             (failures == 1 ? "" : "s") + " (the last: " + latest->reason + "); retried at " +
             model::format_rfc3339(retry_s) + ", " + std::to_string(bind_backoff_ms(failures) / 1000) +
             " s after it"});
    if (!earliest || retry_s < *earliest) earliest = retry_s;
  }
  return earliest;
}

}  // namespace kai::core
