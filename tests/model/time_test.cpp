// RFC 3339 times as Kubernetes writes them: MicroTime to the microsecond (Leases, events.k8s.io).

#include <gtest/gtest.h>

#include "k8s/model/base64.hpp"
#include "k8s/model/time.hpp"

namespace kai::model {
namespace {

TEST(MicroTime, FormatsSixFractionalDigitsAndParsesBack) {
  EXPECT_EQ(format_micro_time(1'700'000'000'000'042), "2023-11-14T22:13:20.000042Z");
  EXPECT_EQ(format_micro_time(-1), "1969-12-31T23:59:59.999999Z");
  auto back = parse_micro_time("2023-11-14T22:13:20.000042Z");
  ASSERT_TRUE(back.is_ok()) << back.message();
  EXPECT_EQ(back.value(), 1'700'000'000'000'042);
  EXPECT_EQ(parse_micro_time("2023-11-14T22:13:20.5Z").value(), 1'700'000'000'500'000);
  EXPECT_EQ(parse_micro_time("2023-11-14T22:13:20Z").value(), 1'700'000'000'000'000);
  EXPECT_FALSE(parse_micro_time("not a time").is_ok());
}

TEST(Base64, RoundTripsAndRefusesGarbage) {
  EXPECT_EQ(base64_encode(""), "");
  EXPECT_EQ(base64_encode("ab"), "YWI=");
  EXPECT_EQ(base64_decode("YWI=").value(), "ab");
  EXPECT_EQ(base64_decode("YW\nJj").value(), "abc");  // kubeconfigs wrap long values
  EXPECT_FALSE(base64_decode("YWI").is_ok());
  EXPECT_FALSE(base64_decode("!!!!").is_ok());
}

}  // namespace
}  // namespace kai::model
