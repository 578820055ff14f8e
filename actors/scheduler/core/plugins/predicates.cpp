// The predicates plugin's static node filters (docs/kai-compatibility.md "Predicates and refused constraints"): node readiness and cordoning,
// taints / tolerations, nodeSelector, required node affinity, MIG strategy and GPU-memory sync. They
// depend only on the pod spec and node properties, so the session caches them per pod signature.
// Resource fit (node_fit.cpp) is checked separately because it changes with every placement.
#include <algorithm>
#include <cstdlib>

#include "actors/scheduler/core/plugins/builtin.hpp"
#include "actors/scheduler/core/session.hpp"

namespace kai::core::plugins {
namespace {

bool tolerates(const model::Toleration& tol, const model::Taint& taint) {
  if (!tol.effect.empty() && tol.effect != taint.effect) return false;
  if (tol.op == "Exists") return tol.key.empty() || tol.key == taint.key;
  return tol.key == taint.key && tol.value == taint.value;
}

bool parse_long(const std::string& s, long long& out) {
  if (s.empty()) return false;
  char* end = nullptr;
  out = std::strtoll(s.c_str(), &end, 10);
  return end && *end == '\0';
}

bool requirement_matches(const model::NodeSelectorRequirement& r, const std::string* value) {
  const auto in = [&] {
    return value && std::find(r.values.begin(), r.values.end(), *value) != r.values.end();
  };
  if (r.op == "In") return in();
  if (r.op == "NotIn") return !in();
  if (r.op == "Exists") return value != nullptr;
  if (r.op == "DoesNotExist") return value == nullptr;
  if (r.op == "Gt" || r.op == "Lt") {
    long long have = 0, want = 0;
    if (!value || r.values.size() != 1 || !parse_long(*value, have) || !parse_long(r.values[0], want))
      return false;
    return r.op == "Gt" ? have > want : have < want;
  }
  return false;  // an unknown operator matches nothing, as in Kubernetes
}

bool term_matches(const model::NodeSelectorTerm& term, const model::Node& node) {
  if (term.match_expressions.empty() && term.match_fields.empty()) return false;
  for (const auto& r : term.match_expressions) {
    auto it = node.meta.labels.find(r.key);
    if (!requirement_matches(r, it == node.meta.labels.end() ? nullptr : &it->second)) return false;
  }
  for (const auto& r : term.match_fields) {
    if (r.key != "metadata.name" || !requirement_matches(r, &node.meta.name)) return false;
  }
  return true;
}

std::optional<std::string> check(const TaskInfo& task, const NodeInfo& node) {
  const model::Pod& pod = *task.pod;
  const model::Node& obj = *node.object;
  if (task.legacy_mig) {
    return std::string(
        "pod requests MIG through legacy nvidia.com/mig-* annotations, which are not supported");
  }
  if (!node.ready) return std::string("node(s) were not ready");
  if (node.unschedulable) return std::string("node(s) were unschedulable");
  for (const auto& taint : obj.taints) {
    if (taint.effect != "NoSchedule" && taint.effect != "NoExecute") continue;
    const bool ok = std::any_of(pod.tolerations.begin(), pod.tolerations.end(),
                                [&](const model::Toleration& t) { return tolerates(t, taint); });
    if (!ok) return "node(s) had untolerated taint {" + taint.key + ": " + taint.value + "}";
  }
  for (const auto& [k, v] : pod.node_selector) {
    auto it = obj.meta.labels.find(k);
    if (it == obj.meta.labels.end() || it->second != v) {
      return std::string("node(s) didn't match Pod's node affinity/selector");
    }
  }
  if (pod.required_node_affinity) {
    const auto& terms = *pod.required_node_affinity;
    if (!std::any_of(terms.begin(), terms.end(), [&](const auto& t) { return term_matches(t, obj); })) {
      return std::string("node(s) didn't match Pod's node affinity/selector");
    }
  }
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
  void on_session_open(Session& ssn) override { ssn.static_predicate_fns.push_back(check); }
};

}  // namespace

void register_predicates_plugin(PluginRegistry& r) {
  r.add(kPredicatesName, [](const PluginConfig&) { return std::make_unique<PredicatesPlugin>(); });
}

}  // namespace kai::core::plugins
