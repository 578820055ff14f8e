#pragma once
// The GPU groups the pods of a cut use, node by node: what the clean-up of orphaned reservation
// pods asks each cycle (cycle.cpp find_orphaned_reservations). Counted once from every pod, then
// kept with the session, following the pods a refresh replaced and those a relayout found gone or
// come (session_refresh.cpp, session_relayout.cpp): a cycle at 150,000 pods no longer reads every
// pod's labels to answer for a few thousand reservation pods.

#include <boost/unordered/unordered_flat_map.hpp>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "actors/scheduler/core/name_key.hpp"
#include "k8s/model/objects.hpp"
#include "k8s/model/well_known_names.hpp"

namespace kai::core {

/// Calls `visit` with each GPU group `pod`'s labels name: runai-gpu-group, and runai-gpu-group/<n>
/// (its value, or <n> when the value is empty) for a pod holding several devices.
template <class Visit>
void for_each_gpu_group(const model::Pod& pod, const Visit& visit) {
  // The labels are ordered: only those from the label's name on are read.
  const std::string_view label = model::kGpuGroupLabel;
  for (auto it = pod.meta.labels.lower_bound(std::string(label)); it != pod.meta.labels.end(); ++it) {
    const auto& [k, v] = *it;
    if (!std::string_view(k).starts_with(label)) break;
    if (k.size() == label.size()) {
      visit(std::string_view(v));
    } else if (k[label.size()] == '/') {
      visit(v.empty() ? std::string_view(k).substr(label.size() + 1) : std::string_view(v));
    }
  }
}

/// Whether `pod` has finished (its phase Succeeded or Failed).
inline bool pod_finished(const model::Pod& pod) {
  // Views: their comparison checks the length first, where a C string's is measured each time.
  using namespace std::string_view_literals;
  return pod.phase == "Succeeded"sv || pod.phase == "Failed"sv;
}

class GpuGroupUsers {
 public:
  /// The groups the pods of `pods` use.
  explicit GpuGroupUsers(const std::vector<const model::Pod*>& pods) {
    for (const model::Pod* pod : pods) count(*pod, +1);
  }

  /// Counts what `pod` uses (`sign` +1) or takes it back (-1). A pod uses the groups its labels name
  /// on its node while it is placed, not finished and not a reservation pod itself.
  void count(const model::Pod& pod, int sign) {
    if (pod.node_name.empty() || pod_finished(pod)) return;
    if (pod.meta.namespace_ == std::string_view(model::kReservationNamespace)) return;
    for_each_gpu_group(pod, [&](std::string_view group) {
      auto it = users_.find(NameKey{pod.node_name, group});
      if (it == users_.end()) it = users_.emplace(Key{pod.node_name, std::string(group)}, 0).first;
      it->second += sign;
      if (it->second == 0) users_.erase(it);
    });
  }

  /// Counts `after` in place of `before`.
  void replace(const model::Pod& before, const model::Pod& after) {
    count(before, -1);
    count(after, +1);
  }

  /// Whether a pod on `node` uses `group`.
  bool in_use(std::string_view node, std::string_view group) const {
    return users_.contains(NameKey{node, group});
  }

  /// (node, group) pairs in use.
  size_t size() const { return users_.size(); }
  /// Same pairs, used by as many pods (a kept count against one taken afresh, in tests).
  bool operator==(const GpuGroupUsers& other) const { return users_ == other.users_; }

 private:
  using Key = std::pair<std::string, std::string>;
  /// Hashes and compares owned keys and views alike, so a lookup builds no string.
  struct Hash {
    using is_transparent = void;
    size_t operator()(const Key& k) const { return name_key_hash(k.first, k.second); }
    size_t operator()(const NameKey& k) const { return name_key_hash(k.first, k.second); }
  };
  struct Equal {
    using is_transparent = void;
    static NameKey view(const Key& k) { return {k.first, k.second}; }
    static NameKey view(const NameKey& k) { return k; }
    template <class A, class B>
    bool operator()(const A& a, const B& b) const {
      return view(a) == view(b);
    }
  };
  /// Pods using each (node, group); pairs no pod uses are erased.
  boost::unordered_flat_map<Key, int32_t, Hash, Equal> users_;
};

}  // namespace kai::core
