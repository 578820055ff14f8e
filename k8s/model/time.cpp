#include "k8s/model/time.hpp"

#include <chrono>
#include <cstdio>
#include <optional>

namespace kai::model {
namespace {

/// Parses an RFC 3339 timestamp ("2024-01-02T03:04:05Z", "...05.123+02:00") into unix seconds.
/// Fractional seconds are dropped: Kubernetes metav1.Time has second precision.
std::optional<int64_t> parse(std::string_view s) {
  size_t pos = 0;
  auto digits = [&](size_t n, int& out) {
    if (pos + n > s.size()) return false;
    int v = 0;
    for (size_t i = 0; i < n; ++i) {
      const char c = s[pos + i];
      if (c < '0' || c > '9') return false;
      v = v * 10 + (c - '0');
    }
    out = v;
    pos += n;
    return true;
  };
  auto expect = [&](std::string_view chars) {
    if (pos < s.size() && chars.find(s[pos]) != std::string_view::npos) {
      ++pos;
      return true;
    }
    return false;
  };
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  if (!digits(4, year) || !expect("-") || !digits(2, month) || !expect("-") || !digits(2, day) ||
      !expect("Tt ") || !digits(2, hour) || !expect(":") || !digits(2, minute) || !expect(":") ||
      !digits(2, second)) {
    return std::nullopt;
  }
  if (expect(".")) {
    const size_t start = pos;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') ++pos;
    if (pos == start) return std::nullopt;
  }
  int offset_seconds = 0;
  if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) {
    const int sign = s[pos] == '-' ? -1 : 1;
    ++pos;
    int oh = 0, om = 0;
    if (!digits(2, oh) || !expect(":") || !digits(2, om) || oh > 23 || om > 59) return std::nullopt;
    offset_seconds = sign * (oh * 3600 + om * 60);
  } else if (!expect("Zz")) {
    return std::nullopt;
  }
  if (pos != s.size()) return std::nullopt;
  if (hour > 23 || minute > 59 || second > 59) return std::nullopt;
  const std::chrono::year_month_day ymd{std::chrono::year{year},
                                        std::chrono::month{static_cast<unsigned>(month)},
                                        std::chrono::day{static_cast<unsigned>(day)}};
  if (!ymd.ok()) return std::nullopt;
  const int64_t days = std::chrono::sys_days{ymd}.time_since_epoch().count();
  return days * 86400 + hour * 3600 + minute * 60 + second - offset_seconds;
}

std::string format(int64_t unix_seconds) {
  const int64_t days = unix_seconds >= 0 ? unix_seconds / 86400 : -((-unix_seconds + 86399) / 86400);
  const int64_t rest = unix_seconds - days * 86400;
  const std::chrono::year_month_day ymd{std::chrono::sys_days{std::chrono::days{days}}};
  char buf[40];
  std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02d:%02d:%02dZ", static_cast<int>(ymd.year()),
                static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()),
                static_cast<int>(rest / 3600), static_cast<int>(rest / 60 % 60), static_cast<int>(rest % 60));
  return buf;
}

/// Parses a Go time.Duration string ("1m30s", "2h", "500ms", "-1.5h", "0") into nanoseconds.
std::optional<int64_t> parse_duration(std::string_view s) {
  size_t pos = 0;
  bool negative = false;
  if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) {
    negative = s[pos] == '-';
    ++pos;
  }
  if (s.substr(pos) == "0") return 0;
  if (pos == s.size()) return std::nullopt;
  __int128 total = 0;
  constexpr __int128 kLimit = static_cast<__int128>(std::numeric_limits<int64_t>::max()) + 1;
  while (pos < s.size()) {
    __int128 whole = 0;
    bool any = false;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
      whole = whole * 10 + (s[pos] - '0');
      if (whole > kLimit) return std::nullopt;
      any = true;
      ++pos;
    }
    __int128 frac = 0, frac_scale = 1;
    if (pos < s.size() && s[pos] == '.') {
      ++pos;
      while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
        // Digits beyond nanosecond resolution of the largest unit cannot change the result.
        if (frac_scale < 1'000'000'000'000'000'000) {
          frac = frac * 10 + (s[pos] - '0');
          frac_scale *= 10;
        }
        any = true;
        ++pos;
      }
    }
    if (!any) return std::nullopt;
    const size_t unit_start = pos;
    while (pos < s.size() && s[pos] != '.' && (s[pos] < '0' || s[pos] > '9')) ++pos;
    const std::string_view unit = s.substr(unit_start, pos - unit_start);
    int64_t unit_ns = 0;
    if (unit == "ns") {
      unit_ns = 1;
    } else if (unit == "us" || unit == "\xC2\xB5s" || unit == "\xCE\xBCs") {
      unit_ns = 1'000;
    } else if (unit == "ms") {
      unit_ns = 1'000'000;
    } else if (unit == "s") {
      unit_ns = 1'000'000'000;
    } else if (unit == "m") {
      unit_ns = 60'000'000'000;
    } else if (unit == "h") {
      unit_ns = 3'600'000'000'000;
    } else {
      return std::nullopt;
    }
    total += whole * unit_ns + frac * unit_ns / frac_scale;
    if (total > kLimit) return std::nullopt;
  }
  if (!negative && total == kLimit) return std::nullopt;
  return static_cast<int64_t>(negative ? -total : total);
}

}  // namespace

Result<int64_t> parse_rfc3339(std::string_view text) {
  if (auto t = parse(text)) return *t;
  return Status::error("timestamp \"" + std::string(text) + "\" is not RFC 3339");
}

std::string format_rfc3339(int64_t unix_seconds) {
  return format(unix_seconds);
}

std::string format_micro_time(int64_t unix_us) {
  int64_t seconds = unix_us / 1000000;
  int64_t micros = unix_us % 1000000;
  if (micros < 0) {
    micros += 1000000;
    --seconds;
  }
  std::string whole = format_rfc3339(seconds);  // ends in 'Z'
  char fraction[16];
  std::snprintf(fraction, sizeof fraction, ".%06lld", static_cast<long long>(micros));
  return whole.substr(0, whole.size() - 1) + fraction + "Z";
}

Result<int64_t> parse_micro_time(std::string_view text) {
  auto seconds = parse_rfc3339(text);
  if (!seconds.is_ok()) return seconds.status();
  int64_t micros = 0;
  const size_t dot = text.find('.');
  if (dot != std::string::npos) {
    int digits = 0;
    for (size_t i = dot + 1; i < text.size() && digits < 6 && text[i] >= '0' && text[i] <= '9'; ++i, ++digits) {
      micros = micros * 10 + (text[i] - '0');
    }
    for (; digits < 6; ++digits) micros *= 10;
  }
  return seconds.value() * 1000000 + micros;
}

std::string format_go_duration(int64_t ns) {
  if (ns == 0) return "0s";
  std::string sign = ns < 0 ? "-" : "";
  const unsigned __int128 mag = ns < 0 ? static_cast<unsigned __int128>(-static_cast<__int128>(ns))
                                       : static_cast<unsigned __int128>(ns);
  auto with_fraction = [](uint64_t v, uint64_t unit, int unit_digits) {
    std::string out = std::to_string(v / unit);
    uint64_t frac = v % unit;
    if (frac != 0) {
      std::string f = std::to_string(frac);
      f.insert(0, static_cast<size_t>(unit_digits) - f.size(), '0');
      while (!f.empty() && f.back() == '0') f.pop_back();
      out += "." + f;
    }
    return out;
  };
  const auto v = static_cast<uint64_t>(mag);
  if (v < 1'000) return sign + std::to_string(v) + "ns";
  if (v < 1'000'000) return sign + with_fraction(v, 1'000, 3) + "us";
  if (v < 1'000'000'000) return sign + with_fraction(v, 1'000'000, 6) + "ms";
  std::string out = sign;
  const uint64_t hours = v / 3'600'000'000'000;
  const uint64_t minutes = v / 60'000'000'000 % 60;
  if (hours > 0) out += std::to_string(hours) + "h";
  if (hours > 0 || minutes > 0) out += std::to_string(minutes) + "m";
  return out + with_fraction(v % 60'000'000'000, 1'000'000'000, 9) + "s";
}

Result<int64_t> parse_go_duration_ns(std::string_view text) {
  if (auto ns = parse_duration(text)) return *ns;
  return Status::error("duration \"" + std::string(text) + "\" does not parse");
}

}  // namespace kai::model
