#pragma once
// The grouping of a cut that differs from the last grouped one in some pods and PodGroups, made
// from the last grouping rather than from every pod (docs/performance-targets.md "Kept sessions"):
// only the pods added or replaced are decided, only the groups they or the pods and PodGroups gone
// touch are made anew, and the others are taken as they were. The result is what group_pods gives
// for the new cut (RegroupingSteps property tests in tests/core/regrouping_test.cpp).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "actors/scheduler/core/grouping.hpp"
#include "actors/scheduler/core/grouping_memo.hpp"

namespace kai::core {

struct Regrouping {
  std::vector<PodGroupAssignment> groups;  ///< group_pods(objects), in its order.
  /// By group: its index in the last grouping when it is that group taken as it was (its pods the
  /// same objects, their indexes those of `objects`), else -1. Increasing where set.
  std::vector<int32_t> kept_from;
};

/// Two pod lists kept in the same order (a cut's, then the next cut's) paired up: `at[i]` is the
/// position in the second of the first's pod `i`, or -1 when it is not found there; `added` lists
/// the positions in the second of the pods not paired. A pod found neither a few places ahead nor
/// behind counts as gone and added.
struct PodPairing {
  std::vector<int32_t> at;
  std::vector<uint32_t> added;
};
PodPairing pair_pods(const std::vector<const model::Pod*>& before,
                     const std::vector<const model::Pod*>& after);

/// The grouping of `objects` from `last`, the grouping of `last_objects` by group_pods with `memo`
/// (whose last grouping, or a continued one, it was), or nothing when it cannot be made so: the memo
/// cannot go on (another context, other owners, no objects held), the grouper reads other pods, a
/// PodGroup that came or went was looked up, or PodGroups share a name. Nothing is changed then.
/// Otherwise the groups taken are moved out of `last`, and the memo has grouped `objects`. `pods`,
/// when given, is pair_pods of the two cuts' pods.
std::optional<Regrouping> regroup_pods(std::vector<PodGroupAssignment>& last,
                                       const model::ObjectRefs& last_objects,
                                       const model::ObjectRefs& objects, const std::string& scheduler_name,
                                       const std::string& default_queue, const GrouperFlags& flags,
                                       GroupingMemo& memo, const PodPairing* pods = nullptr);

}  // namespace kai::core
