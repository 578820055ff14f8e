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
  // A job whose topology cannot be resolved is invalid: the session derives it so when this plugin
  // is configured (session_builder_jobs.cpp derive_job).
  void on_session_open(Session& ssn) override { ssn.topology_plugin = true; }
};

}  // namespace

void register_topology_plugin(PluginRegistry& registry) {
  registry.add(kTopologyName, [](const PluginConfig&) { return std::make_unique<TopologyPlugin>(); });
}

}  // namespace kai::core::plugins
