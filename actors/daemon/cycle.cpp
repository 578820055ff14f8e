#include "actors/daemon/cycle.hpp"

#include "actors/scheduler/core/action.hpp"

namespace kai::daemon {

namespace {

uint64_t micros_since(std::chrono::steady_clock::time_point t) {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t).count());
}

}  // namespace

CycleOutput run_cycle(const model::ObjectRefs& objects, const core::SessionOptions& options,
                      uint64_t cycle_id) {
  CycleOutput out;
  const auto start = std::chrono::steady_clock::now();
  core::Session ssn(objects, options);
  out.build_us = micros_since(start);
  for (const auto& action : options.config.actions) {
    const auto t = std::chrono::steady_clock::now();
    core::run_actions(ssn, {action});
    out.action_us.emplace_back(action, micros_since(t));
  }
  out.decisions = ssn.decisions;
  out.warnings = ssn.warnings;
  for (const auto& job : ssn.jobs) {
    if (job.fit_errors.empty() || ssn.active_allocated_count(job) >= job.min_member) continue;
    events::UnschedulableEvent u;
    u.cycle_id = cycle_id;
    u.pod_group = job.key;
    u.queue = job.queue_name;
    for (const auto& r : job.fit_errors) u.reasons.push_back({r.reason, r.message});
    out.unschedulable.push_back(std::move(u));
    for (uint32_t t : job.tasks) {
      const core::TaskInfo& task = ssn.tasks[t];
      if (task.status != core::PodStatus::kPending) continue;
      out.pending.push_back({task.key, task.uid, job.fit_errors.front().message});
    }
  }
  for (const auto& q : ssn.queues) {
    QueueFigures f;
    f.name = q.name;
    f.fair_gpu = q.fair_share.gpu;
    f.fair_cpu = q.fair_share.cpu / 1000.0;
    f.fair_memory = q.fair_share.memory / 1e9;
    f.used_gpu = q.allocated.gpu;
    f.used_cpu = q.allocated.cpu / 1000.0;
    f.used_memory = q.allocated.memory / 1e9;
    out.queues.push_back(f);
  }
  out.total_us = micros_since(start);
  return out;
}

}  // namespace kai::daemon
