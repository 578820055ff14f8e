#pragma once
// A pod of a cut by its key "namespace/name", without building a key per pod: a binary search,
// exact when the pods are in key order (the daemon's cut and the projection's are), then, for a key
// it misses, an index of the pods by (namespace, name) made once (refs in another order, a pod gone).
// The cycle asks it for each decision still assumed (cycle.cpp): a few, against 150,000 pods.

#include <boost/unordered/unordered_flat_map.hpp>
#include <cstddef>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "actors/scheduler/core/name_key.hpp"
#include "k8s/model/objects.hpp"

namespace kai::core {

class PodFinder {
 public:
  explicit PodFinder(const std::vector<const model::Pod*>& pods) : pods_(pods) {}

  /// The position of pod `key` in the pods, or npos.
  size_t find(std::string_view key);

  /// The order of "namespace/name" of `meta` against `key`, as strings compare (negative, 0, positive).
  static int compare_key(const model::ObjectMeta& meta, std::string_view key);

  static constexpr size_t npos = static_cast<size_t>(-1);

 private:
  const std::vector<const model::Pod*>& pods_;
  std::optional<boost::unordered_flat_map<NameKey, size_t, NameKeyHash>> index_;
};

}  // namespace kai::core
