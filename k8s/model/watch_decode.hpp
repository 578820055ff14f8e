#pragma once
// Decoding objects as a watch or a list delivers them, at the rate the watch path needs
// (docs/performance-targets.md "Targets": >= 100,000 pod events of about 4 KB per second on one
// core). simdjson parses the text and the one set of per-kind decoders (kind_decoders.hpp) reads
// its DOM directly: nothing is copied into a second DOM, and what no decoder reads (managedFields,
// env, volumes, container statuses, a node's image list) is never looked at. Text that simdjson
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

/// A snapshot file's objects (decode_snapshot: kai-sim's input) through the same fast path, when
/// the text is a `List` (or a JSON array) of objects that each name their kind and decode: then they
/// fill `out` (empty before) and the result is true. Anything else (nested lists, an object without
/// a kind, an item that cannot be decoded, text simdjson refuses) leaves `out` empty and gives false,
/// and decode_snapshot reads the text through nlohmann's DOM, whose messages it keeps.
/// `readable_after`: bytes the caller guarantees readable after the text's end; with at least
/// simdjson's padding (64) the text is parsed where it is instead of copied.
bool decode_flat_list_json(std::string_view text, ClusterObjects& out, size_t readable_after = 0);

/// The same through nlohmann's DOM alone: the reference the fast path is tested against.
Status decode_objects_json_reference(std::string_view text, std::string_view kind, ClusterObjects& out);

}  // namespace kai::model
