#include "actors/daemon/entity_store.hpp"

#include <algorithm>

#include "events/watch_apply.hpp"

namespace kai::daemon {
namespace {

const std::vector<std::shared_ptr<const model::Pod>>& no_pods() {
  static const std::vector<std::shared_ptr<const model::Pod>> empty;
  return empty;
}

}  // namespace

EntityStore::EntityStore(std::set<std::string, std::less<>> kinds) : kinds_(std::move(kinds)) {}

model::Status EntityStore::apply(const events::WatchEvent& w) {
  if (!owns(w.kind)) return model::Status::error("kind " + w.kind + " is not owned by this store");
  return events::apply_watch(w, resource_versions_, [&](auto kind) -> auto& {
    auto& k = decltype(kind)::in(objects_);
    k.dirty = true;
    return k.objects;
  });
}

void EntityStore::restore(events::ClusterState& state) {
  model::for_each_kind([&](auto kind) {
    using K = decltype(kind);
    if (!owns(K::kName)) return;
    auto& from = K::in(state);
    auto& to = K::in(objects_);
    for (auto& [key, object] : from) {
      to.objects.emplace_hint(to.objects.end(), key, std::make_shared<const typename K::Object>(std::move(object)));
    }
    from.clear();
    to.dirty = true;
    for (const auto& [kind, rv] : state.resource_versions) {
      if (model::table_kind(kind) == K::kName) resource_versions_[kind] = rv;
    }
  });
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
  model::for_each_kind([&](auto kind) {
    using K = decltype(kind);
    if (owns(K::kName)) K::in(*v) = publish(K::in(objects_));
  });
  return v;
}

void EntityStore::encode(events::StateSections& out) const {
  model::for_each_kind([&](auto kind) {
    using K = decltype(kind);
    if (owns(K::kName)) K::in(out) = events::encode_section(K::in(objects_).objects);
  });
}

std::map<std::string, std::string> EntityStore::known(const std::string& kind) const {
  std::map<std::string, std::string> out;
  if (!owns(kind)) return out;
  if (model::is_owner_kind(kind)) {
    // One owner kind's objects, keyed as its reflector keys them ("namespace/name").
    const std::string scope = kind + "/";
    const auto& owners = objects_.owners.objects;
    for (auto it = owners.lower_bound(scope); it != owners.end() && it->first.compare(0, scope.size(), scope) == 0;
         ++it) {
      out.emplace_hint(out.end(), it->first.substr(scope.size()), it->second->meta.resource_version);
    }
    return out;
  }
  model::with_kind(kind, [&](auto k) {
    for (const auto& [key, object] : decltype(k)::in(objects_).objects)
      out.emplace_hint(out.end(), key, object->meta.resource_version);
  });
  return out;
}

std::string EntityStore::position(const std::string& kind) const {
  const auto it = resource_versions_.find(kind);
  return owns(kind) && it != resource_versions_.end() ? it->second : std::string();
}

size_t EntityStore::size() const {
  size_t n = 0;
  model::for_each_kind([&](auto kind) { n += decltype(kind)::in(objects_).objects.size(); });
  return n;
}

model::ObjectRefs ClusterCut::refs() const {
  model::ObjectRefs r;
  for (const auto& v : views) {
    for (const auto& [kind, rv] : v->resource_versions) {
      if (model::is_owner_kind(kind)) r.served_owner_kinds.insert(kind);
    }
    model::for_each_kind([&](auto kind) {
      using K = decltype(kind);
      const auto& list = K::in(*v);
      if (!list) return;
      auto& to = K::in(r);
      to.reserve(to.size() + list->size());
      for (const auto& p : *list) to.push_back(p.get());
    });
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
  auto it = std::lower_bound(list.begin(), list.end(), key,
                             [](const std::shared_ptr<const model::Pod>& p, const std::string& k) {
                               return model::object_key(p->meta) < k;
                             });
  if (it == list.end() || model::object_key((*it)->meta) != key) return nullptr;
  return it->get();
}

size_t ClusterCut::node_count() const {
  size_t n = 0;
  for (const auto& v : views) n += v->nodes ? v->nodes->size() : 0;
  return n;
}

}  // namespace kai::daemon
