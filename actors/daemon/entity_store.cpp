#include "actors/daemon/entity_store.hpp"

#include <algorithm>

#include "k8s/model/watch_decode.hpp"

namespace kai::daemon {
namespace {

std::string key_of(const model::ObjectMeta& m) {
  return m.namespace_.empty() ? m.name : m.namespace_ + "/" + m.name;
}

template <class T>
void put_all(std::vector<T>& from, events::SharedObjects<T>& to) {
  for (auto& x : from) {
    std::string k = key_of(x.meta);
    to.insert_or_assign(std::move(k), std::make_shared<const T>(std::move(x)));
  }
}

template <class T>
void take(std::map<std::string, T>& from, events::SharedObjects<T>& to) {
  for (auto& [k, v] : from) to.emplace_hint(to.end(), k, std::make_shared<const T>(std::move(v)));
  from.clear();
}

const std::vector<std::shared_ptr<const model::Pod>>& no_pods() {
  static const std::vector<std::shared_ptr<const model::Pod>> empty;
  return empty;
}

}  // namespace

EntityStore::EntityStore(std::set<std::string> kinds) : kinds_(std::move(kinds)) {}

model::Status EntityStore::apply(const events::WatchEvent& w) {
  if (!owns(w.kind)) return model::Status::error("kind " + w.kind + " is not owned by this store");
  if (!w.resource_version.empty()) resource_versions_[w.kind] = w.resource_version;
  if (w.type == events::WatchType::kBookmark) return model::Status::ok();
  // Decode fully before touching anything, so a bad object changes nothing.
  model::ClusterObjects decoded;
  if (model::Status st = model::decode_objects_json(w.object_json, w.kind, decoded); !st) return st;
  auto change = [&](auto& kind, auto& items) {
    kind.dirty = true;
    switch (w.type) {
      case events::WatchType::kAdded:
      case events::WatchType::kModified:
        put_all(items, kind.objects);
        break;
      case events::WatchType::kDeleted:
        for (const auto& x : items) kind.objects.erase(key_of(x.meta));
        break;
      case events::WatchType::kRelist:
        kind.objects.clear();
        put_all(items, kind.objects);
        break;
      case events::WatchType::kBookmark:
        break;
    }
  };
  if (w.kind == "Node") change(nodes_, decoded.nodes);
  if (w.kind == "Pod") change(pods_, decoded.pods);
  if (w.kind == "Queue") change(queues_, decoded.queues);
  if (w.kind == "PodGroup") change(pod_groups_, decoded.pod_groups);
  if (w.kind == "PriorityClass") change(priority_classes_, decoded.priority_classes);
  if (w.kind == "BindRequest") change(bind_requests_, decoded.bind_requests);
  return model::Status::ok();
}

void EntityStore::restore(events::ClusterState& state) {
  auto restore_kind = [&](const char* kind, auto& from, auto& to) {
    if (!owns(kind)) return;
    take(from, to.objects);
    to.dirty = true;
    if (auto rv = state.resource_versions.find(kind); rv != state.resource_versions.end()) {
      resource_versions_[kind] = rv->second;
    }
  };
  restore_kind("Node", state.nodes, nodes_);
  restore_kind("Pod", state.pods, pods_);
  restore_kind("Queue", state.queues, queues_);
  restore_kind("PodGroup", state.pod_groups, pod_groups_);
  restore_kind("PriorityClass", state.priority_classes, priority_classes_);
  restore_kind("BindRequest", state.bind_requests, bind_requests_);
}

template <class T>
SharedList<T> EntityStore::publish(Kind<T>& k) {
  if (k.dirty || !k.published) {
    auto list = std::make_shared<std::vector<std::shared_ptr<const T>>>();
    list->reserve(k.objects.size());
    for (const auto& [key, object] : k.objects) list->push_back(object);
    k.published = std::move(list);
    k.dirty = false;
  }
  return k.published;
}

std::shared_ptr<const StoreView> EntityStore::view(uint64_t seq) {
  auto v = std::make_shared<StoreView>();
  v->seq = seq;
  v->resource_versions = resource_versions_;
  if (owns("Node")) v->nodes = publish(nodes_);
  if (owns("Pod")) v->pods = publish(pods_);
  if (owns("Queue")) v->queues = publish(queues_);
  if (owns("PodGroup")) v->pod_groups = publish(pod_groups_);
  if (owns("PriorityClass")) v->priority_classes = publish(priority_classes_);
  if (owns("BindRequest")) v->bind_requests = publish(bind_requests_);
  return v;
}

void EntityStore::encode(events::StateSections& out) const {
  if (owns("Node")) out.nodes = events::encode_section(nodes_.objects);
  if (owns("Pod")) out.pods = events::encode_section(pods_.objects);
  if (owns("Queue")) out.queues = events::encode_section(queues_.objects);
  if (owns("PodGroup")) out.pod_groups = events::encode_section(pod_groups_.objects);
  if (owns("PriorityClass")) out.priority_classes = events::encode_section(priority_classes_.objects);
  if (owns("BindRequest")) out.bind_requests = events::encode_section(bind_requests_.objects);
}

std::map<std::string, std::string> EntityStore::known(const std::string& kind) const {
  std::map<std::string, std::string> out;
  auto collect = [&](const auto& objects) {
    for (const auto& [key, object] : objects) out.emplace_hint(out.end(), key, object->meta.resource_version);
  };
  if (!owns(kind)) return out;
  if (kind == "Node") collect(nodes_.objects);
  if (kind == "Pod") collect(pods_.objects);
  if (kind == "Queue") collect(queues_.objects);
  if (kind == "PodGroup") collect(pod_groups_.objects);
  if (kind == "PriorityClass") collect(priority_classes_.objects);
  if (kind == "BindRequest") collect(bind_requests_.objects);
  return out;
}

size_t EntityStore::size() const {
  return nodes_.objects.size() + pods_.objects.size() + queues_.objects.size() + pod_groups_.objects.size() +
         priority_classes_.objects.size() + bind_requests_.objects.size();
}

model::ObjectRefs ClusterCut::refs() const {
  model::ObjectRefs r;
  auto add = [](const auto& list, auto& to) {
    if (!list) return;
    to.reserve(to.size() + list->size());
    for (const auto& p : *list) to.push_back(p.get());
  };
  for (const auto& v : views) {
    add(v->nodes, r.nodes);
    add(v->pods, r.pods);
    add(v->queues, r.queues);
    add(v->pod_groups, r.pod_groups);
    add(v->priority_classes, r.priority_classes);
    add(v->bind_requests, r.bind_requests);
  }
  return r;
}

const std::vector<std::shared_ptr<const model::Pod>>& ClusterCut::pods() const {
  for (const auto& v : views) {
    if (v->pods) return *v->pods;
  }
  return no_pods();
}

const model::Pod* ClusterCut::find_pod(const std::string& key) const {
  const auto& list = pods();
  // The list is in key order: the same order as the store's map.
  auto it = std::lower_bound(
      list.begin(), list.end(), key,
      [](const std::shared_ptr<const model::Pod>& p, const std::string& k) { return key_of(p->meta) < k; });
  if (it == list.end() || key_of((*it)->meta) != key) return nullptr;
  return it->get();
}

size_t ClusterCut::node_count() const {
  size_t n = 0;
  for (const auto& v : views) n += v->nodes ? v->nodes->size() : 0;
  return n;
}

}  // namespace kai::daemon
