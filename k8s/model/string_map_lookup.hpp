#pragma once
// A lookup in a StringMap for passes that read a key of many objects' maps (objects.hpp): the
// session build, the pod grouper, the inter-pod label index, selectors.
//
// A map's keys are ordered, so a binary search compares against the middle key first; keys longer
// than the small-string buffer live in their own heap block, and reading one is a cache miss per
// object. A scan comparing lengths first (string_view's ==) touches a key's characters only when the
// length matches, and builds no std::string of the key; objects carry few labels and annotations.

#include <string>
#include <string_view>

#include "k8s/model/objects.hpp"

namespace kai::model {

/// The value of `key` in `map`, null when absent.
inline const std::string* find_in(const StringMap& map, std::string_view key) {
  constexpr size_t kLinearUpTo = 16;
  if (map.size() > kLinearUpTo) {
    auto it = map.find(std::string(key));
    return it == map.end() ? nullptr : &it->second;
  }
  for (const auto& [k, v] : map) {
    if (std::string_view(k) == key) return &v;
  }
  return nullptr;
}

}  // namespace kai::model
