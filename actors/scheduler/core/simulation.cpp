#include "actors/scheduler/core/simulation.hpp"

#include "actors/scheduler/core/apply_session.hpp"
#include "events/projection.hpp"

namespace kai::core {

SimulationResult simulate(model::ClusterObjects objects, const SessionOptions& options, int rounds,
                          int64_t now_step, events::ScheduleRecords records) {
  SimulationResult r;
  r.records = std::move(records);
  r.objects = std::make_unique<model::ClusterObjects>(std::move(objects));
  for (int round = 0; round < std::max(1, rounds); ++round) {
    if (r.cycle) {
      apply_session(*r.objects, *r.cycle->session);
      for (const auto& change : r.cycle->job_state_changes) {
        (void)events::apply_record(r.records, events::Event{0, 0, events::kSchemaVersion, change});
      }
      // Time-based fair share: what each queue holds from the last round on, the history the next
      // round reads its usage from, as the daemon folds it from its log.
      if (r.cycle->allocation) {
        (void)events::apply_record(r.records, events::Event{0, 0, events::kSchemaVersion, *r.cycle->allocation});
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
    in.cycle_id = static_cast<uint64_t>(round) + 1;
    in.reservation_cleanup = false;  // nothing binds in a simulation: no reservation pods appear
    in.pod_group_writes = false;     // nor writes PodGroups
    r.cycle = std::make_unique<CycleResult>(run_cycle(in));
    r.session = r.cycle->session.get();
    r.skipped_actions = r.cycle->skipped_actions;
    if (r.cycle->allocation) r.allocations.push_back(*r.cycle->allocation);
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
