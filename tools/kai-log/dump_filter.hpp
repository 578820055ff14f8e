#pragma once
// The filters of `kai-log dump --object / --cycle`: exact matches on an event's typed fields. They
// used to be substring searches in the rendered JSON line, where a bare name matched any `"name"` in
// the object (a container's, another namespace's pod) and a cycle matched by the digits around it.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "events/event.hpp"

namespace kai::kailog {

/// The keys of the objects an event names: "namespace/name" for namespaced objects, the bare name for
/// nodes, queues and other cluster-scoped objects. Watch events: the object's metadata (each item's
/// for a List); decisions: pod, `by` group, node and queue; unschedulable: pod group and queue;
/// binder outcomes: pod; other kinds: none.
std::vector<std::string> object_keys(const events::Event& e);

/// True when one of object_keys(e) is exactly `key`.
bool names_object(const events::Event& e, std::string_view key);

/// The cycle of a decision, unschedulable, cycle start or cycle end event; nullopt for other kinds.
std::optional<uint64_t> cycle_of(const events::Event& e);

/// The keys of the objects in a watch event's JSON: only `metadata.namespace` and `metadata.name` of
/// the object, of each element of a JSON array, or of each element of a List's `items` are read, by a
/// streaming parse that builds nothing else. Invalid JSON gives the keys read before the error.
std::vector<std::string> metadata_keys(std::string_view object_json);

}  // namespace kai::kailog
