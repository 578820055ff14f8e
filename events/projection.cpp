#include "events/projection.hpp"

#include "k8s/model/watch_decode.hpp"

namespace kai::events {
namespace {

std::string key_of(const model::ObjectMeta& m) {
  return m.namespace_.empty() ? m.name : m.namespace_ + "/" + m.name;
}

template <class T>
void put_all(std::vector<T>& from, std::map<std::string, T>& to) {
  for (auto& x : from) {
    std::string k = key_of(x.meta);
    to.insert_or_assign(std::move(k), std::move(x));
  }
}

template <class T>
void erase_all(const std::vector<T>& from, std::map<std::string, T>& to) {
  for (const auto& x : from) to.erase(key_of(x.meta));
}

template <class T>
void to_vector(const std::map<std::string, T>& from, std::vector<T>& to) {
  to.reserve(from.size());
  for (const auto& [k, v] : from) to.push_back(v);
}

/// Calls f on the map of `kind`; false when the kind is not projected.
template <class F>
bool with_kind(ClusterState& s, const std::string& kind, F&& f) {
  if (kind == "Node") return f(s.nodes), true;
  if (kind == "Pod") return f(s.pods), true;
  if (kind == "Queue") return f(s.queues), true;
  if (kind == "PodGroup") return f(s.pod_groups), true;
  if (kind == "PriorityClass") return f(s.priority_classes), true;
  if (kind == "BindRequest") return f(s.bind_requests), true;
  return false;
}

}  // namespace

model::ClusterObjects ClusterState::to_objects() const {
  model::ClusterObjects o;
  to_vector(nodes, o.nodes);
  to_vector(pods, o.pods);
  to_vector(queues, o.queues);
  to_vector(pod_groups, o.pod_groups);
  to_vector(priority_classes, o.priority_classes);
  to_vector(bind_requests, o.bind_requests);
  return o;
}

Status apply(ClusterState& state, const Event& event) {
  state.seq = event.seq;
  if (const auto* d = std::get_if<DecisionEvent>(&event.payload)) {
    if (d->decision.kind != DecisionKind::kPipeline) state.open_decisions[event.seq] = d->decision.pod;
    return Status::ok();
  }
  if (const auto* o = std::get_if<BinderOutcome>(&event.payload)) {
    state.open_decisions.erase(o->decision_seq);
    return Status::ok();
  }
  const auto* w = std::get_if<WatchEvent>(&event.payload);
  if (w == nullptr) return Status::ok();
  if (!w->resource_version.empty()) state.resource_versions[w->kind] = w->resource_version;
  if (w->type == WatchType::kBookmark) return Status::ok();

  // Decode fully before touching the state, so a bad object changes nothing.
  model::ClusterObjects decoded;
  if (Status st = model::decode_objects_json(w->object_json, w->kind, decoded); !st) return st;
  bool known = with_kind(state, w->kind, [&](auto& map) {
    using T = typename std::decay_t<decltype(map)>::mapped_type;
    std::vector<T>* items = nullptr;
    if constexpr (std::is_same_v<T, model::Node>) items = &decoded.nodes;
    if constexpr (std::is_same_v<T, model::Pod>) items = &decoded.pods;
    if constexpr (std::is_same_v<T, model::Queue>) items = &decoded.queues;
    if constexpr (std::is_same_v<T, model::PodGroup>) items = &decoded.pod_groups;
    if constexpr (std::is_same_v<T, model::PriorityClass>) items = &decoded.priority_classes;
    if constexpr (std::is_same_v<T, model::BindRequest>) items = &decoded.bind_requests;
    switch (w->type) {
      case WatchType::kAdded:
      case WatchType::kModified:
        put_all(*items, map);
        break;
      case WatchType::kDeleted:
        erase_all(*items, map);
        break;
      case WatchType::kRelist:
        map.clear();
        put_all(*items, map);
        break;
      case WatchType::kBookmark:
        break;
    }
  });
  if (!known) return Status::error("kind " + w->kind + " is not projected");
  return Status::ok();
}

}  // namespace kai::events
