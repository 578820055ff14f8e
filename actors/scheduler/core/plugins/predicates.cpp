// The predicates plugin's static node filters (docs/kai-compatibility.md "Predicates and refused constraints"): node readiness and cordoning,
// taints / tolerations, nodeSelector, required node affinity, MIG strategy and GPU-memory sync. They
// depend only on the pod spec and node properties, so the session caches them per pod signature. The
// filters that depend on other pods (pod (anti-)affinity, host ports, topology spread) are switched on
// here too and checked per placement (inter_pod_constraints.hpp).
// Resource fit (node_fit.cpp) is checked separately because it changes with every placement.
#include "actors/scheduler/core/node_selection.hpp"
#include "actors/scheduler/core/plugins/builtin.hpp"
#include "actors/scheduler/core/session.hpp"

namespace kai::core::plugins {
namespace {

std::optional<std::string> check(const TaskInfo& task, const NodeInfo& node) {
  const model::Pod& pod = *task.pod;
  const model::Node& obj = *node.object;
  if (task.legacy_mig) {
    return std::string(
        "pod requests MIG through legacy nvidia.com/mig-* annotations, which are not supported");
  }
  if (!node.ready) return std::string("node(s) were not ready");
  if (node.unschedulable) return std::string("node(s) were unschedulable");
  if (const model::Taint* taint = untolerated_taint(pod, obj))
    return "node(s) had untolerated taint {" + taint->key + ": " + taint->value + "}";
  if (!node_selected_by(pod, obj)) return std::string("node(s) didn't match Pod's node affinity/selector");
  switch (task.gpu.kind) {
    case GpuRequestKind::kMig:
      if (node.mig == MigStrategy::kSingle) {
        return std::string("node(s) use MIG strategy single, which serves only whole-GPU requests");
      }
      if (node.mig == MigStrategy::kNone && !node.mig_enabled)
        return std::string("node(s) are not MIG enabled");
      break;
    case GpuRequestKind::kWhole:
    case GpuRequestKind::kFraction:
    case GpuRequestKind::kMemory:
      if (node.mig == MigStrategy::kMixed) {
        return std::string("node(s) use MIG strategy mixed, which serves only MIG instance requests");
      }
      if (task.gpu.is_shared() && node.mig == MigStrategy::kSingle) {
        return std::string("node(s) use MIG strategy single, which cannot share GPUs");
      }
      break;
    case GpuRequestKind::kNone:
      break;
  }
  if (task.gpu.kind == GpuRequestKind::kMemory && (!node.gpu_memory_synced || !node.has_gpus())) {
    return std::string("node is not a gpu node or the gpu memory count on the node was not synced yet");
  }
  return std::nullopt;
}

class PredicatesPlugin final : public Plugin {
 public:
  std::string_view name() const override { return kPredicatesName; }
  void on_session_open(Session& ssn) override {
    ssn.static_predicate_fns.push_back(check);
    ssn.inter_pod_predicates = true;  // pod (anti-)affinity, host ports, spread (inter_pod_constraints.hpp)
  }
};

}  // namespace

void register_predicates_plugin(PluginRegistry& r) {
  r.add(kPredicatesName, [](const PluginConfig&) { return std::make_unique<PredicatesPlugin>(); });
}

}  // namespace kai::core::plugins
