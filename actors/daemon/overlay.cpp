#include "actors/daemon/overlay.hpp"

namespace kai::daemon {

void InFlight::add(const events::Decision& d, Clock::time_point now) {
  if (d.kind == events::DecisionKind::kPipeline) return;  // nothing is executed for a pipelined pod
  entries_[d.pod] = Entry{d, now};
}

std::map<std::string, std::set<std::string>> InFlight::groups_by_node() const {
  std::map<std::string, std::set<std::string>> out;
  for (const auto& [pod, e] : entries_) {
    if (e.decision.kind != events::DecisionKind::kBind) continue;
    for (const auto& g : e.decision.gpu_groups) out[e.decision.node].insert(g);
  }
  return out;
}

void InFlight::fail(const std::string& pod) { entries_.erase(pod); }

void InFlight::settle(const events::ClusterState& state, Clock::time_point now, std::chrono::seconds max_age) {
  for (auto it = entries_.begin(); it != entries_.end();) {
    const events::Decision& d = it->second.decision;
    auto pod = state.pods.find(d.pod);
    bool done = pod == state.pods.end() || pod->second.meta.uid != d.pod_uid;  // gone or replaced
    if (!done && d.kind == events::DecisionKind::kBind) done = !pod->second.node_name.empty();
    if (!done && d.kind == events::DecisionKind::kEvict) done = pod->second.meta.deletion_timestamp.has_value();
    if (done || now - it->second.since > max_age) {
      it = entries_.erase(it);
    } else {
      ++it;
    }
  }
}

void InFlight::apply(model::ClusterObjects& objects, int64_t now_unix) const {
  if (entries_.empty()) return;
  for (auto& pod : objects.pods) {
    auto it = entries_.find(pod.meta.namespace_ + "/" + pod.meta.name);
    if (it == entries_.end() || it->second.decision.pod_uid != pod.meta.uid) continue;
    const events::Decision& d = it->second.decision;
    if (d.kind == events::DecisionKind::kBind) {
      pod.node_name = d.node;
      if (d.gpu_groups.size() == 1) {
        pod.meta.labels["runai-gpu-group"] = d.gpu_groups[0];
      } else {
        for (const auto& g : d.gpu_groups) pod.meta.labels["runai-gpu-group/" + g] = g;
      }
    } else if (d.kind == events::DecisionKind::kEvict) {
      if (!pod.meta.deletion_timestamp) pod.meta.deletion_timestamp = now_unix;
    }
  }
}

}  // namespace kai::daemon
