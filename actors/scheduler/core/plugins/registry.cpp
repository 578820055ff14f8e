#include "actors/scheduler/core/plugins/builtin.hpp"

namespace kai::core {
namespace {

/// Plugins of KAI's default configuration whose work happens outside the allocate session here:
/// `dynamicresources` (its required constraints are refused at session build, see
/// docs/kai-compatibility.md "Predicates and refused constraints") and `snapshot` (the daemon's
/// /get-snapshot endpoint). They are accepted by name so that KAI configurations load unchanged.
class AcceptedPlugin final : public Plugin {
 public:
  explicit AcceptedPlugin(std::string name) : name_(std::move(name)) {}
  std::string_view name() const override { return name_; }
  void on_session_open(Session&) override {}

 private:
  std::string name_;
};

}  // namespace

void register_builtin_plugins(PluginRegistry& registry) {
  plugins::register_ordering_plugins(registry);
  plugins::register_node_order_plugins(registry);
  plugins::register_predicates_plugin(registry);
  plugins::register_proportion_plugin(registry);
  plugins::register_min_runtime_plugin(registry);
  plugins::register_topology_plugin(registry);
  plugins::register_pod_affinity_plugin(registry);
  for (std::string_view name : {plugins::kDynamicResourcesName, plugins::kSnapshotName}) {
    registry.add(name,
                 [name](const PluginConfig&) { return std::make_unique<AcceptedPlugin>(std::string(name)); });
  }
}

const PluginRegistry& builtin_plugins() {
  static const PluginRegistry registry = [] {
    PluginRegistry r;
    register_builtin_plugins(r);
    return r;
  }();
  return registry;
}

}  // namespace kai::core
