#include "actors/scheduler/core/cron_schedule.hpp"

#include <array>
#include <cctype>
#include <chrono>
#include <sstream>
#include <string>
#include <vector>

namespace kai::core {
namespace {

using model::Result;
using model::Status;

struct Field {
  const char* name;
  int lo;
  int hi;
  std::array<const char*, 13> names;  ///< Names of values from `lo` on (months, days of week); empty otherwise.
};

constexpr Field kMinute{"minute", 0, 59, {}};
constexpr Field kHour{"hour", 0, 23, {}};
constexpr Field kDayOfMonth{"day of month", 1, 31, {}};
constexpr Field kMonth{"month", 1, 12, {"JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"}};
constexpr Field kDayOfWeek{"day of week", 0, 7, {"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"}};

Result<int> value_of(const Field& f, const std::string& text) {
  std::string upper;
  for (char c : text) upper.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
  for (size_t i = 0; i < f.names.size(); ++i) {
    if (f.names[i] != nullptr && upper == f.names[i]) return f.lo + static_cast<int>(i);
  }
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos || text.size() > 4) {
    return Status::error(std::string(f.name) + ": \"" + text + "\" is not a value");
  }
  const int v = std::stoi(text);
  if (v < f.lo || v > f.hi) {
    return Status::error(std::string(f.name) + ": " + text + " is outside " + std::to_string(f.lo) + "-" +
                         std::to_string(f.hi));
  }
  return v;
}

/// Sets the bits one field names; `any` tells whether it was `*`.
Status parse_field(const Field& f, const std::string& text, std::vector<bool>& bits, bool& any) {
  bits.assign(static_cast<size_t>(f.hi) + 1, false);
  any = text == "*";
  std::stringstream items(text);
  std::string item;
  while (std::getline(items, item, ',')) {
    int step = 1;
    if (auto slash = item.find('/'); slash != std::string::npos) {
      const std::string s = item.substr(slash + 1);
      if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos || s.size() > 4 || std::stoi(s) == 0) {
        return Status::error(std::string(f.name) + ": \"" + item + "\" has no step above 0");
      }
      step = std::stoi(s);
      item = item.substr(0, slash);
    }
    int lo = f.lo, hi = f.hi;
    if (item != "*") {
      const auto dash = item.find('-');
      auto first = value_of(f, item.substr(0, dash));
      if (!first) return first.status();
      lo = hi = *first;
      if (dash != std::string::npos) {
        auto last = value_of(f, item.substr(dash + 1));
        if (!last) return last.status();
        hi = *last;
        if (hi < lo) return Status::error(std::string(f.name) + ": \"" + item + "\" runs backwards");
      } else if (step != 1) {
        hi = f.hi;  // "a/n": from a to the end
      }
    }
    for (int v = lo; v <= hi; v += step) bits[static_cast<size_t>(v)] = true;
  }
  if (text.empty() || text.back() == ',') return Status::error(std::string(f.name) + ": empty");
  return Status::ok();
}

std::string expand_macro(std::string_view text) {
  if (text == "@yearly" || text == "@annually") return "0 0 1 1 *";
  if (text == "@monthly") return "0 0 1 * *";
  if (text == "@weekly") return "0 0 * * 0";
  if (text == "@daily" || text == "@midnight") return "0 0 * * *";
  if (text == "@hourly") return "0 * * * *";
  return std::string(text);
}

}  // namespace

Result<CronSchedule> parse_cron(std::string_view text) {
  std::stringstream in(expand_macro(text));
  std::vector<std::string> fields;
  for (std::string f; in >> f;) fields.push_back(f);
  if (fields.size() != 5) {
    return Status::error("\"" + std::string(text) +
                         "\" is not a cron expression of five fields (minute hour day-of-month month day-of-week)");
  }
  CronSchedule c;
  std::vector<bool> bits;
  bool any = false;
  auto copy = [&](auto& set) {
    for (size_t i = 0; i < set.size() && i < bits.size(); ++i) set[i] = bits[i];
  };
  if (auto s = parse_field(kMinute, fields[0], bits, any); !s) return s;
  copy(c.minutes);
  if (auto s = parse_field(kHour, fields[1], bits, any); !s) return s;
  copy(c.hours);
  if (auto s = parse_field(kDayOfMonth, fields[2], bits, c.any_day_of_month); !s) return s;
  copy(c.days_of_month);
  if (auto s = parse_field(kMonth, fields[3], bits, any); !s) return s;
  copy(c.months);
  if (auto s = parse_field(kDayOfWeek, fields[4], bits, c.any_day_of_week); !s) return s;
  copy(c.days_of_week);
  if (bits.size() > 7 && bits[7]) c.days_of_week[0] = true;  // 7 is Sunday too
  return c;
}

std::optional<int64_t> CronSchedule::last_before(int64_t at_ms) const {
  namespace chrono = std::chrono;
  constexpr int64_t kMinuteMs = 60 * 1000;
  // The last whole minute strictly before `at_ms` (floor division: times before 1970 too).
  const int64_t before = at_ms - 1;
  const int64_t minute = before / kMinuteMs - (before % kMinuteMs < 0 ? 1 : 0);
  const chrono::sys_days today = chrono::floor<chrono::days>(chrono::sys_seconds{chrono::seconds{minute * 60}});
  const int64_t today_minute = chrono::duration_cast<chrono::minutes>(today.time_since_epoch()).count();
  for (int back = 0; back <= 5 * 366; ++back) {
    const chrono::sys_days day = today - chrono::days{back};
    const chrono::year_month_day ymd{day};
    if (!months[static_cast<unsigned>(ymd.month())]) continue;
    const bool dom = days_of_month[static_cast<unsigned>(ymd.day())];
    const bool dow = days_of_week[chrono::weekday{day}.c_encoding()];
    // Cron: with both day fields restricted, either matches; otherwise the restricted one decides.
    const bool day_matches = any_day_of_month && any_day_of_week ? true
                             : any_day_of_month                  ? dow
                             : any_day_of_week                   ? dom
                                                                 : (dom || dow);
    if (!day_matches) continue;
    const int64_t day_minute = chrono::duration_cast<chrono::minutes>(day.time_since_epoch()).count();
    for (int64_t m = back == 0 ? minute - today_minute : 24 * 60 - 1; m >= 0; --m) {
      if (hours[static_cast<size_t>(m / 60)] && minutes[static_cast<size_t>(m % 60)]) return (day_minute + m) * kMinuteMs;
    }
  }
  return std::nullopt;
}

}  // namespace kai::core
