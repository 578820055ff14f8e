#pragma once
// 64-bit FNV-1a: a hash fixed across builds and platforms, for values that reach the event log or
// the cluster (configuration hashes, GPU-group ids, the test API server's GPU UUIDs), where replay
// and a later build must compute the same ones.

#include <cstdint>
#include <string_view>

namespace kai::model {

/// FNV-1a's offset basis.
inline constexpr uint64_t kFnv1aBasis = 0xcbf29ce484222325ULL;

/// FNV-1a of `text`, continuing from `h` (a basis, or the hash of what came before).
inline uint64_t fnv1a64(std::string_view text, uint64_t h = kFnv1aBasis) {
  constexpr uint64_t kPrime = 0x100000001b3ULL;
  for (const char c : text) h = (h ^ static_cast<unsigned char>(c)) * kPrime;
  return h;
}

}  // namespace kai::model
