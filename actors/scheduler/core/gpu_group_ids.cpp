#include "actors/scheduler/core/gpu_group_ids.hpp"

#include <cstdio>

namespace kai::core {
namespace {

/// 64-bit FNV-1a of `text` then `index`, from `basis`: fixed across builds and platforms, since the
/// ids reach the log and replay must make the same ones.
uint64_t fnv1a(const std::string& text, size_t index, uint64_t basis) {
  constexpr uint64_t kPrime = 0x100000001b3ULL;
  uint64_t h = basis;
  for (const char c : text) {
    h ^= static_cast<unsigned char>(c);
    h *= kPrime;
  }
  for (int i = 0; i < 8; ++i) {
    h ^= (static_cast<uint64_t>(index) >> (8 * i)) & 0xff;
    h *= kPrime;
  }
  return h;
}

}  // namespace

std::string format_gpu_group_id(uint64_t hi, uint64_t lo) {
  unsigned char b[16];
  for (int i = 0; i < 8; ++i) {
    b[i] = static_cast<unsigned char>(hi >> (56 - 8 * i));
    b[8 + i] = static_cast<unsigned char>(lo >> (56 - 8 * i));
  }
  b[6] = static_cast<unsigned char>((b[6] & 0x0f) | 0x40);
  b[8] = static_cast<unsigned char>((b[8] & 0x3f) | 0x80);
  char out[37];
  std::snprintf(out, sizeof(out), "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
                b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
                b[15]);
  return out;
}

std::string unnamed_gpu_group_id(const std::string& pod_uid, size_t index) {
  constexpr uint64_t kBasis = 0xcbf29ce484222325ULL;  // FNV-1a's offset basis
  return format_gpu_group_id(fnv1a(pod_uid, index, kBasis), fnv1a(pod_uid, index, ~kBasis));
}

}  // namespace kai::core
