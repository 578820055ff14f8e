#include "storage/crc32c.hpp"

#include <gtest/gtest.h>

namespace kai::storage {
namespace {

TEST(Crc32c, KnownValues) {
  // The check value of CRC-32C and the iSCSI test vectors (RFC 3720 B.4).
  EXPECT_EQ(crc32c("123456789"), 0xE3069283u);
  EXPECT_EQ(crc32c(std::string(32, '\0')), 0x8A9136AAu);
  EXPECT_EQ(crc32c(std::string(32, '\xff')), 0x62A8AB43u);
  EXPECT_EQ(crc32c(""), 0u);
}

TEST(Crc32c, HardwareAndTableAgree) {
  std::string data;
  for (int n = 0; n < 300; ++n) {
    EXPECT_EQ(crc32c(data, 77), crc32c_portable(data, 77)) << n;
    data.push_back(static_cast<char>(n * 131 + 7));
  }
  EXPECT_EQ(crc32c_portable("123456789"), 0xE3069283u);
}

TEST(Crc32c, Streams) {
  EXPECT_EQ(crc32c("6789", crc32c("12345")), crc32c("123456789"));
}

}  // namespace
}  // namespace kai::storage
