// The proportion plugin (kai-behaviour.md §4.6): hierarchical fair share, the queue order of §4.4, and
// the capacity policy (OverLimit, NonPreemptibleOverQuota) checked before and during allocation.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "actors/scheduler/core/node_fit.hpp"
#include "actors/scheduler/core/plugins/builtin.hpp"
#include "actors/scheduler/core/session.hpp"

namespace kai::core::plugins {
namespace {

using Field = double QueueQuantities::*;
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
          return !(q.request.*r <= q.fair_share.*r) && !(q.max_allowed.*r != -1 && q.max_allowed.*r <= q.fair_share.*r);
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
          const double usage = 0;  // no usage database: historical usage is 0
          const double w = std::max(0.0, nw + k_value * (nw - usage));
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

double total_of(const Session& ssn, Field r) { return ssn.cluster_total.*r; }

/// max(deserved, fair share) capped by the limit; -1 deserved means the limit (§4.4).
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
  for (Field r : kResources) a.*r += b.*r;
  return a;
}

std::string format_amount(double v, Field r) {
  char buf[64];
  if (r == &QueueQuantities::gpu) {
    std::snprintf(buf, sizeof buf, "%g GPUs", v);
  } else if (r == &QueueQuantities::cpu) {
    std::snprintf(buf, sizeof buf, "%g CPU cores", v / 1000);
  } else {
    std::snprintf(buf, sizeof buf, "%g GB memory", v / 1e9);
  }
  return buf;
}

const char* resource_name(Field r) {
  return r == &QueueQuantities::gpu ? "GPUs" : r == &QueueQuantities::cpu ? "CPU cores" : "memory";
}

class ProportionPlugin final : public Plugin {
 public:
  explicit ProportionPlugin(const PluginConfig& config) {
    if (auto it = config.arguments.find("kValue"); it != config.arguments.end()) {
      k_value_ = std::strtod(it->second.c_str(), nullptr);
    }
  }
  std::string_view name() const override { return "proportion"; }

  void on_session_open(Session& ssn) override {
    std::vector<uint32_t> roots;
    for (uint32_t i = 0; i < ssn.queues.size(); ++i) {
      if (ssn.queues[i].parent == kNoQueue) roots.push_back(i);
    }
    for (Field r : kResources) divide(ssn, roots, total_of(ssn, r), r, k_value_);

    ssn.queue_order_fn = [&ssn](const QueueInfo& a, const JobInfo&, const QueueQuantities& ra, const QueueInfo& b,
                                const JobInfo&, const QueueQuantities& rb) {
      return compare_queues(ssn, a, ra, b, rb);
    };
    ssn.job_capacity_fns.push_back([&ssn](const JobInfo& job, std::span<const uint32_t> tasks) {
      return check_capacity(ssn, job, ssn.queue_request_of(tasks));
    });
    ssn.task_capacity_fns.push_back([&ssn](const TaskInfo& task, const NodeInfo& node) -> std::optional<std::string> {
      QueueQuantities req;
      req.cpu = static_cast<double>(task.req.milli_cpu);
      req.memory = static_cast<double>(task.req.memory);
      req.gpu = static_cast<double>(task.req.milli_gpu) / 1000.0;
      if (task.gpu.is_shared()) {
        req.gpu += static_cast<double>(shared_portion_on(task, node)) * task.gpu.num_devices / 1000.0;
      }
      if (auto why = check_capacity(ssn, ssn.jobs[task.job], req)) return why->message;
      return std::nullopt;
    });
  }

  static int compare_queues(const Session& ssn, const QueueInfo& a, const QueueQuantities& ra, const QueueInfo& b,
                            const QueueQuantities& rb) {
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
  static std::optional<FitReason> check_capacity(const Session& ssn, const JobInfo& job, const QueueQuantities& req) {
    if (job.queue == kNoQueue) return std::nullopt;
    for (int32_t id = job.queue; id != kNoQueue; id = ssn.queues[id].parent) {
      const QueueInfo& q = ssn.queues[id];
      for (Field r : kResources) {
        if (req.*r <= 0) continue;
        if (q.max_allowed.*r != -1 && q.max_allowed.*r + kEpsilon < q.allocated.*r + req.*r) {
          return FitReason{"OverLimit", q.name + " quota has reached the allowable limit of " + resource_name(r) +
                                            ". Limit is " + format_amount(q.max_allowed.*r, r) +
                                            ", currently " + format_amount(q.allocated.*r, r) +
                                            " allocated and workload requested " + format_amount(req.*r, r)};
        }
        if (!job.preemptible && q.deserved.*r != -1 &&
            q.deserved.*r + kEpsilon < q.allocated_non_preemptible.*r + req.*r) {
          return FitReason{"NonPreemptibleOverQuota",
                           "Non-preemptible workload is over quota. Workload requested " + format_amount(req.*r, r) +
                               ", but " + q.name + " quota is " + format_amount(q.deserved.*r, r) + ", while " +
                               format_amount(q.allocated_non_preemptible.*r, r) +
                               " are already allocated for non-preemptible pods."};
        }
      }
    }
    return std::nullopt;
  }

 private:
  double k_value_ = 1.0;
};

}  // namespace

void register_proportion_plugin(PluginRegistry& r) {
  r.add("proportion", [](const PluginConfig& c) { return std::make_unique<ProportionPlugin>(c); });
}

}  // namespace kai::core::plugins
