#include "actors/scheduler/core/node_selection.hpp"

#include <algorithm>
#include <cstdlib>
#include <string>

namespace kai::core {
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

}  // namespace

bool node_selected_by(const model::Pod& pod, const model::Node& node) {
  for (const auto& [k, v] : pod.node_selector) {
    auto it = node.meta.labels.find(k);
    if (it == node.meta.labels.end() || it->second != v) return false;
  }
  if (pod.required_node_affinity) {
    const auto& terms = *pod.required_node_affinity;
    return std::any_of(terms.begin(), terms.end(), [&](const auto& t) { return term_matches(t, node); });
  }
  return true;
}

const model::Taint* untolerated_taint(const model::Pod& pod, const model::Node& node) {
  for (const auto& taint : node.taints) {
    if (taint.effect != "NoSchedule" && taint.effect != "NoExecute") continue;
    const bool ok = std::any_of(pod.tolerations.begin(), pod.tolerations.end(),
                                [&](const model::Toleration& t) { return tolerates(t, taint); });
    if (!ok) return &taint;
  }
  return nullptr;
}

bool taints_tolerated(const model::Pod& pod, const model::Node& node) {
  return untolerated_taint(pod, node) == nullptr;
}

}  // namespace kai::core
