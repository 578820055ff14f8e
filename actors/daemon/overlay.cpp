#include "actors/daemon/overlay.hpp"

#include <algorithm>

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

void InFlight::fail(const std::string& pod) {
  entries_.erase(pod);
}

void InFlight::settle(const FindPod& find_pod, Clock::time_point now, std::chrono::seconds max_age) {
  for (auto it = entries_.begin(); it != entries_.end();) {
    const events::Decision& d = it->second.decision;
    const model::Pod* pod = find_pod(d.pod);
    bool done = pod == nullptr || pod->meta.uid != d.pod_uid;  // gone or replaced
    if (!done && d.kind == events::DecisionKind::kBind) done = !pod->node_name.empty();
    if (!done && d.kind == events::DecisionKind::kEvict) done = pod->meta.deletion_timestamp.has_value();
    if (done || now - it->second.since > max_age) {
      it = entries_.erase(it);
    } else {
      ++it;
    }
  }
}

void InFlight::apply(model::ObjectRefs& refs, std::deque<model::Pod>& patched, int64_t now_unix) const {
  // The stores' key ("name" without a namespace), which is the order of refs.pods.
  auto key_of = [](const model::Pod* p) {
    return p->meta.namespace_.empty() ? p->meta.name : p->meta.namespace_ + "/" + p->meta.name;
  };
  for (const auto& [key, entry] : entries_) {
    auto at = std::lower_bound(refs.pods.begin(), refs.pods.end(), key,
                               [&](const model::Pod* p, const std::string& k) { return key_of(p) < k; });
    if (at == refs.pods.end() || key_of(*at) != key) continue;
    const events::Decision& d = entry.decision;
    if (d.pod_uid != (*at)->meta.uid) continue;
    model::Pod& pod = patched.emplace_back(**at);
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
    *at = &pod;
  }
}

}  // namespace kai::daemon
