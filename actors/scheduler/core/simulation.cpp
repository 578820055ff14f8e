#include "actors/scheduler/core/simulation.hpp"

#include "actors/scheduler/core/action.hpp"
#include "actors/scheduler/core/apply_session.hpp"

namespace kai::core {

SimulationResult simulate(model::ClusterObjects objects, const SessionOptions& options, int rounds) {
  SimulationResult r;
  r.objects = std::make_unique<model::ClusterObjects>(std::move(objects));
  for (int round = 0; round < std::max(1, rounds); ++round) {
    if (r.session) {
      apply_session(*r.objects, *r.session);
      r.session.reset();
    }
    r.session = std::make_unique<Session>(*r.objects, options);
    r.skipped_actions = run_actions(*r.session, options.config.actions);
    ++r.rounds;
    for (auto d : r.session->decisions) {
      d.seq = r.decisions.size() + 1;
      r.decisions.push_back(std::move(d));
    }
    if (r.session->decisions.empty()) break;
  }
  return r;
}

}  // namespace kai::core
