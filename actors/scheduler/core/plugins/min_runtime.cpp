// The minruntime plugin (docs/kai-compatibility.md "Min-runtime"): a victim whose pod group
// started less than its minimum runtime ago keeps its pods. Preempt takes the victim queue's
// preemptMinRuntime (nearest queue up the tree that sets it); reclaim takes reclaimMinRuntime, resolved
// from the victim's queue up to, not including, the lowest common ancestor with the reclaimer's queue
// (`lca`, default) or from the victim's queue up to the root (`queue`). Pods of an elastic victim
// beyond minAvailable are never protected.
#include <optional>
#include <set>
#include <vector>

#include "actors/scheduler/core/action.hpp"
#include "actors/scheduler/core/plugins/builtin.hpp"
#include "actors/scheduler/core/session.hpp"
#include "k8s/model/time.hpp"

namespace kai::core::plugins {
namespace {

double duration_argument(const PluginConfig& c, const char* key) {
  auto it = c.arguments.find(key);
  if (it == c.arguments.end()) return 0;
  auto ns = model::parse_go_duration_ns(it->second);
  return ns ? static_cast<double>(*ns) / 1e9 : 0;
}

class MinRuntimePlugin final : public Plugin {
 public:
  explicit MinRuntimePlugin(const PluginConfig& c)
      : default_preempt_(duration_argument(c, "defaultPreemptMinRuntime")),
        default_reclaim_(duration_argument(c, "defaultReclaimMinRuntime")) {
    if (auto it = c.arguments.find("reclaimResolveMethod"); it != c.arguments.end())
      lca_ = it->second != "queue";
  }
  std::string_view name() const override { return kMinRuntimeName; }

  void on_session_open(Session& ssn) override {
    ssn.victim_filter_fns.push_back([this, &ssn](const std::string& action, const JobInfo& preemptor,
                                                 const JobInfo& victim, bool core) {
      if (!core || !victim.last_start || victim.queue == kNoQueue) return true;
      double runtime = 0;
      if (action == action_names::kPreempt) {
        runtime =
            resolve(ssn, victim.queue, kNoQueue, &QueueInfo::preempt_min_runtime).value_or(default_preempt_);
      } else if (action == action_names::kReclaim) {
        const int32_t stop = lca_ ? lowest_common_ancestor(ssn, victim.queue, preemptor.queue) : kNoQueue;
        runtime =
            resolve(ssn, victim.queue, stop, &QueueInfo::reclaim_min_runtime).value_or(default_reclaim_);
      } else {
        return true;  // consolidation moves pods; KAI applies no minimum runtime there
      }
      return static_cast<double>(ssn.now_ms()) / 1000.0 >= static_cast<double>(*victim.last_start) + runtime;
    });
  }

 private:
  static std::optional<double> resolve(const Session& ssn, int32_t from, int32_t stop,
                                       std::optional<double> QueueInfo::*field) {
    for (int32_t q = from; q != kNoQueue && q != stop; q = ssn.queues[q].parent) {
      if (ssn.queues[q].*field) return ssn.queues[q].*field;
    }
    return std::nullopt;
  }
  static int32_t lowest_common_ancestor(const Session& ssn, int32_t a, int32_t b) {
    std::set<int32_t> up;
    for (int32_t q = a; q != kNoQueue; q = ssn.queues[q].parent) up.insert(q);
    for (int32_t q = b; q != kNoQueue; q = ssn.queues[q].parent) {
      if (up.count(q)) return q;
    }
    return kNoQueue;
  }

  double default_preempt_;
  double default_reclaim_;
  bool lca_ = true;
};

}  // namespace

std::vector<double> min_runtime_defaults(const std::vector<PluginConfig>& plugins) {
  std::vector<double> out;
  for (const auto& c : plugins) {
    if (c.name != kMinRuntimeName) continue;
    out.push_back(duration_argument(c, "defaultPreemptMinRuntime"));
    out.push_back(duration_argument(c, "defaultReclaimMinRuntime"));
  }
  return out;
}

void register_min_runtime_plugin(PluginRegistry& r) {
  r.add(kMinRuntimeName, [](const PluginConfig& c) { return std::make_unique<MinRuntimePlugin>(c); });
}

}  // namespace kai::core::plugins
