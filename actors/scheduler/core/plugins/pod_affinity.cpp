// The podaffinity plugin (KAI's, on in its operator's default configuration): ranks nodes by the
// preferred pod (anti-)affinity terms of the pod and of the pods already placed, as kube-scheduler's
// InterPodAffinity scores them, unnormalised and scaled by KAI's weight for Kubernetes plugins
// (docs/pod-constraints.md "Preferred terms").
#include "actors/scheduler/core/inter_pod_constraints.hpp"
#include "actors/scheduler/core/plugins/builtin.hpp"
#include "actors/scheduler/core/session.hpp"

namespace kai::core::plugins {
namespace {

/// KAI's score weight for Kubernetes framework plugins: one matching pod outweighs every other
/// node-order plugin.
constexpr double kK8sPluginsWeight = 1'000'000;

class PodAffinityPlugin final : public Plugin {
 public:
  std::string_view name() const override { return kPodAffinityName; }
  void on_session_open(Session& ssn) override {
    ssn.pod_affinity_scoring = true;
    ssn.node_order_fns.push_back([&ssn](const TaskInfo& task, std::span<const uint32_t> nodes, std::span<double> scores) {
      if (!ssn.inter_pod || !ssn.inter_pod->scores(task)) return;
      for (size_t i = 0; i < nodes.size(); ++i)
        scores[i] += kK8sPluginsWeight * static_cast<double>(ssn.inter_pod->preferred_score(task, ssn.nodes[nodes[i]]));
    });
  }
};

}  // namespace

void register_pod_affinity_plugin(PluginRegistry& r) {
  r.add(kPodAffinityName, [](const PluginConfig&) { return std::make_unique<PodAffinityPlugin>(); });
}

}  // namespace kai::core::plugins
