#include "actors/scheduler/core/topology_placement.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <optional>

#include "actors/scheduler/core/actions/allocate.hpp"

namespace kai::core {
namespace {

/// KAI's ratio for a requested resource a domain has none of: it never fits.
constexpr double kNotInDomainRatio = 1000.0;

/// A task's request as KAI's resource vector counts it: a shared GPU's portion joins the whole GPUs
/// (milli-GPUs); a gpu-memory request counts no GPU here (its portion depends on the node).
Resources demand_of(const TaskInfo& t) {
  Resources r = t.req;
  if (t.gpu.kind == GpuRequestKind::kFraction) r.milli_gpu += t.gpu.fraction_milli * t.gpu.num_devices;
  return r;
}

/// The dominant share of `free` that `need` takes (KAI's job-to-free-resources ratio; pod slots aside).
double ratio(const Resources& need, const Resources& free) {
  double dominant = 0;
  auto one = [&](int64_t asked, int64_t has) {
    if (asked <= 0) return;
    dominant = std::max(dominant, has <= 0 ? kNotInDomainRatio : static_cast<double>(asked) / static_cast<double>(has));
  };
  one(need.milli_gpu, free.milli_gpu);
  one(need.milli_cpu, free.milli_cpu);
  one(need.memory, free.memory);
  for (const auto& [id, v] : need.scalars) one(v, free.scalar(id));
  return dominant;
}

/// KAI counts a domain in pods of the largest task ("representor" pods) when the tasks agree on what
/// they ask for: all or none use GPUs, and each other resource is asked by all or none.
bool counts_in_pods(const Session& ssn, std::span<const uint32_t> tasks) {
  size_t gpu = 0;
  std::map<uint32_t, size_t> scalars;
  for (uint32_t t : tasks) {
    const TaskInfo& task = ssn.tasks[t];
    gpu += task.gpu.kind != GpuRequestKind::kNone;
    for (const auto& [id, v] : task.req.scalars) scalars[id] += v > 0;
  }
  if (gpu != 0 && gpu != tasks.size()) return false;
  return std::all_of(scalars.begin(), scalars.end(), [&](const auto& s) { return s.second == tasks.size(); });
}

/// Free portions of the node's shared devices in use, in milli-GPUs.
int64_t shared_room(const NodeInfo& n) {
  int64_t room = 0;
  for (const auto& g : n.shared_gpus) {
    if (!g.empty()) room += std::max<int64_t>(0, g.free_with_releasing());
  }
  return room;
}

/// How many copies of `max_pod` the node takes (KAI's node accommodation); `count` when a pod asks
/// for nothing but its slot.
int64_t accommodation(const Resources& max_pod, int64_t count, const NodeInfo& node) {
  const bool slot_only = max_pod.milli_cpu <= 0 && max_pod.memory <= 0 && max_pod.milli_gpu <= 0 &&
                         std::all_of(max_pod.scalars.begin(), max_pod.scalars.end(),
                                     [](const auto& s) { return s.second <= 0; });
  if (slot_only) return count;
  int64_t gpu = node.idle.milli_gpu + node.releasing.milli_gpu;
  if (max_pod.milli_gpu > 0 && max_pod.milli_gpu < 1000) gpu += shared_room(node);
  int64_t pods = std::numeric_limits<int64_t>::max();
  // Copies of the request the free amount holds (none when it holds not even one).
  auto limit = [&](int64_t need, int64_t have) {
    if (need > 0) pods = std::min(pods, std::max<int64_t>(0, have) / need);
  };
  limit(max_pod.milli_cpu, node.idle.milli_cpu + node.releasing.milli_cpu);
  limit(max_pod.memory, node.idle.memory + node.releasing.memory);
  limit(max_pod.milli_gpu, gpu);
  limit(max_pod.pods, node.idle.pods + node.releasing.pods);
  for (const auto& [id, v] : max_pod.scalars) limit(v, node.idle.scalar(id) + node.releasing.scalar(id));
  return pods == std::numeric_limits<int64_t>::max() ? count : pods;
}

std::string describe_need(const Resources& need, const Resources& free) {
  auto part = [](const char* what, double asked, double has) {
    char buf[128];
    std::snprintf(buf, sizeof buf, "%s %g of %g free", what, asked, has);
    return std::string(buf);
  };
  std::string out;
  auto add = [&](const std::string& s) { out += (out.empty() ? "" : ", ") + s; };
  if (need.milli_gpu > 0 && need.milli_gpu > free.milli_gpu)
    add(part("GPUs", static_cast<double>(need.milli_gpu) / 1000, static_cast<double>(free.milli_gpu) / 1000));
  if (need.milli_cpu > 0 && need.milli_cpu > free.milli_cpu)
    add(part("CPU cores", static_cast<double>(need.milli_cpu) / 1000, static_cast<double>(free.milli_cpu) / 1000));
  if (need.memory > 0 && need.memory > free.memory)
    add(part("GiB of memory", static_cast<double>(need.memory) / (1 << 30), static_cast<double>(free.memory) / (1 << 30)));
  return out.empty() ? "other resources" : out;
}

}  // namespace

DomainSets topology_node_sets(const Session& ssn, const JobInfo& job, const TopologyScope& scope,
                              std::span<const uint32_t> tasks, std::span<const uint32_t> running,
                              const std::vector<uint32_t>* within) {
  DomainSets out;
  if (scope.tree < 0 || tasks.empty()) {
    if (within != nullptr) {
      out.node_sets.push_back(*within);
    } else {
      std::vector<uint32_t> all(ssn.nodes.size());
      for (uint32_t n = 0; n < all.size(); ++n) all[n] = n;
      out.node_sets.push_back(std::move(all));
    }
    return out;
  }
  const TopologyTree& tree = ssn.topologies[static_cast<size_t>(scope.tree)];
  const auto depth = static_cast<int32_t>(tree.levels.size());
  // KAI's words for a scope no domain holds; built only when one is needed.
  auto subject = [&] {
    return "topology " + tree.name + ", requirement " +
           (scope.required == kNoLevel ? std::string() : tree.level_label(scope.required)) +
           " couldn't be satisfied for job <" + job.key + ">" + (scope.name.empty() ? "" : ", subgroup " + scope.name);
  };

  // The nodes it may use: those given that are in the topology (a node lacking a level's label never is).
  std::vector<uint32_t> given;
  std::vector<char> is_valid;
  if (within != nullptr) {
    is_valid.assign(ssn.nodes.size(), 0);
    for (uint32_t n : *within) {
      if (tree.contains(n)) {
        given.push_back(n);
        is_valid[n] = 1;
      }
    }
  }
  const std::vector<uint32_t>& valid = within != nullptr ? given : tree.domains[0].nodes;

  // Their narrowest common domain, no narrower than the preferred level.
  uint32_t common = 0;
  if (!valid.empty()) {
    for (int32_t l = 0; l < depth; ++l) {
      const uint32_t d = tree.domain_of(valid.front(), l);
      if (!std::all_of(valid.begin(), valid.end(), [&](uint32_t n) { return tree.domain_of(n, l) == d; })) break;
      common = d;
      if (l == scope.preferred) break;
    }
  }
  // The accounting covers the common domain's subtree (KAI's) or, when the required level is wider
  // than it (every usable node in one rack), the required domain around it, which KAI would count as
  // empty (docs/topology.md "Differences").
  uint32_t anchor = common;
  while (scope.required != kNoLevel && tree.domains[anchor].level > scope.required) {
    anchor = static_cast<uint32_t>(tree.domains[anchor].parent);
  }

  Resources need;
  Resources max_pod;
  for (uint32_t t : tasks) {
    const Resources d = demand_of(ssn.tasks[t]);
    need += d;
    max_pod.milli_cpu = std::max(max_pod.milli_cpu, d.milli_cpu);
    max_pod.memory = std::max(max_pod.memory, d.memory);
    max_pod.milli_gpu = std::max(max_pod.milli_gpu, d.milli_gpu);
    max_pod.pods = std::max(max_pod.pods, d.pods);
    for (const auto& [id, v] : d.scalars) {
      if (v > max_pod.scalar(id)) max_pod.add_scalar(id, v - max_pod.scalar(id));
    }
  }
  const auto count = static_cast<int64_t>(tasks.size());
  const bool in_pods = counts_in_pods(ssn, tasks);

  // Free resources and, counted in pods, room per domain of the anchor's subtree, on the levels the
  // choice reads: from the anchor's down to the narrowest the constraint names (and the common
  // domain's, when it lies deeper).
  const int32_t max_depth = scope.preferred != kNoLevel ? scope.preferred : scope.required;
  const int32_t anchor_level = tree.domains[anchor].level;
  const int32_t first_level = std::max(anchor_level, 0);
  const int32_t last_level = std::max(max_depth, tree.domains[common].level);
  struct Stats {
    Resources free;
    int64_t room = 0;
  };
  Stats root_stats;
  std::vector<std::vector<Stats>> level_stats;
  for (int32_t l = first_level; l <= last_level; ++l) level_stats.emplace_back(tree.by_level[static_cast<size_t>(l)].size());
  auto stats = [&](uint32_t d) -> Stats& {
    const TopologyDomain& dom = tree.domains[d];
    if (dom.level == kRootLevel) return root_stats;
    return level_stats[static_cast<size_t>(dom.level - first_level)][dom.level_index];
  };
  // Each node into its domain of the last level, then each level into the one above.
  for (uint32_t n : tree.domains[anchor].nodes) {
    const NodeInfo& node = ssn.nodes[n];
    Stats& s = stats(tree.domain_of(n, last_level));
    s.free += node.idle;
    s.free += node.releasing;
    if (in_pods) s.room += accommodation(max_pod, count, node);
  }
  for (int32_t l = last_level; l >= first_level; --l) {
    const std::vector<uint32_t>& level = tree.by_level[static_cast<size_t>(l)];
    for (size_t i = 0; i < level.size(); ++i) {
      if (l == first_level && anchor_level != kRootLevel) break;  // the anchor is the widest counted
      const Stats& child = level_stats[static_cast<size_t>(l - first_level)][i];
      if (child.room == 0 && child.free.is_zero()) continue;
      Stats& up = l == first_level ? root_stats : stats(static_cast<uint32_t>(tree.domains[level[i]].parent));
      up.free += child.free;
      up.room += child.room;
    }
  }
  auto fit_error = [&](uint32_t d) -> std::optional<std::string> {
    const std::string& id = tree.domains[d].id;
    if (in_pods) {
      const int64_t r = stats(d).room;
      if (r >= count) return std::nullopt;
      return "node-group " + id + " can allocate only " + std::to_string(r) + " of " + std::to_string(count) +
             " required pods";
    }
    const Resources& f = stats(d).free;
    if (ratio(need, f) <= 1.0) return std::nullopt;
    return "node-group " + id + " lacks " + describe_need(need, f);
  };
  if (fit_error(common)) {
    out.errors.push_back(subject() + ": not enough resources in " +
                         (common == 0 ? std::string("the cluster") : tree.domains[common].id) + " to allocate the job");
    return out;
  }

  // Children ranked fullest first (the tasks' share of their free resources, then id), down to the
  // narrowest level the constraint names (below it the order is never read).
  std::unordered_map<uint32_t, std::vector<uint32_t>> ranked;
  std::function<void(uint32_t)> rank = [&](uint32_t d) {
    if (tree.domains[d].level >= max_depth) return;
    std::vector<uint32_t> kids = tree.domains[d].children;
    std::vector<double> share(kids.size());
    for (size_t i = 0; i < kids.size(); ++i) share[i] = ratio(need, stats(kids[i]).free);
    std::vector<size_t> order(kids.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return share[a] > share[b]; });
    std::vector<uint32_t> sorted;
    sorted.reserve(kids.size());
    for (size_t i : order) sorted.push_back(kids[i]);
    ranked[d] = std::move(sorted);
    for (uint32_t k : ranked[d]) rank(k);
  };
  rank(anchor);
  auto children_of = [&](uint32_t d) -> const std::vector<uint32_t>& {
    auto it = ranked.find(d);
    return it != ranked.end() ? it->second : tree.domains[d].children;
  };

  // The preferred level's domains in rank order; the later (the freer), the higher their nodes score.
  if (scope.preferred != kNoLevel) {
    std::vector<uint32_t> level_domains;
    std::function<void(uint32_t)> collect = [&](uint32_t d) {
      if (tree.domains[d].level == scope.preferred) {
        level_domains.push_back(d);
        return;
      }
      for (uint32_t k : children_of(d)) collect(k);
    };
    collect(anchor);
    const auto n = static_cast<double>(level_domains.size());
    for (size_t i = 0; i < level_domains.size(); ++i) {
      const double score = std::floor(static_cast<double>(i + 1) / n * 10) * kTopologyScore;
      for (uint32_t node : tree.domains[level_domains[i]].nodes) out.scores[node] = score;
    }
  }

  // The levels tried: from the preferred (else the required) up to the required (else the root).
  const int32_t narrowest = scope.preferred != kNoLevel ? scope.preferred : scope.required;
  const int32_t widest = scope.required != kNoLevel ? scope.required : kRootLevel;
  auto relevant_level = [&](int32_t level) { return level <= narrowest && level >= widest; };

  // A job with pods running under a required constraint stays in the required domains that hold them.
  std::vector<char> allowed;  // by domain, when restricted
  if (scope.required != kNoLevel) {
    bool any_active = false;
    std::vector<uint32_t> holding;
    for (uint32_t t : running) {
      const TaskInfo& task = ssn.tasks[t];
      if (!is_active_allocated(task.status) || task.node == kNoNode) continue;
      if (!tree.contains(static_cast<uint32_t>(task.node))) continue;
      any_active = true;
      holding.push_back(tree.domain_of(static_cast<uint32_t>(task.node), scope.required));
    }
    if (any_active) {
      allowed.assign(tree.domains.size(), 0);
      std::function<void(uint32_t)> allow = [&](uint32_t d) {
        allowed[d] = 1;
        for (uint32_t k : tree.domains[d].children) allow(k);
      };
      std::sort(holding.begin(), holding.end());
      holding.erase(std::unique(holding.begin(), holding.end()), holding.end());
      for (uint32_t d : holding) allow(d);
    }
  }

  // Breadth first from the anchor over the ranked children; the candidates deepest level first.
  std::vector<std::vector<uint32_t>> by_depth;
  std::vector<std::string> top_errors;
  std::vector<uint32_t> frontier = {anchor};
  while (!frontier.empty()) {
    std::vector<uint32_t> fitting;
    std::vector<uint32_t> next;
    for (uint32_t d : frontier) {
      const int32_t level = tree.domains[d].level;
      if (relevant_level(level) && (allowed.empty() || allowed[d])) {
        if (auto e = fit_error(d)) {
          if (level == widest) top_errors.push_back(*e);
        } else {
          fitting.push_back(d);
        }
      }
      if (level < narrowest) {
        for (uint32_t k : children_of(d)) next.push_back(k);
      }
    }
    by_depth.push_back(std::move(fitting));
    frontier = std::move(next);
  }
  for (auto level = by_depth.rbegin(); level != by_depth.rend(); ++level) {
    for (uint32_t d : *level) {
      std::vector<uint32_t> nodes;
      for (uint32_t n : tree.domains[d].nodes) {
        if (within == nullptr || is_valid[n]) nodes.push_back(n);
      }
      out.node_sets.push_back(std::move(nodes));
    }
  }
  if (out.node_sets.empty()) {
    out.errors = std::move(top_errors);
    out.errors.push_back(subject());
  }
  return out;
}

namespace {

/// KAI's AllocateJob over a job's topology scopes: each scope tries the node sets its constraint
/// offers, its members (nested scopes and pod sets) all inside the one set.
class ScopedPlacement {
 public:
  ScopedPlacement(Session& ssn, Statement& stmt, uint32_t job, bool pipeline_only,
                  const std::unordered_map<uint32_t, int32_t>* excluded)
      : ssn_(ssn),
        stmt_(stmt),
        job_(ssn.jobs[job]),
        topology_(*ssn.jobs[job].topology),
        pipeline_only_(pipeline_only),
        excluded_(excluded) {
    parent_.assign(topology_.scopes.size(), -1);
    for (size_t s = 0; s < topology_.scopes.size(); ++s) {
      for (const auto& m : topology_.scopes[s].members) {
        if (m.is_scope) {
          parent_[m.index] = static_cast<int32_t>(s);
        } else {
          scope_of_set_[m.index] = static_cast<uint32_t>(s);
        }
      }
    }
  }

  bool place(const std::vector<uint32_t>& tasks) { return place_scope(0, nullptr, tasks, nullptr); }

  std::vector<FitReason> reasons() const {
    std::vector<FitReason> out;
    for (const auto& e : errors_) out.push_back({"PodSchedulingErrors", e});
    if (out.empty() && !last_failure_.empty()) out.push_back({"PodSchedulingErrors", last_failure_});
    return out;
  }

 private:
  /// Whether pod set `set` lies in scope `scope`'s subtree.
  bool in_scope(uint16_t set, uint32_t scope) const {
    auto it = scope_of_set_.find(set);
    for (int32_t s = it == scope_of_set_.end() ? 0 : static_cast<int32_t>(it->second); s >= 0; s = parent_[s]) {
      if (static_cast<uint32_t>(s) == scope) return true;
    }
    return false;
  }

  bool place_scope(uint32_t s, const std::vector<uint32_t>* within, const std::vector<uint32_t>& tasks,
                   const std::unordered_map<uint32_t, double>* inherited) {
    if (tasks.empty()) return true;
    const TopologyScope& scope = topology_.scopes[s];
    // Unconstrained and unrestricted: every node, the way tasks are placed without topology.
    if (scope.tree < 0 && within == nullptr) return place_members(s, nullptr, tasks, inherited);
    std::vector<uint32_t> running;
    for (uint32_t t : job_.tasks) {
      if (is_active_allocated(ssn_.tasks[t].status) && in_scope(ssn_.tasks[t].pod_set, s)) running.push_back(t);
    }
    DomainSets sets = topology_node_sets(ssn_, job_, scope, tasks, running, within);
    if (sets.node_sets.empty()) {
      errors_.insert(errors_.end(), sets.errors.begin(), sets.errors.end());
      return false;
    }
    const auto* scores = scope.preferred != kNoLevel ? &sets.scores : inherited;
    for (const auto& nodes : sets.node_sets) {
      const auto cp = stmt_.checkpoint();
      if (place_members(s, &nodes, tasks, scores)) return true;
      stmt_.rollback(cp);
    }
    if (scope.tree >= 0 && !last_failure_.empty() && last_failure_.rfind("topology ", 0) != 0) {
      const TopologyTree& tree = ssn_.topologies[static_cast<size_t>(scope.tree)];
      last_failure_ = "topology " + tree.name + ": no domain holds the whole of job <" + job_.key + ">" +
                      (scope.name.empty() ? "" : ", subgroup " + scope.name) + ": " + last_failure_;
    }
    return false;
  }

  /// The scope's members in the order their first task comes in `tasks`, each placed in `nodes`.
  bool place_members(uint32_t s, const std::vector<uint32_t>* nodes, const std::vector<uint32_t>& tasks,
                     const std::unordered_map<uint32_t, double>* scores) {
    const TopologyScope& scope = topology_.scopes[s];
    std::vector<std::pair<size_t, size_t>> order;  // (first task position, member)
    for (size_t m = 0; m < scope.members.size(); ++m) {
      for (size_t i = 0; i < tasks.size(); ++i) {
        if (member_has(scope.members[m], ssn_.tasks[tasks[i]].pod_set)) {
          order.emplace_back(i, m);
          break;
        }
      }
    }
    std::sort(order.begin(), order.end());
    for (const auto& [first, m] : order) {
      const TopologyScope::Member& member = scope.members[m];
      std::vector<uint32_t> mine;
      for (uint32_t t : tasks) {
        if (member_has(member, ssn_.tasks[t].pod_set)) mine.push_back(t);
      }
      if (member.is_scope) {
        if (!place_scope(member.index, nodes, mine, scores)) return false;
        continue;
      }
      // No node set: the whole cluster, unconstrained (scores come only with a set).
      const NodeChoice choice{nodes != nullptr ? std::span<const uint32_t>(*nodes) : std::span<const uint32_t>(), scores};
      for (size_t i = 0; i < mine.size(); ++i) {
        int32_t excluded = kNoNode;
        if (excluded_ != nullptr) {
          if (auto it = excluded_->find(mine[i]); it != excluded_->end()) excluded = it->second;
        }
        if (place_task(ssn_, stmt_, mine[i], pipeline_only_, excluded, nodes != nullptr ? &choice : nullptr)) continue;
        last_failure_ = task_failure_message(ssn_, job_, ssn_.tasks[mine[i]], i);
        return false;
      }
    }
    return true;
  }

  bool member_has(const TopologyScope::Member& m, uint16_t set) const {
    return m.is_scope ? in_scope(set, m.index) : m.index == set;
  }

  Session& ssn_;
  Statement& stmt_;
  const JobInfo& job_;
  const JobTopology& topology_;
  bool pipeline_only_;
  const std::unordered_map<uint32_t, int32_t>* excluded_;
  std::vector<int32_t> parent_;
  std::map<uint32_t, uint32_t> scope_of_set_;
  std::vector<std::string> errors_;
  std::string last_failure_;
};

}  // namespace

bool place_with_topology(Session& ssn, Statement& stmt, uint32_t job, const std::vector<uint32_t>& tasks,
                         bool pipeline_only, std::vector<FitReason>* why,
                         const std::unordered_map<uint32_t, int32_t>* excluded) {
  const auto cp = stmt.checkpoint();
  ScopedPlacement placement(ssn, stmt, job, pipeline_only, excluded);
  if (placement.place(tasks)) return true;
  stmt.rollback(cp);
  if (why != nullptr) *why = placement.reasons();
  return false;
}

}  // namespace kai::core
