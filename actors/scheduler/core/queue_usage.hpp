#pragma once
// Time-based fair share (docs/time-based-fair-share.md): KAI's usage parameters (`usageDBConfig`)
// and the usage they give each queue from its allocation history, as KAI's Prometheus queries
// compute it: samples at a fixed resolution inside the window, each weighted by the half-life decay,
// the queue's sum divided by the cluster capacity's sum over the same samples.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "actors/scheduler/core/cron_schedule.hpp"
#include "events/allocation_history.hpp"
#include "k8s/model/status.hpp"

namespace kai::core {

/// KAI's `usageDBConfig.usageParams` (and `extraParams.queryResolution`), in milliseconds.
struct UsageParams {
  enum class Window : uint8_t { kSliding, kTumbling, kCron };
  /// `windowSize`. Default: one week.
  int64_t window_ms = int64_t{7} * 24 * 3600 * 1000;
  /// `windowType`. Default: sliding.
  Window window = Window::kSliding;
  /// `tumblingWindowStartTime`, Unix milliseconds; required by a tumbling window.
  std::optional<int64_t> tumbling_start_ms;
  /// `cronString`: a cron window resets at each occurrence (UTC); required by a cron window.
  std::optional<CronSchedule> cron;
  /// `halfLifePeriod`; absent (or not positive) = no decay. Default: absent.
  std::optional<int64_t> half_life_ms;
  /// `fetchInterval`: usage is recomputed at multiples of it. Default: one minute.
  int64_t fetch_interval_ms = 60 * 1000;
  /// `extraParams.queryResolution`: the spacing of the samples. Default: one minute.
  int64_t resolution_ms = 60 * 1000;
  bool operator==(const UsageParams&) const = default;
};

/// KAI's `usageDBConfig`. This scheduler reads usage from its own event log: `clientType` must be
/// `eventlog`, or `prometheus` with no connection string (KAI's operator fills one in; here there is
/// no Prometheus to ask, and the log holds the same history).
struct UsageDbConfig {
  std::string client_type;
  /// `connectionString` / `connectionStringEnvVar`: where KAI would query Prometheus. Read and not
  /// used: the usage comes from the event log all the same (the daemon says so when it starts).
  std::string connection;
  UsageParams params;
};

/// A Prometheus / Go duration: "90s", "10m", "1h30m", "1d", "1w", "500ms", "2y" (y = 365 d).
model::Result<int64_t> parse_duration_ms(std::string_view text);

/// Per-resource quantities of a queue's usage (normalized: a share of the cluster's capacity).
struct UsageShare {
  double gpu = 0;
  double cpu = 0;
  double memory = 0;
  bool operator==(const UsageShare&) const = default;
};

using events::AllocationHistory;
using events::AllocationStep;

/// The time usage is evaluated at for a cycle at `now_ms`: the last multiple of the fetch interval.
int64_t usage_evaluation_time(const UsageParams& params, int64_t now_ms);

/// The first sample time the window at `at_ms` still counts (older steps can be forgotten once no
/// later evaluation needs them).
int64_t usage_window_start(const UsageParams& params, int64_t at_ms);

/// Each queue's usage at `at_ms`: per resource, the decayed sum of its allocation over the window's
/// samples divided by the decayed sum of the capacity over the same samples (0 when the capacity
/// sums to 0). Only steps logged before `at_ms` count: one logged at the evaluation time or later is
/// not known yet, so that every cycle between two fetch steps reads the same usage. Queues without a
/// step known at `at_ms` are absent.
std::map<std::string, UsageShare> usage_at(const AllocationHistory& history, const UsageParams& params,
                                           int64_t at_ms);

}  // namespace kai::core
