#pragma once
// The one rule by which a logged watch event changes the objects of its kind, shared by the pure
// projection (events/projection.cpp) and the daemon's entity stores (actors/daemon/entity_store.cpp),
// so that the state a cycle reads in the daemon and in replay is the same fold: ADDED / MODIFIED
// upsert by object_key, DELETED removes, RELIST replaces every object of the kind, BOOKMARK only
// records the resourceVersion.

#include <map>
#include <memory>
#include <set>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "events/event.hpp"
#include "k8s/model/kinds.hpp"
#include "k8s/model/watch_decode.hpp"

namespace kai::events {

/// Applies decoded objects `items` of one watch event of `type` to `map`, whose values are the
/// objects themselves or shared pointers to them. `scope`: the key prefix a RELIST replaces (an owner
/// kind's "Kind.group/"; empty: the whole map).
template <class T, class V>
void apply_watch_objects(WatchType type, std::vector<T>& items, std::map<std::string, V>& map,
                         const std::string& scope = {}) {
  auto put_all = [&] {
    for (T& x : items) {
      std::string key = model::key_of(x);
      if constexpr (std::is_same_v<V, T>) {
        map.insert_or_assign(std::move(key), std::move(x));
      } else {
        map.insert_or_assign(std::move(key), std::make_shared<const T>(std::move(x)));
      }
    }
  };
  switch (type) {
    case WatchType::kAdded:
    case WatchType::kModified:
      put_all();
      break;
    case WatchType::kDeleted:
      for (const T& x : items) map.erase(model::key_of(x));
      break;
    case WatchType::kRelist:
      if (scope.empty()) {
        map.clear();
      } else {
        auto end = map.lower_bound(scope);
        while (end != map.end() && end->first.compare(0, scope.size(), scope) == 0) ++end;
        map.erase(map.lower_bound(scope), end);
      }
      put_all();
      break;
    case WatchType::kBookmark:
      break;
  }
}

/// Applies `w` through `map_of(Kind{})`, which returns the map of that kind's objects. The kind's
/// resourceVersion goes to `resource_versions` first; an owner kind's entry there is also what says
/// the kind is served (served_owner_kinds). The objects are decoded fully before anything
/// changes, so a bad object changes nothing and is returned as an error naming it.
template <class MapOf>
model::Status apply_watch(const WatchEvent& w, std::map<std::string, std::string>& resource_versions,
                          MapOf&& map_of) {
  if (!w.resource_version.empty() || w.type == WatchType::kRelist) resource_versions[w.kind] = w.resource_version;
  if (w.type == WatchType::kBookmark) return model::Status::ok();
  model::ClusterObjects decoded;
  if (model::Status st = model::decode_objects_json(w.object_json, w.kind, decoded); !st) return st;
  const std::string scope = model::is_owner_kind(w.kind) ? w.kind + "/" : std::string();
  const bool known = model::with_kind(w.kind, [&](auto kind) {
    apply_watch_objects(w.type, decltype(kind)::in(decoded), map_of(kind), scope);
  });
  if (!known) return model::Status::error("kind " + w.kind + " is not projected");
  return model::Status::ok();
}

}  // namespace kai::events

namespace kai::events {

/// The owner kinds among the kinds of `resource_versions`: those the log says were listed.
inline std::set<std::string> served_owner_kinds(const std::map<std::string, std::string>& resource_versions) {
  std::set<std::string> out;
  for (const auto& [kind, rv] : resource_versions) {
    if (model::is_owner_kind(kind)) out.insert(out.end(), kind);
  }
  return out;
}

}  // namespace kai::events
