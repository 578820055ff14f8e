#pragma once
// A lookup in a StringMap for passes that read one key of many objects' maps (objects.hpp).
//
// A map's keys are ordered, so a binary search compares against the middle key first; keys longer
// than the small-string buffer live in their own heap block, and reading one is a cache miss per
// object. Comparing lengths first touches a key's characters only when the length matches, which
// for the few labels an object carries is also fewer comparisons.

#include <string>
#include <string_view>

#include "k8s/model/objects.hpp"

namespace kai::model {

/// The value of `key` in `map`, null when absent.
inline const std::string* find_by_length_first(const StringMap& map, std::string_view key) {
  constexpr size_t kLinearUpTo = 16;
  if (map.size() > kLinearUpTo) {
    auto it = map.find(std::string(key));
    return it == map.end() ? nullptr : &it->second;
  }
  for (const auto& [k, v] : map) {
    if (k.size() == key.size() && std::string_view(k) == key) return &v;
  }
  return nullptr;
}

}  // namespace kai::model
