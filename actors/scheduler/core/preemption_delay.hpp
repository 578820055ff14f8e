#pragma once
// A PodGroup's preemptionDelay (KAI v0.17, docs/kai-compatibility.md "Preemption delay"): for that long
// after max(its creation, its last eviction) a pending group may be placed into free capacity but may
// not make reclaim, preempt or consolidation evict anyone for it. Read from the session's clock, so
// the daemon and replay hold back the same groups.

#include <cstdint>
#include <optional>

#include "actors/scheduler/core/cluster_info.hpp"

namespace kai::core {

/// KAI's reason for a group held back by its delay.
inline constexpr const char* kPreemptionDelayNotElapsed = "PreemptionDelayNotElapsed";

/// When `job` may first trigger evictions, in Unix milliseconds; nullopt when it has no delay (none
/// set, or zero).
std::optional<int64_t> preemption_delay_end_ms(const JobInfo& job);

/// Whether `job` is still within its delay at `now_ms`.
bool within_preemption_delay(const JobInfo& job, int64_t now_ms);

/// Adds KAI's PreemptionDelayNotElapsed reason to `job`'s fit errors unless it has it already.
void record_preemption_delay(JobInfo& job);

}  // namespace kai::core
