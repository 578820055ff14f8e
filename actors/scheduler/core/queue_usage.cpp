#include "actors/scheduler/core/queue_usage.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>

namespace kai::core {
namespace {

int64_t floor_div(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

int64_t ceil_div(int64_t a, int64_t b) {
  return -floor_div(-a, b);
}

/// The samples a window holds: times base + j x resolution for j in [first, last] (empty when
/// first > last).
struct Samples {
  int64_t base = 0;
  int64_t first = 0;
  int64_t last = -1;
};

/// KAI's tumbling window: the last reset (start + n x size) before `at`; a start in the future
/// gives an empty window (pkg/scheduler/cache/usagedb/prometheus in KAI's repository).
std::optional<int64_t> last_reset(const UsageParams& p, int64_t at) {
  if (p.window == UsageParams::Window::kCron) {
    // KAI's cron window: the last occurrence of the cron expression before `at`.
    return p.cron ? p.cron->last_before(at) : std::nullopt;
  }
  if (!p.tumbling_start_ms || *p.tumbling_start_ms > at) return std::nullopt;
  const int64_t start = *p.tumbling_start_ms;
  if (p.window_ms <= 0) return at;
  // The first reset not before `at` is start + n x size with n = ceil((at - start) / size), at least 1.
  const int64_t n = std::max<int64_t>(1, ceil_div(at - start, p.window_ms));
  return start + (n - 1) * p.window_ms;
}

Samples samples_of(const UsageParams& p, int64_t at) {
  const int64_t r = std::max<int64_t>(1, p.resolution_ms);
  Samples s;
  if (p.window == UsageParams::Window::kSliding) {
    // A Prometheus subquery [window:resolution]: samples at multiples of the resolution in
    // (at - window, at].
    s.base = 0;
    s.first = floor_div(at - p.window_ms, r) + 1;
    s.last = floor_div(at, r);
    return s;
  }
  // A range query from the last reset to `at`, one sample per resolution step from the reset on.
  const auto reset = last_reset(p, at);
  if (!reset) return s;
  s.base = *reset;
  s.first = 0;
  s.last = floor_div(at - *reset, r);
  return s;
}

/// Sum over samples j in [lo, hi] of the decay weight 0.5^((at - (base + j r)) / half_life).
double weight_sum(const UsageParams& p, const Samples& s, int64_t at, int64_t lo, int64_t hi) {
  if (lo > hi) return 0;
  const auto n = static_cast<double>(hi - lo + 1);
  if (!p.half_life_ms || *p.half_life_ms <= 0) return n;
  const double r = static_cast<double>(std::max<int64_t>(1, p.resolution_ms));
  const double h = static_cast<double>(*p.half_life_ms);
  const double newest_age = static_cast<double>(at - (s.base + hi * std::max<int64_t>(1, p.resolution_ms)));
  const double newest = std::pow(0.5, newest_age / h);
  const double ln_q = (r / h) * std::log(0.5);  // each older sample weighs q = 0.5^(r / h) times the next
  return newest * (std::expm1(n * ln_q) / std::expm1(ln_q));
}

/// How many steps were logged before `at`: a step logged at or after the evaluation time is not
/// known yet to a cycle evaluating at it (usage_at), so every cycle between two fetch steps reads
/// the same usage.
size_t known_steps(const std::vector<AllocationStep>& steps, int64_t at) {
  return static_cast<size_t>(std::lower_bound(steps.begin(), steps.end(), at,
                                              [](const AllocationStep& s, int64_t t) { return s.at_ms < t; }) -
                             steps.begin());
}

/// The decayed sums of a step function over the samples [first, last].
AllocationStep sums_of(const std::vector<AllocationStep>& steps, const UsageParams& p, const Samples& s, int64_t at,
                       int64_t first, int64_t last) {
  AllocationStep out;
  const int64_t r = std::max<int64_t>(1, p.resolution_ms);
  const size_t known = known_steps(steps, at);
  for (size_t i = 0; i < known; ++i) {
    const int64_t from = steps[i].at_ms;
    // The samples this step covers: from its time up to (not including) the next step's.
    int64_t lo = std::max(first, ceil_div(from - s.base, r));
    int64_t hi = last;
    if (i + 1 < known) hi = std::min(hi, ceil_div(steps[i + 1].at_ms - s.base, r) - 1);
    const double w = weight_sum(p, s, at, lo, hi);
    if (w == 0) continue;
    out.gpu += steps[i].gpu * w;
    out.cpu += steps[i].cpu * w;
    out.memory += steps[i].memory * w;
  }
  return out;
}

double share(double used, double capacity) {
  return capacity > 0 ? used / capacity : 0;
}

}  // namespace

model::Result<int64_t> parse_duration_ms(std::string_view text) {
  if (text.empty()) return model::Status::error("empty duration");
  int64_t total = 0;
  size_t i = 0;
  while (i < text.size()) {
    size_t digits = i;
    while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits])) != 0) ++digits;
    if (digits == i) return model::Status::error("duration \"" + std::string(text) + "\": expected a number");
    const int64_t n = std::stoll(std::string(text.substr(i, digits - i)));
    size_t unit_end = digits;
    while (unit_end < text.size() && std::isalpha(static_cast<unsigned char>(text[unit_end])) != 0) ++unit_end;
    const std::string_view unit = text.substr(digits, unit_end - digits);
    int64_t ms = 0;
    if (unit == "ms") {
      ms = 1;
    } else if (unit == "s") {
      ms = 1000;
    } else if (unit == "m") {
      ms = 60 * 1000;
    } else if (unit == "h") {
      ms = 3600 * 1000;
    } else if (unit == "d") {
      ms = int64_t{24} * 3600 * 1000;
    } else if (unit == "w") {
      ms = int64_t{7} * 24 * 3600 * 1000;
    } else if (unit == "y") {
      ms = int64_t{365} * 24 * 3600 * 1000;
    } else {
      return model::Status::error("duration \"" + std::string(text) + "\": unknown unit \"" + std::string(unit) +
                                  "\" (ms, s, m, h, d, w, y)");
    }
    total += n * ms;
    i = unit_end;
  }
  return total;
}

int64_t usage_evaluation_time(const UsageParams& params, int64_t now_ms) {
  const int64_t f = std::max<int64_t>(1, params.fetch_interval_ms);
  return floor_div(now_ms, f) * f;
}

int64_t usage_window_start(const UsageParams& params, int64_t at_ms) {
  if (params.window == UsageParams::Window::kSliding) return at_ms - params.window_ms;
  return last_reset(params, at_ms).value_or(at_ms);
}

std::map<std::string, UsageShare> usage_at(const AllocationHistory& history, const UsageParams& params,
                                           int64_t at_ms) {
  std::map<std::string, UsageShare> out;
  const Samples s = samples_of(params, at_ms);
  int64_t first = s.first;
  // No sample before the history began (its first capacity step).
  const bool begun = known_steps(history.capacity, at_ms) > 0;
  if (begun) {
    first = std::max(first, ceil_div(history.capacity.front().at_ms - s.base, std::max<int64_t>(1, params.resolution_ms)));
  }
  const AllocationStep capacity =
      begun ? sums_of(history.capacity, params, s, at_ms, first, s.last) : AllocationStep{};
  for (const auto& [queue, steps] : history.queues) {
    if (known_steps(steps, at_ms) == 0) continue;  // no step known yet: as a queue without history
    const AllocationStep used = sums_of(steps, params, s, at_ms, first, s.last);
    out[queue] = UsageShare{share(used.gpu, capacity.gpu), share(used.cpu, capacity.cpu),
                            share(used.memory, capacity.memory)};
  }
  return out;
}

}  // namespace kai::core
