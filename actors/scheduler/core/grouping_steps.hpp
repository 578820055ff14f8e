#pragma once
// The steps of grouping one pod, shared by group_pods (grouping.cpp), which groups every pod, and
// regroup_pods (regrouping.cpp), which groups only the pods a cut added or replaced: both decide a
// pod and put it in its group with the same code, so that they give the same groups.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "actors/scheduler/core/grouping.hpp"
#include "actors/scheduler/core/grouping_memo.hpp"
#include "actors/scheduler/core/name_key.hpp"

namespace kai::core::grouping_steps {

/// A group's (namespace, name), viewing strings that outlive the map.
using core::NameKey;
using core::NameKeyHash;

/// The owners, priority classes and owner kinds the grouper reads, indexed.
OwnerIndex index_owners(const model::ObjectRefs& objects);

/// The memo's context for a grouping of `objects` (GroupingMemo::Context).
GroupingMemo::Context memo_context(const model::ObjectRefs& objects, const std::string& scheduler_name,
                                   const std::string& default_queue, const GrouperFlags& flags);

/// What the grouping decides for one pod of the scheduler: the group it joins and what it brings.
struct PodDecision {
  const std::string* named = nullptr;  ///< Its pod-group-name annotation, when set.
  std::shared_ptr<const GroupSpec> spec;
  std::pair<std::string, std::string> invalid;
  std::string skipped_name;  ///< The name of the group of a pod that skips the grouper and names none.
  const std::string& group_name() const {
    return named != nullptr ? *named : spec ? spec->name : skipped_name;
  }
};

/// Decides `pod` (of the scheduler). With `memo` (begun), the grouper's spec is taken from it when it
/// still holds, else decided and kept; `find_pod_group` answers the memo's lookups.
PodDecision decide_pod(
    const model::Pod& pod, OwnerIndex& index, const std::string& default_queue, GroupingMemo* memo,
    const std::function<const model::PodGroup*(const std::string&, const std::string&)>& find_pod_group);

/// Sets what a group without a PodGroup object takes from its first pod.
void start_group(PodGroupAssignment& a, const model::Pod& pod, const PodDecision& d,
                 const std::string& default_queue);

/// Adds the pod at `position` to its group `a`.
void join_group(PodGroupAssignment& a, uint32_t position, const model::Pod& pod, PodDecision&& d);

}  // namespace kai::core::grouping_steps
