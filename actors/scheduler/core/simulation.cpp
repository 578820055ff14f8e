#include "actors/scheduler/core/simulation.hpp"

#include "actors/scheduler/core/apply_session.hpp"
#include "events/projection.hpp"

namespace kai::core {
namespace {

void append_if_changed(std::vector<AllocationStep>& steps, const AllocationStep& step) {
  if (!steps.empty()) {
    const AllocationStep& last = steps.back();
    if (last.gpu == step.gpu && last.cpu == step.cpu && last.memory == step.memory) return;
  }
  steps.push_back(step);
}

/// What each queue holds from this round on, as apply_session leaves the cluster: tasks allocated,
/// binding, bound or running (pipelined ones still wait, releasing ones are gone); and the cluster's
/// capacity. A queue's allocation includes its children's, as KAI's queue controller publishes it.
void record_allocation(const Session& ssn, int64_t at_ms, AllocationHistory& history) {
  std::vector<QueueQuantities> held(ssn.queues.size());
  for (const TaskInfo& t : ssn.tasks) {
    if (t.ghost) continue;
    if (t.status != PodStatus::kAllocated && t.status != PodStatus::kBinding && t.status != PodStatus::kBound &&
        t.status != PodStatus::kRunning) {
      continue;
    }
    const QueueQuantities q = ssn.allocated_quantities(t);
    for (int32_t id = ssn.jobs[t.job].queue; id != kNoQueue; id = ssn.queues[id].parent) {
      held[id].gpu += q.gpu;
      held[id].cpu += q.cpu;
      held[id].memory += q.memory;
    }
  }
  for (size_t i = 0; i < ssn.queues.size(); ++i) {
    append_if_changed(history.queues[ssn.queues[i].name], {at_ms, held[i].gpu, held[i].cpu, held[i].memory});
  }
  const QueueQuantities& total = ssn.cluster_total;
  append_if_changed(history.capacity, {at_ms, total.gpu, total.cpu, total.memory});
}

}  // namespace

SimulationResult simulate(model::ClusterObjects objects, const SessionOptions& options, int rounds,
                          int64_t now_step) {
  SimulationResult r;
  r.objects = std::make_unique<model::ClusterObjects>(std::move(objects));
  for (int round = 0; round < std::max(1, rounds); ++round) {
    if (r.cycle) {
      apply_session(*r.objects, *r.cycle->session);
      for (const auto& change : r.cycle->job_state_changes) {
        (void)events::apply_record(r.records, events::Event{0, 0, events::kSchemaVersion, change});
      }
      r.cycle.reset();
      r.session = nullptr;
    }
    CycleInput in;
    in.objects = model::ObjectRefs::of(*r.objects);
    in.records = &r.records;
    in.options = options;
    in.options.now = options.now + round * now_step;
    in.options.now_ms = in.options.now * 1000;
    // Time-based fair share: the usage of the allocations the earlier rounds left, as the daemon
    // reads it from its log (docs/time-based-fair-share.md).
    if (options.config.usage_db && options.queue_usage == nullptr) {
      const UsageParams& params = options.config.usage_db->params;
      *r.usage = usage_at(r.history, params, usage_evaluation_time(params, in.options.now_ms));
      in.options.queue_usage = r.usage.get();
    }
    in.cycle_id = static_cast<uint64_t>(round) + 1;
    in.reservation_cleanup = false;  // nothing binds in a simulation: no reservation pods appear
    r.cycle = std::make_unique<CycleResult>(run_cycle(in));
    r.session = r.cycle->session.get();
    r.skipped_actions = r.cycle->skipped_actions;
    if (options.config.usage_db && options.queue_usage == nullptr) {
      record_allocation(*r.session, in.options.now_ms, r.history);
    }
    ++r.rounds;
    for (auto d : r.cycle->decisions) {
      d.seq = r.decisions.size() + 1;
      r.decisions.push_back(std::move(d));
    }
    if (r.cycle->decisions.empty() && now_step == 0) break;
  }
  return r;
}

}  // namespace kai::core
