#pragma once
// CRC-32C (Castagnoli), the checksum of every log record. Table-driven, one byte per step: fast enough
// next to an fsync and free of CPU-specific code.

#include <cstdint>
#include <string_view>

namespace kai::storage {

/// CRC-32C of `data`, continuing from `crc` (0 to start). crc32c("123456789") == 0xE3069283.
uint32_t crc32c(std::string_view data, uint32_t crc = 0);

}  // namespace kai::storage
