#pragma once
// A pair of names (namespace and name, node and GPU group) viewing strings held elsewhere, and its
// hash: the key of the lookups that must not build "namespace/name" per object (the grouping, the
// cycle's pod finder and reservation check, the grouping memo's name hashes).

#include <cstddef>
#include <functional>
#include <string_view>
#include <utility>

namespace kai::core {

using NameKey = std::pair<std::string_view, std::string_view>;

inline size_t name_key_hash(std::string_view first, std::string_view second) {
  const size_t h = std::hash<std::string_view>{}(first);
  return h ^ (std::hash<std::string_view>{}(second) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2));
}

struct NameKeyHash {
  size_t operator()(const NameKey& k) const { return name_key_hash(k.first, k.second); }
};

}  // namespace kai::core
