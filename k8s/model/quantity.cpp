#include "k8s/model/quantity.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace kai::model {
namespace {

// The arithmetic is done on decimal digit vectors rather than on a fixed-width integer because the
// grammar allows any number of digits ("0.000000000000000000000001" must round up to 1m, not to 0).
// Values that matter fit in int64 milli-units, so the vectors stay short in practice.

/// Multiplies a big-endian decimal digit vector in place by a small factor.
void multiply_digits(std::vector<uint8_t>& digits, uint32_t factor) {
  uint64_t carry = 0;
  for (auto it = digits.rbegin(); it != digits.rend(); ++it) {
    const uint64_t v = static_cast<uint64_t>(*it) * factor + carry;
    *it = static_cast<uint8_t>(v % 10);
    carry = v / 10;
  }
  while (carry > 0) {
    digits.insert(digits.begin(), static_cast<uint8_t>(carry % 10));
    carry /= 10;
  }
}

struct Suffix {
  std::string_view text;
  int binary_power;   ///< Multiplier 2^binary_power (Ki = 10, ...).
  int decimal_power;  ///< Multiplier 10^decimal_power (k = 3, m = -3, ...).
};

// A table, a few suffixes to a line.
// clang-format off
constexpr std::array<Suffix, 16> kSuffixes{{
    {"Ki", 10, 0}, {"Mi", 20, 0}, {"Gi", 30, 0}, {"Ti", 40, 0}, {"Pi", 50, 0}, {"Ei", 60, 0},
    {"n", 0, -9},  {"u", 0, -6},  {"m", 0, -3},  {"", 0, 0},
    {"k", 0, 3},   {"M", 0, 6},   {"G", 0, 9},   {"T", 0, 12},  {"P", 0, 15},  {"E", 0, 18}}};
// clang-format on

Status syntax_error(std::string_view text, std::string_view why) {
  return Status::error("quantity \"" + std::string(text) + "\" does not parse: " + std::string(why));
}

/// Parses a decimal exponent "[+-]digits". Saturates far beyond any meaningful value, because an
/// exponent of a million either overflows int64 or rounds to the smallest milli-unit all the same.
bool parse_exponent(std::string_view s, int64_t& out) {
  size_t i = 0;
  bool negative = false;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) {
    negative = s[i] == '-';
    ++i;
  }
  if (i == s.size()) return false;
  int64_t v = 0;
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = std::min<int64_t>(v * 10 + (s[i] - '0'), 1'000'000'000);
  }
  out = negative ? -v : v;
  return true;
}

}  // namespace

Result<int64_t> parse_quantity_milli(std::string_view text) {
  if (text.empty()) return syntax_error(text, "empty");
  size_t pos = 0;
  bool negative = false;
  if (text[pos] == '+' || text[pos] == '-') {
    negative = text[pos] == '-';
    ++pos;
  }
  // Mantissa: integer digits, optional point, fraction digits; at least one digit in all.
  std::vector<uint8_t> digits;
  int64_t fraction_digits = 0;
  bool any_digit = false;
  while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
    digits.push_back(static_cast<uint8_t>(text[pos] - '0'));
    any_digit = true;
    ++pos;
  }
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
      digits.push_back(static_cast<uint8_t>(text[pos] - '0'));
      ++fraction_digits;
      any_digit = true;
      ++pos;
    }
  }
  if (!any_digit) return syntax_error(text, "no digits");

  const std::string_view suffix = text.substr(pos);
  int binary_power = 0;
  int64_t decimal_power = 0;
  const auto known =
      std::find_if(kSuffixes.begin(), kSuffixes.end(), [&](const Suffix& s) { return s.text == suffix; });
  if (known != kSuffixes.end()) {
    binary_power = known->binary_power;
    decimal_power = known->decimal_power;
  } else if (suffix.size() > 1 && (suffix[0] == 'e' || suffix[0] == 'E')) {
    if (!parse_exponent(suffix.substr(1), decimal_power)) return syntax_error(text, "bad exponent");
  } else {
    return syntax_error(text, "unknown suffix \"" + std::string(suffix) + "\"");
  }

  // value in milli-units = digits * 2^binary_power * 10^(decimal_power - fraction_digits + 3)
  for (int i = 0; i < binary_power; i += 10) multiply_digits(digits, 1024);
  const int64_t scale = decimal_power - fraction_digits + 3;

  // Split into the integer part (kept digits) and whether a non-zero remainder was dropped.
  bool remainder = false;
  if (scale < 0) {
    const uint64_t drop = static_cast<uint64_t>(-scale);
    const size_t keep = drop >= digits.size() ? 0 : digits.size() - static_cast<size_t>(drop);
    remainder = std::any_of(digits.begin() + static_cast<std::ptrdiff_t>(keep), digits.end(),
                            [](uint8_t d) { return d != 0; });
    digits.resize(keep);
  }
  const auto first_nonzero = std::find_if(digits.begin(), digits.end(), [](uint8_t d) { return d != 0; });
  digits.erase(digits.begin(), first_nonzero);
  const size_t zeros_to_append = scale > 0 ? static_cast<size_t>(std::min<int64_t>(scale, 100)) : 0;
  if (!digits.empty() && digits.size() + zeros_to_append > 20) {
    return Status::error("quantity \"" + std::string(text) + "\" is too large");
  }
  if (!digits.empty()) digits.insert(digits.end(), zeros_to_append, 0);

  unsigned __int128 magnitude = 0;
  for (uint8_t d : digits) magnitude = magnitude * 10 + d;
  // Round toward +infinity, like Quantity.MilliValue() on positive values: a positive value with a
  // dropped remainder goes up, a negative one goes toward zero.
  if (remainder && !negative) magnitude += 1;
  const unsigned __int128 limit =
      negative ? static_cast<unsigned __int128>(std::numeric_limits<int64_t>::max()) + 1
               : static_cast<unsigned __int128>(std::numeric_limits<int64_t>::max());
  if (magnitude > limit) return Status::error("quantity \"" + std::string(text) + "\" is too large");
  if (negative) return static_cast<int64_t>(-static_cast<__int128>(magnitude));
  return static_cast<int64_t>(magnitude);
}

std::string format_quantity_milli(int64_t milli) {
  if (milli % 1000 == 0) return std::to_string(milli / 1000);
  return std::to_string(milli) + "m";
}

}  // namespace kai::model
