#pragma once
// A PodGroup's subgroup hierarchy (KAI v0.17: parents with minSubGroup, leaves with minMember) as
// the flat leaf pod sets a session schedules (docs/pod-grouping.md "Subgroups").

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "k8s/model/objects.hpp"

namespace kai::core {

struct LeafRequirement {
  std::string name;
  int32_t min_available = 0;  ///< 0: the leaf is not among the required ones (elastic).
};

struct SubGroupLeaves {
  std::vector<LeafRequirement> leaves;  ///< In the order the subgroups are listed.
  std::vector<std::string> errors;      ///< A parent that does not exist, a cycle.
};

/// The leaves of `sub_groups` with what each must have: a parent (the root with `root_min_sub_group`)
/// requires its first minSubGroup children (all when unset), a required leaf its minMember, so that a
/// gang binds nothing until every required leaf can start. A choice of the first children stands in
/// for KAI's "any minSubGroup of them" (docs/kai-compatibility.md).
SubGroupLeaves leaf_requirements(const std::vector<model::SubGroup>& sub_groups,
                                 std::optional<int32_t> root_min_sub_group);

}  // namespace kai::core
