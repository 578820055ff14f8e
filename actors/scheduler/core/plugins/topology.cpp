// The topology plugin (docs/topology.md): with it configured (KAI's default), jobs place their tasks
// through their topology scopes and a constraint naming a missing topology or level holds the job
// with that reason; without it, constraints are ignored, as KAI ignores them.
#include "actors/scheduler/core/plugins/builtin.hpp"
#include "actors/scheduler/core/session.hpp"

namespace kai::core::plugins {
namespace {

class TopologyPlugin final : public Plugin {
 public:
  std::string_view name() const override { return kTopologyName; }
  void on_session_open(Session& ssn) override {
    ssn.topology_plugin = true;
    for (JobInfo& job : ssn.jobs) {
      job.invalid.insert(job.invalid.end(), job.topology_errors.begin(), job.topology_errors.end());
    }
  }
};

}  // namespace

void register_topology_plugin(PluginRegistry& registry) {
  registry.add(kTopologyName, [](const PluginConfig&) { return std::make_unique<TopologyPlugin>(); });
}

}  // namespace kai::core::plugins
