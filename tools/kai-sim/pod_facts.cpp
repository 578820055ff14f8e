// Codec unit: reads pod fields with nlohmann (k8s/model/json_codec.hpp's YAML reader).
#include "tools/kai-sim/pod_facts.hpp"

#include <nlohmann/json.hpp>
#include <vector>

#include "k8s/model/json_codec.hpp"
#include "k8s/model/time.hpp"

namespace kai::sim {
namespace {

using nlohmann::json;

std::string string_at(const json& j, const char* a, const char* b) {
  auto outer = j.find(a);
  if (outer == j.end() || !outer->is_object()) return {};
  auto inner = outer->find(b);
  return inner != outer->end() && inner->is_string() ? inner->get<std::string>() : std::string();
}

PodFacts facts_of(const json& pod) {
  PodFacts p;
  const std::string ns = string_at(pod, "metadata", "namespace");
  p.key = (ns.empty() ? std::string("default") : ns) + "/" + string_at(pod, "metadata", "name");
  p.uid = string_at(pod, "metadata", "uid");
  p.node_name = string_at(pod, "spec", "nodeName");
  p.phase = string_at(pod, "status", "phase");
  if (auto md = pod.find("metadata"); md != pod.end() && md->is_object()) {
    auto owners = md->find("ownerReferences");
    if (owners != md->end() && owners->is_array() && !owners->empty() && owners->front().is_object()) {
      auto uid = owners->front().find("uid");
      if (uid != owners->front().end() && uid->is_string()) p.owner_uid = uid->get<std::string>();
    }
  }
  if (auto start = string_at(pod, "status", "startTime"); !start.empty()) {
    if (auto t = model::parse_rfc3339(start)) p.start_time = *t;
  }
  if (auto spec = pod.find("spec"); spec != pod.end() && spec->is_object()) {
    auto deadline = spec->find("activeDeadlineSeconds");
    if (deadline != spec->end() && deadline->is_number_integer() && deadline->get<int64_t>() > 0) {
      p.active_deadline_seconds = deadline->get<int64_t>();
    }
  }
  return p;
}

void visit(const json& value, bool all_pods, const std::function<void(const PodFacts&)>& f, int depth) {
  if (depth > 2) return;
  if (value.is_array()) {
    for (const json& item : value) visit(item, all_pods, f, depth + 1);
    return;
  }
  if (!value.is_object()) return;
  if (auto items = value.find("items"); items != value.end() && items->is_array()) {
    for (const json& item : *items) visit(item, all_pods, f, depth + 1);
    return;
  }
  auto kind = value.find("kind");
  const bool is_pod = kind != value.end() && kind->is_string() && kind->get<std::string>() == "Pod";
  if (is_pod || all_pods) f(facts_of(value));
}

}  // namespace

void for_each_pod(std::string_view text, bool all_pods, const std::function<void(const PodFacts&)>& f) {
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return;
  if (text[first] == '{' || text[first] == '[') {
    const json root = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
    if (!root.is_discarded()) visit(root, all_pods, f, 0);
    return;
  }
  auto docs = model::yaml_documents_to_json(text);
  if (!docs) return;
  for (const json& doc : *docs) visit(doc, all_pods, f, 0);
}

}  // namespace kai::sim
