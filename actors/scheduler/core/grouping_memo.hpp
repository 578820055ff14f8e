#pragma once
// What the pod grouper decided for each pod at the last grouping, kept between the cycles of one
// caller (the daemon), so that a pod whose object and owners did not change is not grouped again
// (docs/pod-grouping.md "Kept between cycles", docs/performance-targets.md "Between cycles"). It
// changes no result: group_pods with a memo returns what it returns without one (GroupingMemo
// property tests in tests/core/grouping_memo_test.cpp). Not thread-safe: one caller, one thread.
//
// Entries are keyed by the pod object's address. That is sound only while the objects the entries
// were made from are alive, so that no other object can take their address: the caller hands over
// an owner of the objects (`hold`) before each grouping, and the memo keeps the owner of the last
// one. A grouping without an owner neither reads nor writes the memo.

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <boost/unordered/unordered_flat_map.hpp>

#include "actors/scheduler/core/pod_grouper.hpp"
#include "k8s/model/objects.hpp"

namespace kai::core {


class GroupingMemo {
 public:
  /// The objects of the next grouping stay alive while `owner` does (for the daemon: its cut).
  void hold(std::shared_ptr<const void> owner) {
    next_owner_ = std::move(owner);
    next_also_.clear();
  }
  /// More objects of the next grouping, beside the owner's: the pods a cycle patched with its assumed
  /// decisions (cycle.cpp), which the cut does not own. A grouping that ran without them alive could
  /// take an entry of a freed copy for a new copy at its address.
  void hold_also(std::shared_ptr<const void> owner) { next_also_.push_back(std::move(owner)); }

  /// What a grouping compares before it reuses anything: everything the grouper reads besides the
  /// pod itself, its owners and the PodGroups it looks up.
  struct Context {
    std::vector<const model::PriorityClass*> priority_classes;
    std::vector<std::string> served_owner_kinds;
    std::string scheduler_name;
    std::string default_queue;
    bool search_legacy_pod_groups = true;
    bool knative_gang_schedule = true;
    bool pod_group_metadata = true;
    bool operator==(const Context&) const = default;
  };

  /// Starts a grouping: false (and the memo forgets everything) when no owner was handed over or
  /// the grouper would read other pods (an MPI launcher, a Spark driver, Knative revisions), which
  /// the entries do not follow.
  /// `owners` are the grouping's owner objects: a pod with ownerReferences reuses its entry only
  /// when they are the very objects of the last grouping.
  bool begin(Context context, std::vector<const model::WorkloadOwner*> owners, bool reads_other_pods);

  /// The grouper's spec for `pod` from the last grouping, if `pod` is the same object, its owners
  /// are unchanged (when it has any) and each PodGroup it looked up is still what `find` returns.
  template <class Find>
  std::shared_ptr<const GroupSpec> find(const model::Pod* pod, const Find& find_pod_group);

  /// Records what the grouper decided for `pod` in this grouping.
  void keep(const model::Pod* pod, std::shared_ptr<const GroupSpec> spec, std::vector<PodGroupLookup> lookups);

  /// Ends a grouping: entries of pods it did not see are dropped, and the memo holds this grouping's
  /// objects (and no longer the previous ones).
  void end();

  /// Holds the last grouping's objects for one more grouping of the very same objects: a kept
  /// session that grouped the cut and then could not be kept (session_relayout.cpp), whose cycle
  /// builds a session from that cut next. The caller's next `hold` replaces it.
  void rehold() {
    next_owner_ = owner_;
    next_also_ = also_;
  }

  /// Entries held (for tests and the bench).
  size_t size() const { return entries_.size(); }
  /// Specs reused by the last grouping (for tests and the bench).
  size_t reused() const { return reused_; }

 private:
  struct Entry {
    std::shared_ptr<const GroupSpec> spec;
    std::vector<PodGroupLookup> lookups;
    uint64_t seen = 0;  ///< The grouping that last saw the pod.
  };
  /// Open addressing: a session's 150,000 entries without a node each.
  boost::unordered_flat_map<const model::Pod*, Entry> entries_;
  std::shared_ptr<const void> owner_;
  std::shared_ptr<const void> next_owner_;
  std::vector<std::shared_ptr<const void>> also_;
  std::vector<std::shared_ptr<const void>> next_also_;
  Context context_;
  std::vector<const model::WorkloadOwner*> owners_;
  bool owners_same_ = false;
  bool active_ = false;
  uint64_t grouping_ = 0;
  size_t reused_ = 0;
};

template <class Find>
std::shared_ptr<const GroupSpec> GroupingMemo::find(const model::Pod* pod, const Find& find_pod_group) {
  if (!active_) return nullptr;
  auto it = entries_.find(pod);
  if (it == entries_.end()) return nullptr;
  Entry& e = it->second;
  if (!pod->meta.owner_references.empty() && !owners_same_) return nullptr;
  for (const PodGroupLookup& l : e.lookups) {
    if (find_pod_group(l.namespace_, l.name) != l.found) return nullptr;
  }
  e.seen = grouping_;
  ++reused_;
  return e.spec;
}

}  // namespace kai::core
