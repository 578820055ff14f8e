#pragma once
// A cron schedule (standard five fields, UTC) for time-based fair share's cron window
// (docs/time-based-fair-share.md): KAI resets the usage at each occurrence of `cronString`.

#include <bitset>
#include <cstdint>
#include <optional>
#include <string_view>

#include "k8s/model/status.hpp"

namespace kai::core {

/// The minutes a cron expression names. Fields: minute (0-59), hour (0-23), day of month (1-31),
/// month (1-12 or JAN-DEC), day of week (0-7 or SUN-SAT, 0 and 7 both Sunday); each `*`, a value,
/// a range `a-b`, a step `*/n` or `a-b/n`, or a list of those. When both day fields are restricted a
/// day matching either counts (as cron does). `@yearly`, `@annually`, `@monthly`, `@weekly`,
/// `@daily`, `@midnight` and `@hourly` stand for their usual expressions.
struct CronSchedule {
  std::bitset<60> minutes;
  std::bitset<24> hours;
  std::bitset<32> days_of_month;  ///< Bit d for day d (1-31).
  std::bitset<13> months;         ///< Bit m for month m (1-12).
  std::bitset<7> days_of_week;    ///< Bit 0 = Sunday.
  bool any_day_of_month = true;   ///< The field was `*`.
  bool any_day_of_week = true;
  bool operator==(const CronSchedule&) const = default;

  /// The last occurrence strictly before `at_ms` (Unix milliseconds, UTC), within the five years
  /// before it; none when there is none.
  std::optional<int64_t> last_before(int64_t at_ms) const;
};

/// Parses a cron expression; errors name the field.
model::Result<CronSchedule> parse_cron(std::string_view text);

}  // namespace kai::core
