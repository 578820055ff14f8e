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

#include <boost/unordered/unordered_flat_map.hpp>
#include <boost/unordered/unordered_flat_set.hpp>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

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

  /// Whether a grouping of objects with `context` and `owners` may go on from the last one instead of
  /// grouping every pod (regroup_pods, regrouping.hpp): the last grouping kept its entries, the next
  /// objects have an owner, and the context and owners are the same.
  bool can_continue(const Context& context, const std::vector<const model::WorkloadOwner*>& owners) const {
    return owner_ != nullptr && next_owner_ != nullptr && context == context_ && owners == owners_;
  }
  /// Starts a grouping that decides only some pods (after can_continue): the entries of the others
  /// stay, whether or not it sees them, so the caller forgets those of pods gone (`forget`).
  void begin_continued() {
    ++continued_;
    ++grouping_;
    reused_ = 0;
    active_ = true;
    owners_same_ = true;
  }
  /// Ends a grouping begun with begin_continued: like `end`, but no entry is dropped for not being seen.
  void end_continued();
  /// Drops the entry of `pod`, an object the next grouping will not see (gone, or replaced by an
  /// object the grouper reads the same: SessionKeeper's refresh in place).
  void forget(const model::Pod* pod) { entries_.erase(pod); }
  /// Whether some pod's spec may have looked up the PodGroup `ns`/`name` (its absence included) since
  /// the last grouping that saw every pod: a PodGroup of that name that came or went may change it.
  /// Never false for one that did; now and then true for one that did not (names are hashed).
  bool may_have_looked_up(std::string_view ns, std::string_view name) const {
    return looked_up_.contains(lookup_hash(ns, name));
  }

  /// Where the last grouping put each pod and each group's name, for a grouping that goes on from it
  /// (regroup_pods): set by group_pods and regroup_pods when they use the memo.
  struct Layout {
    bool valid = false;
    std::vector<int32_t> group_of_pod;  ///< By position in the grouped objects' pods: its group, or -1.
    std::vector<uint64_t> name_hash;    ///< By group: name_hash(namespace, name).
    /// By name hash: the group, or kSeveral when groups share the hash.
    boost::unordered_flat_map<uint64_t, int32_t> group_by_hash;
    static constexpr int32_t kSeveral = -2;
    /// Indexes `name_hash` into `group_by_hash`.
    void index_names();
  };
  Layout& layout() { return layout_; }
  static uint64_t name_hash(std::string_view ns, std::string_view name) { return lookup_hash(ns, name); }

  /// Holds the last grouping's objects for one more grouping of the very same objects: a kept
  /// session that grouped the cut and then could not be kept (session_relayout.cpp), whose cycle
  /// builds a session from that cut next. The caller's next `hold` replaces it.
  void rehold() {
    next_owner_ = owner_;
    next_also_ = also_;
  }

  /// The pods that have entries (for tests: each must be an object the memo holds).
  std::vector<const model::Pod*> pods() const {
    std::vector<const model::Pod*> out;
    for (const auto& [pod, entry] : entries_) out.push_back(pod);
    return out;
  }
  /// Entries held (for tests and the bench).
  size_t size() const { return entries_.size(); }
  /// Groupings that went on from the last one (for tests and the bench).
  uint64_t continued() const { return continued_; }
  /// Specs reused by the last grouping (for tests and the bench).
  size_t reused() const { return reused_; }

 private:
  struct Entry {
    std::shared_ptr<const GroupSpec> spec;
    std::vector<PodGroupLookup> lookups;
    uint64_t seen = 0;  ///< The grouping that last saw the pod.
  };
  static uint64_t lookup_hash(std::string_view ns, std::string_view name);
  /// Open addressing: a session's 150,000 entries without a node each.
  boost::unordered_flat_map<const model::Pod*, Entry> entries_;
  /// The hashes of the PodGroups the entries looked up, since the last `end` (which makes it anew
  /// from the entries); entries forgotten since leave theirs.
  boost::unordered_flat_set<uint64_t> looked_up_;
  Layout layout_;
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
  uint64_t continued_ = 0;
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
