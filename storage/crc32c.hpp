#pragma once
// CRC-32C (Castagnoli), the checksum of every log record: the SSE 4.2 instruction where the CPU has
// it, a byte-wise table otherwise (both give the same values; a test checks that).

#include <cstdint>
#include <string_view>

namespace kai::storage {

/// CRC-32C of `data`, continuing from `crc` (0 to start). crc32c("123456789") == 0xE3069283.
uint32_t crc32c(std::string_view data, uint32_t crc = 0);

/// The table-driven version, whatever the CPU (for tests and as the fallback).
uint32_t crc32c_portable(std::string_view data, uint32_t crc = 0);

}  // namespace kai::storage
