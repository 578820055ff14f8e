#pragma once
// Dense resource vectors for the hot loops: integers only, no maps of strings.

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace kai::core {

/// Other countable resources (MIG profiles, extended resources) by interned id, sorted by id.
using ScalarResources = std::vector<std::pair<uint32_t, int64_t>>;

/// CPU in millicores, memory in bytes, whole GPUs in milli-GPUs (fractional GPUs live in shared GPU
/// groups, never here), pod slots, and other scalar resources in milli-units.
struct Resources {
  int64_t milli_cpu = 0;
  int64_t memory = 0;
  int64_t milli_gpu = 0;
  int64_t pods = 0;
  ScalarResources scalars;

  Resources& operator+=(const Resources& o) {
    milli_cpu += o.milli_cpu;
    memory += o.memory;
    milli_gpu += o.milli_gpu;
    pods += o.pods;
    for (const auto& [id, v] : o.scalars) add_scalar(id, v);
    return *this;
  }
  Resources& operator-=(const Resources& o) {
    milli_cpu -= o.milli_cpu;
    memory -= o.memory;
    milli_gpu -= o.milli_gpu;
    pods -= o.pods;
    for (const auto& [id, v] : o.scalars) add_scalar(id, -v);
    return *this;
  }
  friend Resources operator+(Resources a, const Resources& b) { return a += b; }
  friend Resources operator-(Resources a, const Resources& b) { return a -= b; }
  bool operator==(const Resources& o) const = default;

  int64_t scalar(uint32_t id) const {
    auto it = std::lower_bound(scalars.begin(), scalars.end(), std::make_pair(id, INT64_MIN));
    return it != scalars.end() && it->first == id ? it->second : 0;
  }
  void add_scalar(uint32_t id, int64_t v) {
    auto it = std::lower_bound(scalars.begin(), scalars.end(), std::make_pair(id, INT64_MIN));
    if (it != scalars.end() && it->first == id) {
      it->second += v;
    } else {
      scalars.insert(it, {id, v});
    }
  }
  /// True when every component of *this is <= the same component of `avail`.
  bool fits_in(const Resources& avail) const {
    if (milli_cpu > avail.milli_cpu || memory > avail.memory || milli_gpu > avail.milli_gpu ||
        pods > avail.pods) {
      return false;
    }
    for (const auto& [id, v] : scalars) {
      if (v > avail.scalar(id)) return false;
    }
    return true;
  }
  bool is_zero() const {
    if (milli_cpu || memory || milli_gpu || pods) return false;
    for (const auto& s : scalars) {
      if (s.second) return false;
    }
    return true;
  }
};

}  // namespace kai::core
