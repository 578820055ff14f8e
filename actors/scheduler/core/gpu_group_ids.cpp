#include "actors/scheduler/core/gpu_group_ids.hpp"

#include <cstdio>
#include <string_view>

#include "k8s/model/fnv1a.hpp"

namespace kai::core {
namespace {

/// FNV-1a (k8s/model/fnv1a.hpp) of `text` then of `index`'s 8 bytes, lowest first, from `basis`.
uint64_t hash_of(const std::string& text, size_t index, uint64_t basis) {
  char bytes[8];
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<char>((static_cast<uint64_t>(index) >> (8 * i)) & 0xff);
  return model::fnv1a64(std::string_view(bytes, sizeof bytes), model::fnv1a64(text, basis));
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
  return format_gpu_group_id(hash_of(pod_uid, index, model::kFnv1aBasis),
                             hash_of(pod_uid, index, ~model::kFnv1aBasis));
}

}  // namespace kai::core
