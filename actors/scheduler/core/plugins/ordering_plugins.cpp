// Job, task and pod-set ordering plugins (docs/kai-compatibility.md "Job and queue order"): priority, elastic, taskorder,
// kubeflow, ray, subgrouporder. Each is tiny, so they share one file; each has its own class.
#include "actors/scheduler/core/plugins/builtin.hpp"
#include "actors/scheduler/core/session.hpp"

namespace kai::core::plugins {
namespace {

/// Higher PodGroup priority first.
class PriorityPlugin final : public Plugin {
 public:
  std::string_view name() const override { return kPriorityName; }
  void on_session_open(Session& ssn) override {
    ssn.job_order_fns.push_back([](const JobInfo& a, const JobInfo& b) {
      return a.priority == b.priority ? 0 : (a.priority > b.priority ? -1 : 1);
    });
  }
};

/// Jobs below minMember first, then jobs exactly at minMember before jobs above it.
class ElasticPlugin final : public Plugin {
 public:
  std::string_view name() const override { return kElasticName; }
  void on_session_open(Session& ssn) override {
    ssn.job_order_fns.push_back([&ssn](const JobInfo& a, const JobInfo& b) {
      auto rank = [&ssn](const JobInfo& j) {
        const int32_t allocated = ssn.active_allocated_count(j);
        return allocated < j.min_member ? 0 : (allocated == j.min_member ? 1 : 2);
      };
      const int ra = rank(a), rb = rank(b);
      return ra == rb ? 0 : (ra < rb ? -1 : 1);
    });
  }
};

/// Tasks with label kai.scheduler/task-priority first, higher value first.
class TaskOrderPlugin final : public Plugin {
 public:
  std::string_view name() const override { return kTaskOrderName; }
  void on_session_open(Session& ssn) override {
    ssn.task_order_fns.push_back([](const TaskInfo& a, const TaskInfo& b) {
      if (a.task_priority.has_value() != b.task_priority.has_value()) return a.task_priority ? -1 : 1;
      if (!a.task_priority || *a.task_priority == *b.task_priority) return 0;
      return *a.task_priority > *b.task_priority ? -1 : 1;
    });
  }
};

/// Kubeflow masters / launchers and Ray heads go first (both plugins share the `leader` flag).
class LeaderFirstPlugin final : public Plugin {
 public:
  explicit LeaderFirstPlugin(std::string_view name) : name_(name) {}
  std::string_view name() const override { return name_; }
  void on_session_open(Session& ssn) override {
    ssn.task_order_fns.push_back(
        [](const TaskInfo& a, const TaskInfo& b) { return a.leader == b.leader ? 0 : (a.leader ? -1 : 1); });
  }

 private:
  std::string_view name_;
};

/// Pod sets below minAvailable first, then the lower allocated / minAvailable ratio.
class SubGroupOrderPlugin final : public Plugin {
 public:
  std::string_view name() const override { return kSubGroupOrderName; }
  void on_session_open(Session& ssn) override {
    ssn.pod_set_order_fns.push_back([&ssn](const JobInfo&, const PodSetInfo& a, const PodSetInfo& b) {
      const int32_t aa = ssn.pod_set_active_allocated(a), ab = ssn.pod_set_active_allocated(b);
      const bool below_a = aa < a.min_available, below_b = ab < b.min_available;
      if (below_a != below_b) return below_a ? -1 : 1;
      // Compare aa/min_a with ab/min_b without division.
      const int64_t lhs = static_cast<int64_t>(aa) * b.min_available;
      const int64_t rhs = static_cast<int64_t>(ab) * a.min_available;
      return lhs == rhs ? 0 : (lhs < rhs ? -1 : 1);
    });
  }
};

}  // namespace

void register_ordering_plugins(PluginRegistry& r) {
  r.add(kPriorityName, [](const PluginConfig&) { return std::make_unique<PriorityPlugin>(); });
  r.add(kElasticName, [](const PluginConfig&) { return std::make_unique<ElasticPlugin>(); });
  r.add(kTaskOrderName, [](const PluginConfig&) { return std::make_unique<TaskOrderPlugin>(); });
  r.add(kKubeflowName, [](const PluginConfig&) { return std::make_unique<LeaderFirstPlugin>(kKubeflowName); });
  r.add(kRayName, [](const PluginConfig&) { return std::make_unique<LeaderFirstPlugin>(kRayName); });
  r.add(kSubGroupOrderName, [](const PluginConfig&) { return std::make_unique<SubGroupOrderPlugin>(); });
}

}  // namespace kai::core::plugins
