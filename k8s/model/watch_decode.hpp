#pragma once
// Decoding objects as a watch or a list delivers them, at the rate the watch path needs
// (docs/performance-targets.md "Targets": >= 100,000 pod events of about 4 KB per second on one core). simdjson parses the
// text; only the fields the typed decoders read are copied into a small nlohmann value; the one set
// of per-kind decoders (json_codec) fills the typed structs. What no decoder reads (managedFields,
// env, volumes, container statuses, a node's image list) is never materialised. Text that simdjson
// refuses (invalid JSON, integers beyond 64 bits, nesting deeper than 1,024) goes through nlohmann's
// DOM instead, so the result and the error messages never depend on which path ran.

#include <string_view>

#include "k8s/model/objects.hpp"
#include "k8s/model/status.hpp"

namespace kai::model {

/// Decodes `text` (one object, a `List` with `items`, or a JSON array of objects) and adds every
/// object to `out`; an object without `kind` is taken as a `kind`. Fails, naming `kind`, when the text
/// is not JSON or an item cannot be decoded at all (bad fields are kept as the object's FieldErrors).
/// Thread-safe (one parser per thread).
Status decode_objects_json(std::string_view text, std::string_view kind, ClusterObjects& out);

/// The same through nlohmann's DOM alone: the reference the fast path is tested against.
Status decode_objects_json_reference(std::string_view text, std::string_view kind, ClusterObjects& out);

}  // namespace kai::model
