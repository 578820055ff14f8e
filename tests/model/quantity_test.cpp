#include "k8s/model/quantity.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

namespace kai::model {
namespace {

struct Good {
  const char* text;
  int64_t milli;
};

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

TEST(QuantityTest, ParsesValidQuantities) {
  const Good cases[] = {
      // Plain numbers and decimal points.
      {"0", 0},
      {"1", 1000},
      {"100m", 100},
      {"1.5", 1500},
      {".5", 500},
      {"5.", 5000},
      {"0.001", 1},
      {"+2", 2000},
      {"-2", -2000},
      {"-1.5", -1500},
      {"-0", 0},
      {"007", 7000},
      // Decimal suffixes.
      {"1n", 1},
      {"1000000n", 1},
      {"1000001n", 2},
      {"1u", 1},
      {"1000u", 1},
      {"1500u", 2},
      {"1m", 1},
      {"0.1m", 1},
      {"1.0m", 1},
      {"1k", 1000000},
      {"20G", 20000000000000},
      {"1M", 1000000000},
      {"1T", 1000000000000000},
      {"1P", 1000000000000000000},
      {"9P", 9000000000000000000},
      // Binary suffixes.
      {"1Ki", 1024000},
      {"0.5Ki", 512000},
      {"4Gi", 4294967296000},
      {"1Mi", 1048576000},
      {"1.5Mi", 1572864000},
      {"1Ti", 1099511627776000},
      {"1Pi", 1125899906842624000},
      {"0.001Ki", 1024},  // 1.024 units, exactly 1024m
      {"0.0001Ki", 103},  // 0.1024 units, rounded up
      // Exponents.
      {"1e3", 1000000},
      {"1E3", 1000000},
      {"1E-3", 1},
      {"12e+2", 1200000},
      {"1.5e3", 1500000},
      {"1e-4", 1},
      {"1e-100000", 1},
      {"0e100000", 0},
      {"-1e-4", 0},
      {"-1.5m", -1},
      // Very long fractions still round up.
      {"0.000000000000000000000000000001", 1},
      {"1.000000000000000000000000000001", 1001},
      // Limits.
      {"9223372036854775807m", kMax},
      {"-9223372036854775808m", kMin},
      {"9223372036854775.807", kMax},
  };
  for (const Good& c : cases) {
    auto r = parse_quantity_milli(c.text);
    ASSERT_TRUE(r.is_ok()) << c.text << ": " << r.message();
    EXPECT_EQ(*r, c.milli) << c.text;
  }
}

TEST(QuantityTest, RejectsInvalidQuantities) {
  const char* bad[] = {
      "",
      " ",
      "1 ",
      " 1",
      "abc",
      "1.2.3",
      "Ki",
      "1Kb",
      "1e",
      "1E+",
      "1e3m",
      "1K",
      "1ki",
      "1KiB",
      ".",
      "+",
      "-",
      "m",
      "1..",
      "1,5",
      "--1",
      "1e3.5",
      "0x10",
      "1mm",
      "1 Gi",
      "1Gi ",
      "1e-",
      "e3",
      "1Ei",
      "10E",
      "9223372036854775808m",
      "-9223372036854775809m",
      "1e100",
      "99999999999999999999999",
      "9223372036854775.8071",
  };
  for (const char* text : bad) {
    auto r = parse_quantity_milli(text);
    EXPECT_FALSE(r.is_ok()) << "\"" << text << "\" parsed as " << (r.is_ok() ? *r : 0);
    if (!r.is_ok()) {
      EXPECT_FALSE(r.message().empty());
    }
  }
}

TEST(QuantityTest, ErrorMessagesNameTheInput) {
  auto r = parse_quantity_milli("1Kb");
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.message().find("\"1Kb\""), std::string::npos) << r.message();
}

TEST(QuantityTest, FormatsCanonically) {
  const Good cases[] = {
      {"0", 0},
      {"2", 2000},
      {"1500m", 1500},
      {"1m", 1},
      {"-1500m", -1500},
      {"-2", -2000},
      {"100m", 100},
      {"4294967296", 4294967296000},
      {"9223372036854775807m", kMax},
      {"-9223372036854775808m", kMin},
  };
  for (const Good& c : cases) EXPECT_EQ(format_quantity_milli(c.milli), c.text) << c.milli;
}

TEST(QuantityTest, FormatThenParseIsIdentity) {
  const int64_t values[] = {0, 1, -1, 999, 1000, 1001, 123456789, -987654321000, kMax, kMin};
  for (int64_t v : values) {
    auto r = parse_quantity_milli(format_quantity_milli(v));
    ASSERT_TRUE(r.is_ok()) << v;
    EXPECT_EQ(*r, v);
  }
}

}  // namespace
}  // namespace kai::model
