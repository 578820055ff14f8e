#include "actors/scheduler/core/topology_scopes.hpp"

#include <algorithm>
#include <map>

namespace kai::core {
namespace {

/// Fills `scope`'s constraint from `c` or says why it cannot (KAI's messages where it has one).
void resolve(const model::TopologyConstraint& c, const std::string& subject, const std::vector<TopologyTree>& trees,
             TopologyScope& scope, std::vector<std::string>& errors) {
  if (c.topology.empty()) return;  // KAI: no topology named, no constraint
  int32_t tree = -1;
  for (size_t i = 0; i < trees.size(); ++i) {
    if (trees[i].name == c.topology) tree = static_cast<int32_t>(i);
  }
  if (tree < 0) {
    errors.push_back("Requested topology " + c.topology + " does not exist");
    return;
  }
  if (c.required_level.empty() && c.preferred_level.empty()) {
    errors.push_back("topology constraint error: " + subject + " names topology '" + c.topology +
                     "' but neither a required nor a preferred level");
    return;
  }
  const TopologyTree& t = trees[static_cast<size_t>(tree)];
  auto level = [&](const std::string& name, const char* kind) -> std::optional<int32_t> {
    if (name.empty()) return kNoLevel;
    if (auto l = t.level_named(name)) return *l;
    errors.push_back("topology constraint error: " + subject + " specified '" + name + "' as the " + kind +
                     " topology constraint level, but the topology tree '" + t.name +
                     "' does not contain a level with this name");
    return std::nullopt;
  };
  const auto required = level(c.required_level, "required");
  const auto preferred = level(c.preferred_level, "preferred");
  if (!required || !preferred) return;
  if (*required != kNoLevel && *preferred != kNoLevel && *preferred < *required) {
    errors.push_back("topology constraint error: " + subject + " prefers level '" + c.preferred_level +
                     "', which is wider than its required level '" + c.required_level + "' in topology '" +
                     t.name + "'");
    return;
  }
  scope.tree = tree;
  scope.required = *required;
  scope.preferred = *preferred;
}

}  // namespace

bool names_a_topology(const model::TopologyConstraint& root, const std::vector<model::SubGroup>& sub_groups) {
  if (!root.topology.empty()) return true;
  return std::any_of(sub_groups.begin(), sub_groups.end(),
                     [](const model::SubGroup& sg) { return !sg.topology_constraint.topology.empty(); });
}

ResolvedTopology resolve_job_topology(const model::TopologyConstraint& root,
                                      const std::vector<model::SubGroup>& sub_groups,
                                      const std::vector<std::string>& pod_sets,
                                      const std::vector<TopologyTree>& trees) {
  ResolvedTopology out;
  if (!names_a_topology(root, sub_groups)) return out;

  JobTopology job;
  job.scopes.push_back(TopologyScope{});
  resolve(root, "workload", trees, job.scopes[0], out.errors);
  // A subgroup with children is a scope; a leaf is a pod set, in a scope of its own when it has a
  // constraint (KAI runs the topology plugin for it too).
  std::map<std::string, bool> has_children;
  for (const auto& sg : sub_groups) {
    if (sg.parent && !sg.parent->empty()) has_children[*sg.parent] = true;
  }
  std::map<std::string, uint32_t> scope_of;  // subgroup name -> scope index
  for (const auto& sg : sub_groups) {
    const bool leaf = !has_children.count(sg.name);
    if (leaf && sg.topology_constraint.topology.empty()) continue;
    scope_of[sg.name] = static_cast<uint32_t>(job.scopes.size());
    TopologyScope s;
    s.name = sg.name;
    resolve(sg.topology_constraint, "sub-group " + sg.name, trees, s, out.errors);
    job.scopes.push_back(std::move(s));
  }
  auto parent_scope = [&](const std::optional<std::string>& parent) -> uint32_t {
    if (!parent || parent->empty()) return 0;
    auto it = scope_of.find(*parent);
    return it == scope_of.end() ? 0 : it->second;  // a missing parent is the builder's error already
  };
  auto pod_set_index = [&](const std::string& name) -> std::optional<uint32_t> {
    for (size_t i = 0; i < pod_sets.size(); ++i) {
      if (pod_sets[i] == name) return static_cast<uint32_t>(i);
    }
    return std::nullopt;
  };
  for (const auto& sg : sub_groups) {
    const uint32_t parent = parent_scope(sg.parent);
    auto own = scope_of.find(sg.name);
    if (own != scope_of.end()) {
      job.scopes[parent].members.push_back({true, own->second});
      if (!has_children.count(sg.name)) {  // a constrained leaf: its pod set inside its own scope
        if (auto ps = pod_set_index(sg.name)) job.scopes[own->second].members.push_back({false, *ps});
      }
    } else if (auto ps = pod_set_index(sg.name)) {
      job.scopes[parent].members.push_back({false, *ps});
    }
  }
  // The whole group's own set: "default" without subgroups, "" (pods in no subgroup) beside them.
  if (auto ps = pod_set_index(sub_groups.empty() ? "default" : "")) job.scopes[0].members.push_back({false, *ps});
  // A set no scope took (its parent is missing, which the builder reports) is the whole group's.
  std::vector<char> taken(pod_sets.size(), 0);
  for (const auto& scope : job.scopes) {
    for (const auto& m : scope.members) {
      if (!m.is_scope) taken[m.index] = 1;
    }
  }
  for (uint32_t i = 0; i < pod_sets.size(); ++i) {
    if (!taken[i]) job.scopes[0].members.push_back({false, i});
  }
  if (out.errors.empty()) out.topology = std::move(job);
  return out;
}

}  // namespace kai::core
