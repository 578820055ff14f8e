#pragma once
// Backoff of pod groups whose binds keep failing (docs/one-truth.md "Bind backoff"): a cycle input
// read from the records' failed binds and the cycle's clock, never from a wall clock, so the daemon
// and replay hold back the same groups.

#include <cstdint>
#include <optional>

#include "actors/scheduler/core/session.hpp"
#include "events/schedule_records.hpp"

namespace kai::core {

/// The backoff after one failed bind, doubled per further failure up to kBindBackoffMaxMs: KAI's
/// binder retries a failed BindRequest after 1, 2, 4... s, and its rate limiter caps the delay at
/// 60 s (`--rate-limiter-max-delay`).
inline constexpr int64_t kBindBackoffBaseMs = 1000;
inline constexpr int64_t kBindBackoffMaxMs = 60 * 1000;
static_assert(kBindBackoffMaxMs < events::kBindFailuresKeptMs,
              "a pod still backing off must keep its failures in the records");

/// The reason a backing-off group's pods show (PodScheduled=False, a Warning event) and its
/// Unschedulable record holds: KAI's binder's word for a failed bind. Not `Unschedulable`, which
/// tells a cluster autoscaler that more nodes would help.
inline constexpr const char* kBindingErrorReason = "BindingError";

/// How long a pod waits after its `failures`-th failed bind in a row (≥ 1).
int64_t bind_backoff_ms(uint32_t failures);

/// Holds back each job with a pending pod whose last bind failed less than its backoff ago: the job
/// gets a BindingError reason (JobInfo::invalid), so that no action allocates it or evicts for
/// it. Returns the earliest end of a hold (Unix seconds, rounded up), a deadline of the cycle.
std::optional<int64_t> hold_backing_off_jobs(const events::ScheduleRecords& records, Session& ssn);

}  // namespace kai::core
