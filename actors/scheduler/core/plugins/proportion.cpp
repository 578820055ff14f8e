// The proportion plugin (docs/kai-compatibility.md "Fair share"): hierarchical fair share, the queue order ("Job and queue order"), and
// the capacity policy (OverLimit, NonPreemptibleOverQuota) checked before and during allocation.
#include <algorithm>
#include <boost/container/small_vector.hpp>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <span>
#include <unordered_map>

#include "actors/scheduler/core/node_fit.hpp"
#include "actors/scheduler/core/plugins/builtin.hpp"
#include "actors/scheduler/core/queue_sums.hpp"
#include "actors/scheduler/core/session.hpp"

namespace kai::core::plugins {
namespace {

using Field = double QueueQuantities::*;
/// A queue and its ancestors, root first (queue trees are a few levels deep).
using QueuePath = boost::container::small_vector<int32_t, 8>;
constexpr Field kResources[] = {&QueueQuantities::gpu, &QueueQuantities::cpu, &QueueQuantities::memory};
constexpr double kEpsilon = 1e-9;

double requestable(const QueueInfo& q, Field r) {
  return q.max_allowed.*r == -1 ? q.request.*r : std::min(q.max_allowed.*r, q.request.*r);
}

/// Divides `total` of resource `r` among `level` (siblings), then recurses into their children.
void divide(Session& ssn, const std::vector<uint32_t>& level, double total, Field r, double k_value) {
  if (level.empty()) return;
  double remaining = total;
  for (uint32_t id : level) {
    QueueInfo& q = ssn.queues[id];
    q.fair_share.*r = 0;
    const double d = q.deserved.*r == -1 ? total : q.deserved.*r;
    const double give = std::max(0.0, std::min(d, requestable(q, r)));
    q.fair_share.*r += give;
    remaining -= give;
  }
  std::vector<int32_t> priorities;
  priorities.reserve(level.size());
  for (uint32_t id : level) priorities.push_back(ssn.queues[id].priority);
  std::sort(priorities.begin(), priorities.end(), std::greater<>());
  priorities.erase(std::unique(priorities.begin(), priorities.end()), priorities.end());
  std::map<uint32_t, double> leftovers;
  if (remaining > kEpsilon) {
    for (int32_t prio : priorities) {
      std::vector<uint32_t> group;
      for (uint32_t id : level) {
        if (ssn.queues[id].priority == prio) group.push_back(id);
      }
      for (;;) {
        auto rem_req = [&](const QueueInfo& q) { return std::max(0.0, requestable(q, r) - q.fair_share.*r); };
        auto unsatisfied = [&](const QueueInfo& q) {
          return !(q.request.*r <= q.fair_share.*r) &&
                 !(q.max_allowed.*r != -1 && q.max_allowed.*r <= q.fair_share.*r);
        };
        double total_weight = 0;
        for (uint32_t id : group) {
          if (rem_req(ssn.queues[id]) > 0) total_weight += ssn.queues[id].over_quota_weight.*r;
        }
        if (total_weight <= 0) break;
        std::map<uint32_t, double> weights;
        double weight_sum = 0;
        for (uint32_t id : group) {
          const QueueInfo& q = ssn.queues[id];
          if (!unsatisfied(q)) continue;
          const double nw = q.over_quota_weight.*r / total_weight;
          // KAI's share weight: the normalized weight moved by kValue x (weight - historical usage).
          const double w = std::max(0.0, nw + k_value * (nw - q.usage.*r));
          weights[id] = w;
          weight_sum += w;
        }
        if (weight_sum <= 0) break;
        const double amount = remaining;
        bool again = false;
        for (uint32_t id : group) {
          QueueInfo& q = ssn.queues[id];
          if (!unsatisfied(q) || q.over_quota_weight.*r == 0) continue;
          if (remaining <= kEpsilon) break;
          const double fs = amount * weights[id] / weight_sum;
          const double req = rem_req(q);
          double give = 0;
          if (req <= fs) {
            give = req;
            leftovers.erase(id);
          } else {
            give = fs < 1 ? 0 : std::floor(fs);
            if (fs - give > 0) leftovers[id] = fs - give;
          }
          if (give == 0) continue;
          q.fair_share.*r += give;
          remaining -= give;
          again = again || req < fs;
        }
        if (!again || remaining <= kEpsilon) break;
      }
    }
    for (int32_t prio : priorities) {
      if (remaining <= kEpsilon) break;
      std::vector<std::pair<uint32_t, double>> order;
      for (const auto& [id, left] : leftovers) {
        if (ssn.queues[id].priority == prio) order.emplace_back(id, left);
      }
      std::sort(order.begin(), order.end(), [&](const auto& a, const auto& b) {
        if (a.second != b.second) return a.second > b.second;
        const QueueInfo &qa = ssn.queues[a.first], &qb = ssn.queues[b.first];
        if (qa.creation != qb.creation) return qa.creation < qb.creation;
        return qa.name < qb.name;
      });
      for (const auto& [id, left] : order) {
        if (remaining <= kEpsilon) break;
        const double give = std::min(1.0, remaining);
        ssn.queues[id].fair_share.*r += give;
        remaining -= give;
      }
    }
  }
  for (uint32_t id : level) {
    divide(ssn, ssn.queues[id].children, ssn.queues[id].fair_share.*r, r, k_value);
  }
}

double total_of(const Session& ssn, Field r) {
  return ssn.cluster_total.*r;
}

/// max(deserved, fair share) capped by the limit; -1 deserved means the limit (docs/kai-compatibility.md "Job and queue order").
double allocatable_share(const Session& ssn, const QueueInfo& q, Field r) {
  double a = q.deserved.*r == -1 ? q.max_allowed.*r : std::max(q.deserved.*r, q.fair_share.*r);
  if (q.deserved.*r != -1 && q.max_allowed.*r != -1) a = std::min(a, q.max_allowed.*r);
  return a == -1 ? total_of(ssn, r) : a;
}

double dominant_share(const Session& ssn, const QueueInfo& q, const QueueQuantities& allocated) {
  double share = 0;
  for (Field r : kResources) {
    const double alloc = allocatable_share(ssn, q, r);
    share = std::max(share, alloc == 0 ? allocated.*r * 1000 : allocated.*r / alloc);
  }
  return share;
}

QueueQuantities plus(QueueQuantities a, const QueueQuantities& b) {
  add_queue_quantities(a, b);
  return a;
}

/// A quantity as KAI's HumanizeResource writes it, in `r`'s unit (GPUs, cores, GB): "Unlimited" for
/// -1, else at most three decimals without trailing zeros.
std::string humanize(double v, Field r) {
  if (v == -1) return "Unlimited";
  const double unit = r == &QueueQuantities::gpu ? 1 : r == &QueueQuantities::cpu ? 1000 : 1e9;
  char buf[512];  // room for any double's digits ("%.3f" of 1e308 is 313 characters)
  std::snprintf(buf, sizeof buf, "%.3f", v / unit);
  std::string out = buf;
  if (out.find('.') != std::string::npos) {  // not for "inf" / "nan"
    while (out.back() == '0') out.pop_back();
    if (out.back() == '.') out.pop_back();
  }
  return out == "-0" ? "0" : out;
}

/// The unit KAI's quota messages put after a humanized quantity.
const char* unit_word(Field r) {
  return r == &QueueQuantities::gpu ? "GPUs" : r == &QueueQuantities::cpu ? "cores" : "GB";
}

/// The resource as KAI's quota messages name it.
const char* resource_name(Field r) {
  return r == &QueueQuantities::gpu ? "GPUs" : r == &QueueQuantities::cpu ? "CPU cores" : "memory";
}

/// The queues from the root down to `leaf`.
QueuePath path_of(const Session& ssn, int32_t leaf) {
  QueuePath path;
  for (int32_t q = leaf; q != kNoQueue; q = ssn.queues[q].parent) path.push_back(q);
  std::reverse(path.begin(), path.end());  // root first
  return path;
}

/// Each queue's path from its root (path_of), by queue id, in one array: taken when the session
/// opens, for the probes that compare two queues' paths many times per action.
class QueuePaths {
 public:
  void take(const Session& ssn) {
    nodes_.clear();
    starts_.assign(1, 0);
    for (uint32_t q = 0; q < ssn.queues.size(); ++q) {
      const QueuePath path = path_of(ssn, static_cast<int32_t>(q));
      nodes_.insert(nodes_.end(), path.begin(), path.end());
      starts_.push_back(nodes_.size());
    }
  }
  std::span<const int32_t> of(int32_t queue) const {
    const auto q = static_cast<size_t>(queue);
    return {nodes_.data() + starts_[q], starts_[q + 1] - starts_[q]};
  }

 private:
  std::vector<int32_t> nodes_;
  std::vector<size_t> starts_;
};

class ProportionPlugin final : public Plugin {
 public:
  explicit ProportionPlugin(const PluginConfig& config) {
    // As KAI: a kValue that does not parse stays 1.0; one not above 0 becomes 0 (usage ignored).
    if (auto it = config.arguments.find("kValue"); it != config.arguments.end()) {
      char* end = nullptr;
      const double v = std::strtod(it->second.c_str(), &end);
      if (end != it->second.c_str() && *end == '\0' && std::isfinite(v)) k_value_ = v > 0 ? v : 0;
    }
    if (auto it = config.arguments.find("probeByTables"); it != config.arguments.end())
      probe_by_tables_ = it->second == "true";
    // KAI spells the argument "relcaimerSaturationMultiplier"; its docs say reclaimerUtilizationMultiplier.
    for (const char* key : {"relcaimerSaturationMultiplier", "reclaimerSaturationMultiplier",
                            "reclaimerUtilizationMultiplier"}) {
      if (auto it = config.arguments.find(key); it != config.arguments.end()) {
        saturation_multiplier_ = std::max(1.0, std::strtod(it->second.c_str(), nullptr));
      }
    }
  }

  /// CanReclaimResources: the reclaimer's queue stays within its fair share with the request added; a
  /// non-preemptible reclaimer also within its deserved quota.
  static bool can_reclaim(const Session& ssn, const JobInfo& job, const QueueQuantities& req) {
    if (job.queue == kNoQueue) return false;
    const QueueInfo& q = ssn.queues[job.queue];
    for (Field r : kResources) {
      if (q.allocated.*r + req.*r > q.fair_share.*r + kEpsilon) return false;
      if (!job.preemptible && q.deserved.*r != -1 &&
          q.allocated_non_preemptible.*r + req.*r > q.deserved.*r + kEpsilon) {
        return false;
      }
    }
    return true;
  }

  static bool all_le(const QueueQuantities& a, const QueueQuantities& b) {
    for (Field r : kResources) {
      if (b.*r != -1 && a.*r > b.*r + kEpsilon) return false;
    }
    return true;
  }

  /// The Reclaimable check (docs/kai-compatibility.md "Reclaim"): each victim entry must come from a queue (at the first level where
  /// the reclaimer's and the victim's paths part) that is above its allocatable share
  /// (MaintainFairShare), or the reclaimer must be within its deserved quota while the victim is above
  /// its own (GuaranteeDeservedQuota); then no sibling on the reclaimer's path may end up relatively
  /// less served than the reclaimer.
  static bool reclaimable(const Session& ssn, const JobInfo& reclaimer, const QueueQuantities& req,
                          std::span<const uint32_t> victims, double multiplier, bool still_placed = false) {
    if (reclaimer.queue == kNoQueue) return false;
    const QueuePath rpath = path_of(ssn, reclaimer.queue);
    // Entries: per victim job, its tasks beyond minAvailable one by one, the rest together. The jobs
    // in the order the victims came (victim order), as the check below consumes each leveled queue's
    // remaining allocation entry by entry: ordered by job index, the same victims passed or failed
    // with the order the session listed the pods in.
    std::vector<std::pair<uint32_t, std::vector<uint32_t>>> by_job;
    std::unordered_map<uint32_t, size_t> slot_of_job;
    for (uint32_t t : victims) {
      const uint32_t job = ssn.tasks[t].job;
      auto [it, added] = slot_of_job.try_emplace(job, by_job.size());
      if (added) by_job.emplace_back(job, std::vector<uint32_t>{});
      by_job[it->second].second.push_back(t);
    }
    // The victims are already evicted in the statement, so queue allocations no longer include them:
    // the check starts from the allocation before the scenario (current + what the victims held).
    struct VictimEntries {
      size_t level;
      QueuePath vpath;
      std::vector<QueueQuantities> entries;
    };
    std::vector<VictimEntries> plan;
    std::map<int32_t, QueueQuantities> taken;  // by queue, all levels of the victims' paths
    for (const auto& [job_id, tasks] : by_job) {
      const JobInfo& victim = ssn.jobs[job_id];
      VictimEntries v{0, path_of(ssn, victim.queue), {}};
      while (v.level < rpath.size() && v.level < v.vpath.size() && rpath[v.level] == v.vpath[v.level])
        ++v.level;
      if (v.level >= v.vpath.size() || v.level >= rpath.size()) return false;  // same queue: not a reclaim
      // Pods beyond minAvailable go one by one, the rest of the gang together.
      const int32_t before =
          ssn.active_allocated_count(victim) + (still_placed ? 0 : static_cast<int32_t>(tasks.size()));
      const int32_t extras = std::max(0, before - victim.min_member);
      QueueQuantities core;
      bool has_core = false;
      for (size_t i = 0; i < tasks.size(); ++i) {
        const QueueQuantities q = ssn.allocated_quantities(ssn.tasks[tasks[i]]);
        for (size_t l = v.level; l < v.vpath.size(); ++l) taken[v.vpath[l]] = plus(taken[v.vpath[l]], q);
        if (static_cast<int32_t>(i) < extras) {
          v.entries.push_back(q);
        } else {
          core = plus(core, q);
          has_core = true;
        }
      }
      if (has_core) v.entries.push_back(core);
      plan.push_back(std::move(v));
    }
    std::map<int32_t, QueueQuantities> remaining;  // leveled reclaimee queues
    for (const VictimEntries& v : plan) {
      const int32_t leveled = v.vpath[v.level];
      const QueueInfo& reclaimee = ssn.queues[leveled];
      const QueueInfo& reclaimer_level = ssn.queues[rpath[v.level]];
      auto [it, inserted] = remaining.try_emplace(
          leveled, still_placed ? reclaimee.allocated : plus(reclaimee.allocated, taken[leveled]));
      QueueQuantities& rem = it->second;
      for (const QueueQuantities& e : v.entries) {
        if (!may_give(ssn, reclaimee, rem, reclaimer_level, req)) return false;
        add_queue_quantities(rem, e, -1);
      }
    }
    if (!reclaimer.preemptible && !non_preemptible_within_deserved(ssn, rpath, req)) return false;
    for (int32_t q : rpath) {
      const QueueInfo& mine = ssn.queues[q];
      // Its siblings (the queues with its parent; the other roots for a root) that lose resources:
      // only queues on the victims' paths lose any, so those are all that is looked at.
      for (const auto& [s, lost] : taken) {
        if (s == q || ssn.queues[s].parent != mine.parent) continue;
        if (sibling_less_served(mine, ssn.queues[s], lost, req, multiplier, still_placed)) return false;
      }
    }
    return true;
  }

  /// reclaimable() for one victim task still placed: the reclaim action's probes, one per waiting
  /// group and victim queue (about 100,000 at 5,000 nodes), worked out without its tables. The same
  /// result: with one victim there is one entry, the task's allocation, from the queue where the two
  /// paths part; and the one queue on the reclaimer's path with a sibling that loses anything is the
  /// reclaimer's at that level (deeper queues of the victim's path have parents off the reclaimer's).
  static bool reclaimable_probe(const Session& ssn, const QueuePaths& paths, const JobInfo& reclaimer,
                                const QueueQuantities& req, uint32_t victim_task, double multiplier) {
    if (reclaimer.queue == kNoQueue) return false;
    // Called for every reclaimer and victim queue before any victim is ordered: the paths taken once
    // per session, not walked up the tree for each call.
    const std::span<const int32_t> rpath = paths.of(reclaimer.queue);
    const std::span<const int32_t> vpath = paths.of(ssn.jobs[ssn.tasks[victim_task].job].queue);
    size_t level = 0;
    while (level < rpath.size() && level < vpath.size() && rpath[level] == vpath[level]) ++level;
    if (level >= vpath.size() || level >= rpath.size()) return false;  // same queue: not a reclaim
    const QueueInfo& reclaimee = ssn.queues[vpath[level]];
    const QueueInfo& mine = ssn.queues[rpath[level]];
    if (!may_give(ssn, reclaimee, reclaimee.allocated, mine, req)) return false;
    if (!reclaimer.preemptible && !non_preemptible_within_deserved(ssn, rpath, req)) return false;
    const QueueQuantities lost = ssn.allocated_quantities(ssn.tasks[victim_task]);
    return !sibling_less_served(mine, reclaimee, lost, req, multiplier, true);
  }

  /// MaintainFairShare or GuaranteeDeservedQuota for one entry of `reclaimee`, which holds `rem`,
  /// given to `reclaimer_level` (the reclaimer's queue at the same level) asking for `req`.
  static bool may_give(const Session& ssn, const QueueInfo& reclaimee, const QueueQuantities& rem,
                       const QueueInfo& reclaimer_level, const QueueQuantities& req) {
    QueueQuantities allocatable;
    for (Field r : kResources) allocatable.*r = allocatable_share(ssn, reclaimee, r);
    const bool maintain_fair_share = !all_le(rem, allocatable);
    const bool guarantee_deserved =
        all_le(plus(reclaimer_level.allocated, req), reclaimer_level.deserved) && !all_le(rem, reclaimee.deserved);
    return maintain_fair_share || guarantee_deserved;
  }

  /// A non-preemptible reclaimer's queues stay within their deserved quota with `req` added.
  static bool non_preemptible_within_deserved(const Session& ssn, std::span<const int32_t> rpath,
                                              const QueueQuantities& req) {
    for (int32_t q : rpath) {
      const QueueInfo& qi = ssn.queues[q];
      for (Field r : kResources) {
        if (qi.deserved.*r != -1 && qi.allocated_non_preemptible.*r + req.*r > qi.deserved.*r + kEpsilon) return false;
      }
    }
    return true;
  }

  /// Whether `sib`, losing `lost`, would end up relatively less served than `mine` with `req` added
  /// (sib.allocated still includes `lost` when the victims are `still_placed`).
  static bool sibling_less_served(const QueueInfo& mine, const QueueInfo& sib, const QueueQuantities& lost,
                                  const QueueQuantities& req, double multiplier, bool still_placed) {
    auto ratio = [](double a, double f) {
      if (f == 0) return a > 0 ? std::numeric_limits<double>::infinity() : 0.0;
      return f == -1 ? 0.0 : a / f;
    };
    for (Field r : kResources) {
      if (lost.*r <= 0 && req.*r <= 0) continue;
      const double mine_ratio = ratio(mine.allocated.*r + req.*r, mine.fair_share.*r);
      const double sib_ratio = ratio(sib.allocated.*r - (still_placed ? lost.*r : 0), sib.fair_share.*r);
      if (mine_ratio > 1 && sib.fair_share.*r > 0 && mine_ratio * multiplier >= sib_ratio) return true;
    }
    return false;
  }

  /// A queue's quantities as KAI's ResourceRequirements print them.
  static std::string quantities(const QueueQuantities& q) {
    return "GPU: " + humanize(q.gpu, &QueueQuantities::gpu) + ", CPU: " + humanize(q.cpu, &QueueQuantities::cpu) +
           " (cores), memory: " + humanize(q.memory, &QueueQuantities::memory) + " (GB)";
  }
  static std::string queue_line(const QueueInfo& q) {
    return q.name + " uses <" + quantities(q.allocated) + "> with a quota of <" + quantities(q.deserved) +
           ">, fair-share of <" + quantities(q.fair_share) + "> and queue priority of <" + std::to_string(q.priority) +
           ">.";
  }

  /// KAI's reclaim message: the pod and who took it, then both queues' usage, quota, fair share and
  /// priority; when the two queues have different parents, their parents' instead.
  static std::string reclaim_message(const Session& ssn, const JobInfo& reclaimer, const TaskInfo& victim) {
    std::string m = "Pod " + victim.key + " was preempted by workload " + reclaimer.key + ".";
    const int32_t victim_queue = ssn.jobs[victim.job].queue;
    if (victim_queue == kNoQueue || reclaimer.queue == kNoQueue) return m;
    const QueueInfo* reclaimee = &ssn.queues[victim_queue];
    const QueueInfo* taker = &ssn.queues[reclaimer.queue];
    if (reclaimee->parent != taker->parent) {
      if (reclaimee->parent != kNoQueue) reclaimee = &ssn.queues[reclaimee->parent];
      if (taker->parent != kNoQueue) taker = &ssn.queues[taker->parent];
    }
    return m + "\n" + queue_line(*reclaimee) + "\n" + queue_line(*taker);
  }
  std::string_view name() const override { return kProportionName; }

  void on_session_open(Session& ssn) override {
    std::vector<uint32_t> roots;
    for (uint32_t i = 0; i < ssn.queues.size(); ++i) {
      if (ssn.queues[i].parent == kNoQueue) roots.push_back(i);
    }
    for (Field r : kResources) divide(ssn, roots, total_of(ssn, r), r, k_value_);
    paths_.take(ssn);

    ssn.queue_order_fn = [&ssn](const QueueInfo& a, const JobInfo&, const QueueQuantities& ra,
                                const QueueInfo& b, const JobInfo&,
                                const QueueQuantities& rb) { return compare_queues(ssn, a, ra, b, rb); };
    ssn.job_capacity_fns.push_back([&ssn](const JobInfo& job, std::span<const uint32_t> tasks) {
      return check_capacity(ssn, job, ssn.queue_request_of(tasks));
    });
    ssn.can_reclaim_fns.push_back(
        [&ssn](const JobInfo& job, const QueueQuantities& req) { return can_reclaim(ssn, job, req); });
    ssn.reclaim_validator_fns.push_back([this, &ssn](const JobInfo& job, const QueueQuantities& req,
                                                     std::span<const uint32_t> victims, bool still_placed) {
      if (still_placed && victims.size() == 1 && !probe_by_tables_)
        return reclaimable_probe(ssn, paths_, job, req, victims.front(), saturation_multiplier_);
      return reclaimable(ssn, job, req, victims, saturation_multiplier_, still_placed);
    });
    ssn.reclaim_message_fn = [&ssn](const std::string&, const JobInfo& reclaimer, const TaskInfo& victim) {
      return reclaim_message(ssn, reclaimer, victim);
    };
    ssn.task_capacity_fns.push_back(
        [&ssn](const TaskInfo& task, const NodeInfo& node) -> std::optional<std::string> {
          QueueQuantities req;
          req.cpu = static_cast<double>(task.req.milli_cpu);
          req.memory = static_cast<double>(task.req.memory);
          req.gpu = static_cast<double>(task.req.milli_gpu) / 1000.0 + task.mig_gpus;
          if (task.gpu.is_shared()) {
            req.gpu += static_cast<double>(shared_portion_on(task, node)) * task.gpu.num_devices / 1000.0;
          }
          if (auto why = check_capacity(ssn, ssn.jobs[task.job], req)) return why->message;
          return std::nullopt;
        });
  }

  static int compare_queues(const Session& ssn, const QueueInfo& a, const QueueQuantities& ra,
                            const QueueInfo& b, const QueueQuantities& rb) {
    auto over_utilized = [](const QueueInfo& q) {
      for (Field r : kResources) {
        if (!(q.fair_share.*r < q.allocated.*r)) return false;
      }
      return true;
    };
    const bool oa = over_utilized(a), ob = over_utilized(b);
    if (oa != ob) return oa ? 1 : -1;
    auto starved = [](const QueueInfo& q, const QueueQuantities& req) {
      for (Field r : kResources) {
        if (q.deserved.*r != -1 && q.allocated.*r + req.*r > q.deserved.*r + kEpsilon) return false;
      }
      return true;
    };
    const bool sa = starved(a, ra), sb = starved(b, rb);
    if (sa != sb) return sa ? -1 : 1;
    if (a.priority != b.priority) return a.priority > b.priority ? -1 : 1;
    auto penalized = [&](const QueueInfo& q, const QueueQuantities& req) {
      for (Field r : kResources) {
        if (req.*r > 0 && allocatable_share(ssn, q, r) == 0) return true;
      }
      return false;
    };
    const bool pa = penalized(a, ra), pb = penalized(b, rb);
    if (pa != pb) return pa ? 1 : -1;
    const double da = dominant_share(ssn, a, plus(a.allocated, ra));
    const double db = dominant_share(ssn, b, plus(b.allocated, rb));
    if (std::abs(da - db) > kEpsilon) return da < db ? -1 : 1;
    const double da0 = dominant_share(ssn, a, a.allocated), db0 = dominant_share(ssn, b, b.allocated);
    if (std::abs(da0 - db0) > kEpsilon) return da0 < db0 ? -1 : 1;
    bool all_le = true, one_lt = false, all_ge = true, one_gt = false;
    for (Field r : kResources) {
      const double x = allocatable_share(ssn, a, r), y = allocatable_share(ssn, b, r);
      all_le = all_le && x <= y;
      one_lt = one_lt || x < y;
      all_ge = all_ge && x >= y;
      one_gt = one_gt || x > y;
    }
    if (all_le && one_lt) return -1;
    if (all_ge && one_gt) return 1;
    if (a.creation != b.creation) return a.creation < b.creation ? -1 : 1;
    return a.name < b.name ? -1 : (a.name > b.name ? 1 : 0);
  }

  /// OverLimit on every ancestor-or-self with a limit, NonPreemptibleOverQuota for non-preemptible jobs.
  static std::optional<FitReason> check_capacity(const Session& ssn, const JobInfo& job,
                                                 const QueueQuantities& req) {
    if (job.queue == kNoQueue) return std::nullopt;
    for (int32_t id = job.queue; id != kNoQueue; id = ssn.queues[id].parent) {
      const QueueInfo& q = ssn.queues[id];
      for (Field r : kResources) {
        if (req.*r <= 0) continue;
        if (q.max_allowed.*r != -1 && q.max_allowed.*r + kEpsilon < q.allocated.*r + req.*r) {
          const std::string unit = std::string(" ") + unit_word(r);
          return FitReason{"OverLimit", q.name + " quota has reached the allowable limit of " + resource_name(r) +
                                            ". Limit is " + humanize(q.max_allowed.*r, r) + unit + ", currently " +
                                            humanize(q.allocated.*r, r) + unit +
                                            " allocated and workload requested " + humanize(req.*r, r) + unit};
        }
        if (!job.preemptible && q.deserved.*r != -1 &&
            q.deserved.*r + kEpsilon < q.allocated_non_preemptible.*r + req.*r) {
          // KAI names the request's resource in full ("CPU cores", "GB memory"), the rest by unit only.
          const std::string unit = std::string(" ") + unit_word(r);
          const std::string requested = humanize(req.*r, r) + (r == &QueueQuantities::gpu   ? " GPUs"
                                                               : r == &QueueQuantities::cpu ? " CPU cores"
                                                                                            : " GB memory");
          return FitReason{"NonPreemptibleOverQuota",
                           "Non-preemptible workload is over quota. Workload requested " + requested + ", but " +
                               q.name + " quota is " + humanize(q.deserved.*r, r) + unit + ", while " +
                               humanize(q.allocated_non_preemptible.*r, r) + unit +
                               " are already allocated for non-preemptible pods. Use a preemptible workload to go "
                               "over quota."};
        }
      }
    }
    return std::nullopt;
  }

 private:
  double k_value_ = 1.0;
  double saturation_multiplier_ = 1.0;
  /// Tests only (argument probeByTables=true): the one-victim probes take the general check, so
  /// that a property test can compare the two (tests/core/property_test.cpp).
  bool probe_by_tables_ = false;
  QueuePaths paths_;
};

}  // namespace

void register_proportion_plugin(PluginRegistry& r) {
  r.add(kProportionName, [](const PluginConfig& c) { return std::make_unique<ProportionPlugin>(c); });
}

}  // namespace kai::core::plugins
