#include "actors/scheduler/core/grouping_memo.hpp"

#include "actors/scheduler/core/name_key.hpp"

namespace kai::core {

bool GroupingMemo::begin(Context context, std::vector<const model::WorkloadOwner*> owners, bool reads_other_pods) {
  ++grouping_;
  reused_ = 0;
  layout_.valid = false;
  active_ = next_owner_ != nullptr && !reads_other_pods;
  if (!active_ || !(context == context_)) {
    entries_.clear();
    looked_up_.clear();
  }
  owners_same_ = active_ && owners == owners_;
  context_ = std::move(context);
  owners_ = std::move(owners);
  if (!active_) {
    // Nothing is kept: the objects of this grouping have no owner to outlive it by.
    owner_.reset();
    next_owner_.reset();
    also_.clear();
    next_also_.clear();
  }
  return active_;
}

void GroupingMemo::keep(const model::Pod* pod, std::shared_ptr<const GroupSpec> spec,
                        std::vector<PodGroupLookup> lookups) {
  if (!active_) return;
  for (const PodGroupLookup& l : lookups) looked_up_.insert(lookup_hash(l.namespace_, l.name));
  Entry& e = entries_[pod];
  e.spec = std::move(spec);
  e.lookups = std::move(lookups);
  e.seen = grouping_;
}

void GroupingMemo::end() {
  if (!active_) return;
  // An entry not seen now may name an object that is freed once the last grouping's owner goes, and
  // whose address a new object may then take: it goes first.
  boost::unordered::erase_if(entries_, [this](const auto& entry) { return entry.second.seen != grouping_; });
  looked_up_.clear();
  for (const auto& [pod, entry] : entries_) {
    for (const PodGroupLookup& l : entry.lookups) looked_up_.insert(lookup_hash(l.namespace_, l.name));
  }
  owner_ = std::move(next_owner_);
  next_owner_.reset();
  also_ = std::move(next_also_);
  next_also_.clear();
  active_ = false;
}

void GroupingMemo::end_continued() {
  if (!active_) return;
  owner_ = std::move(next_owner_);
  next_owner_.reset();
  also_ = std::move(next_also_);
  next_also_.clear();
  active_ = false;
}

void GroupingMemo::Layout::index_names() {
  group_by_hash.clear();
  group_by_hash.reserve(name_hash.size());
  for (size_t g = 0; g < name_hash.size(); ++g) {
    auto [it, added] = group_by_hash.emplace(name_hash[g], static_cast<int32_t>(g));
    if (!added) it->second = kSeveral;
  }
}

uint64_t GroupingMemo::lookup_hash(std::string_view ns, std::string_view name) {
  return name_key_hash(ns, name);
}

}  // namespace kai::core
