#include "actors/scheduler/core/actions/victim_solver.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include "actors/scheduler/core/actions/allocate.hpp"
#include "actors/scheduler/core/actions/eviction_common.hpp"
#include "actors/scheduler/core/grouping.hpp"
#include "actors/scheduler/core/node_fit.hpp"
#include "actors/scheduler/core/topology_placement.hpp"

namespace kai::core {
namespace {

/// Copies of `req` that fit `avail` (cpu, memory, pods and whole GPUs), an upper bound used to skip
/// scenarios that cannot work before simulating them.
int64_t copies_fitting(const Resources& req, const NodeInfo& n) {
  int64_t copies = INT64_MAX;
  auto limit = [&](int64_t need, int64_t have) {
    if (need > 0) copies = std::min(copies, std::max<int64_t>(0, have) / need);
  };
  limit(req.milli_cpu, n.idle.milli_cpu + n.releasing.milli_cpu);
  limit(req.memory, n.idle.memory + n.releasing.memory);
  limit(req.milli_gpu, n.idle.milli_gpu + n.releasing.milli_gpu);
  limit(req.pods, n.idle.pods + n.releasing.pods);
  return copies == INT64_MAX ? 1'000'000 : copies;
}

/// Tracks, node by node, how many of the preemptor's tasks could fit if the victims evicted so far
/// were gone; simulation runs only once the total reaches the number of tasks.
class RoomTracker {
 public:
  /// `committed`: the session holds only committed state (no operation of the preemptor's statement
  /// yet), so the count may come from, and go to, the eviction cache.
  RoomTracker(Session& ssn, const std::vector<uint32_t>& tasks, bool committed)
      : ssn_(ssn), need_(tasks.size()) {
    // The smallest request per resource: the bound must never rule out a feasible scenario.
    Resources min_req;
    bool first = true;
    for (uint32_t t : tasks) {
      const Resources& r = ssn.tasks[t].req;
      if (first) {
        min_req.milli_cpu = r.milli_cpu;
        min_req.memory = r.memory;
        min_req.milli_gpu = r.milli_gpu;
        min_req.pods = r.pods;
        first = false;
      } else {
        min_req.milli_cpu = std::min(min_req.milli_cpu, r.milli_cpu);
        min_req.memory = std::min(min_req.memory, r.memory);
        min_req.milli_gpu = std::min(min_req.milli_gpu, r.milli_gpu);
        min_req.pods = std::min(min_req.pods, r.pods);
      }
    }
    const std::vector<char>& mask = ssn.static_fit_mask(ssn.tasks[tasks.front()]);
    auto same = [&](const NodeRoom& r) {
      return r.mask == &mask && r.request.milli_cpu == min_req.milli_cpu &&
             r.request.memory == min_req.memory && r.request.milli_gpu == min_req.milli_gpu &&
             r.request.pods == min_req.pods;
    };
    std::vector<NodeRoom>* kept = committed ? &eviction_cache(ssn).rooms : nullptr;
    if (kept) {
      for (const NodeRoom& r : *kept) {
        if (same(r)) {
          counted_ = r;
          return;
        }
      }
    }
    counted_.mask = &mask;
    counted_.request = std::move(min_req);
    counted_.room.assign(ssn.nodes.size(), 0);
    for (uint32_t n = 0; n < ssn.nodes.size(); ++n) {
      if (mask[n]) counted_.room[n] = copies_fitting(counted_.request, ssn.nodes[n]);
      counted_.total += counted_.room[n];
    }
    if (kept && kept->size() < kKeptRooms) kept->push_back(counted_);
  }
  void node_changed(int32_t n) {
    if (n == kNoNode || !(*counted_.mask)[n]) return;
    counted_.total -= counted_.room[n];
    counted_.room[n] = copies_fitting(counted_.request, ssn_.nodes[n]);
    counted_.total += counted_.room[n];
  }
  bool maybe_enough() const { return counted_.total >= static_cast<int64_t>(need_); }

 private:
  /// Enough for the shapes of a cluster's pending groups, bounded so the cache stays small.
  static constexpr size_t kKeptRooms = 32;
  Session& ssn_;
  size_t need_;
  NodeRoom counted_;
};

/// The preemptor's tasks, pipelined, inside one domain of its topology constraint when it has one.
bool place_all(Session& ssn, Statement& stmt, const std::vector<uint32_t>& tasks) {
  if (tasks.empty()) return true;
  return place_job_tasks(ssn, stmt, ssn.tasks[tasks.front()].job, tasks, true, nullptr);
}

/// Places a stand-in for every evicted pod elsewhere (pipelined), as consolidation requires. A whole-GPU
/// pod moved within its node frees nothing there, so it must leave the node; a shared-GPU pod frees
/// its device by joining another GPU group, which may be on the same node (place_task keeps a ghost out
/// of the groups its pod leaves).
/// The victims of a job with a topology constraint move together, inside one domain it allows
/// (after the others, job by job).
bool move_victims(Session& ssn, Statement& stmt, const std::vector<uint32_t>& victims) {
  std::map<uint32_t, std::vector<uint32_t>> constrained;  // job -> its victims' ghosts
  std::unordered_map<uint32_t, int32_t> excluded_of;
  for (uint32_t v : victims) {
    const int32_t excluded = ssn.tasks[v].gpu.is_shared() ? kNoNode : ssn.tasks[v].node;
    const uint32_t job = ssn.tasks[v].job;
    const uint32_t ghost = ssn.add_ghost(v);
    if (ssn.topology_plugin && ssn.jobs[job].topology) {
      constrained[job].push_back(ghost);
      excluded_of[ghost] = excluded;
    } else if (!place_task(ssn, stmt, ghost, true, excluded)) {
      return false;
    }
  }
  for (const auto& [job, ghosts] : constrained) {
    if (!place_with_topology(ssn, stmt, job, ghosts, true, nullptr, &excluded_of)) return false;
  }
  return true;
}

}  // namespace

std::vector<VictimEntry> victim_entries(const Session& ssn, uint32_t job_id) {
  const JobInfo& job = ssn.jobs[job_id];
  std::vector<VictimEntry> out;
  if (job.tasks.size() == 1 && job.pod_sets.size() == 1) {  // the common single-pod workload
    if (is_active_allocated(ssn.tasks[job.tasks.front()].status))
      out.push_back(VictimEntry{job_id, {job.tasks.front()}, true});
    return out;
  }
  VictimEntry core{job_id, {}, true};
  for (const auto& ps : job.pod_sets) {
    std::vector<uint32_t> active;
    for (uint32_t t : ps.tasks) {
      if (is_active_allocated(ssn.tasks[t].status)) active.push_back(t);
    }
    // Reverse task order: the pods the job would place last leave first.
    std::sort(active.begin(), active.end(),
              [&](uint32_t a, uint32_t b) { return ssn.task_less(ssn.tasks[b], ssn.tasks[a]); });
    const size_t extras = active.size() > static_cast<size_t>(ps.min_available)
                              ? active.size() - static_cast<size_t>(ps.min_available)
                              : 0;
    for (size_t i = 0; i < active.size(); ++i) {
      if (i < extras) {
        out.push_back(VictimEntry{job_id, {active[i]}, false});
      } else {
        core.tasks.push_back(active[i]);
      }
    }
  }
  if (!core.tasks.empty()) out.push_back(std::move(core));
  return out;
}

bool solve_with_victims(Session& ssn, Statement& stmt, uint32_t preemptor,
                        const std::vector<const VictimEntry*>& entries, const SolverOptions& options) {
  const std::vector<uint32_t> tasks = ssn.tasks_to_allocate(ssn.jobs[preemptor]);
  if (tasks.empty() || entries.empty()) return false;
  const std::string by = ssn.jobs[preemptor].key;
  const auto start = stmt.checkpoint();
  RoomTracker room(ssn, tasks, start == 0);

  auto evict_entries = [&](const std::vector<size_t>& chosen, std::vector<uint32_t>& evicted) {
    for (size_t e : chosen) {
      const VictimEntry& entry = *entries[e];
      for (uint32_t t : entry.tasks) {
        if (!is_active_allocated(ssn.tasks[t].status)) continue;  // already taken by an earlier preemptor
        const int32_t node = ssn.tasks[t].node;
        stmt.evict(t, options.message ? options.message(ssn.tasks[t]) : std::string(), by);
        evicted.push_back(t);
        room.node_changed(node);
      }
    }
  };
  // Evicts `chosen`, then tries to place the preemptor (and move the victims); true = committed-ready.
  auto try_scenario = [&](const std::vector<size_t>& chosen) {
    stmt.rollback(start);
    std::vector<uint32_t> evicted;
    evict_entries(chosen, evicted);
    if (place_all(ssn, stmt, tasks) && (!options.victims_must_move || move_victims(ssn, stmt, evicted)) &&
        (!options.validate || options.validate(evicted))) {
      return true;
    }
    stmt.rollback(start);
    return false;
  };

  std::vector<size_t> chosen;
  std::vector<uint32_t> evicted;
  std::set<uint32_t> victim_jobs;
  size_t next_attempt = 0;
  for (size_t e = 0; e < entries.size(); ++e) {
    const uint32_t job = entries[e]->job;
    if (options.max_victim_jobs >= 0 && !victim_jobs.count(job) &&
        static_cast<int32_t>(victim_jobs.size()) >= options.max_victim_jobs) {
      continue;
    }
    victim_jobs.insert(job);
    chosen.push_back(e);
    evict_entries({e}, evicted);
    if (!room.maybe_enough()) continue;
    // Simulating after every victim costs O(victims^2): once room suffices, try at doubling victim
    // counts and with the last entry. The prune step below then keeps only victims that were needed.
    if (chosen.size() < next_attempt && e + 1 < entries.size()) continue;
    next_attempt = chosen.size() * 2;
    const auto cp = stmt.checkpoint();
    const bool placed = place_all(ssn, stmt, tasks) &&
                        (!options.victims_must_move || move_victims(ssn, stmt, evicted)) &&
                        (!options.validate || options.validate(evicted));
    if (!placed) {
      stmt.rollback(cp);
      continue;
    }
    // Keep only the victims on nodes the preemptor now uses: the others were not needed.
    std::set<int32_t> used;
    for (uint32_t t : tasks) used.insert(ssn.tasks[t].node);
    std::vector<size_t> needed;
    for (size_t c : chosen) {
      for (uint32_t t : entries[c]->tasks) {
        if (used.count(ssn.tasks[t].node)) {
          needed.push_back(c);
          break;
        }
      }
    }
    if (needed.size() == chosen.size() || try_scenario(needed)) return true;
    return try_scenario(chosen);
  }
  stmt.rollback(start);
  return false;
}

}  // namespace kai::core
