#include "actors/scheduler/core/sub_group_tree.hpp"

#include <algorithm>
#include <map>

namespace kai::core {

SubGroupLeaves leaf_requirements(const std::vector<model::SubGroup>& sub_groups,
                                 std::optional<int32_t> root_min_sub_group) {
  SubGroupLeaves out;
  std::map<std::string, std::vector<size_t>> children;  // parent name ("" = root) -> indexes
  std::map<std::string, size_t> by_name;
  for (size_t i = 0; i < sub_groups.size(); ++i) by_name.emplace(sub_groups[i].name, i);
  for (size_t i = 0; i < sub_groups.size(); ++i) {
    const auto& parent = sub_groups[i].parent;
    if (parent && !parent->empty() && !by_name.count(*parent)) {
      out.errors.push_back("subGroup " + sub_groups[i].name + " names parent " + *parent + ", which does not exist");
      continue;
    }
    children[parent ? *parent : std::string()].push_back(i);
  }
  std::vector<int32_t> required(sub_groups.size(), -1);  // -1: not reached
  std::vector<size_t> leaves;
  // Depth-first from the root; a subgroup is visited once, so a cycle ends.
  auto visit = [&](auto&& self, const std::string& parent, std::optional<int32_t> min_children, bool needed) -> void {
    auto it = children.find(parent);
    if (it == children.end()) return;
    const size_t k = min_children ? static_cast<size_t>(std::max(*min_children, 0)) : it->second.size();
    for (size_t c = 0; c < it->second.size(); ++c) {
      const size_t i = it->second[c];
      if (required[i] != -1) continue;
      const bool child_needed = needed && c < k;
      const model::SubGroup& sg = sub_groups[i];
      if (children.count(sg.name)) {
        required[i] = 0;
        self(self, sg.name, sg.min_sub_group, child_needed);
      } else {
        required[i] = child_needed ? std::max(sg.min_member, 0) : 0;
        leaves.push_back(i);
      }
    }
  };
  visit(visit, std::string(), root_min_sub_group, true);
  for (size_t i = 0; i < sub_groups.size(); ++i) {
    if (required[i] == -1 && !(sub_groups[i].parent && !by_name.count(*sub_groups[i].parent))) {
      out.errors.push_back("subGroup " + sub_groups[i].name + " is in a cycle of parents");
    }
  }
  std::sort(leaves.begin(), leaves.end());
  for (size_t i : leaves) out.leaves.push_back({sub_groups[i].name, required[i]});
  return out;
}

}  // namespace kai::core
