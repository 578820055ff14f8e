#pragma once
// Reading whole snapshots: a Kubernetes `List` as `kubectl get ... -o json` prints it, a bare JSON
// array or object, or multi-document YAML (each document an object or a List). No JSON library here:
// json_codec.hpp is the only header that exposes nlohmann.

#include <string>
#include <string_view>

#include "k8s/model/objects.hpp"
#include "k8s/model/status.hpp"

namespace kai::model {

/// Decodes a snapshot from JSON or YAML text (sniffed from the first non-blank character).
/// Fails when the text is empty or whitespace only (message "empty"), is not JSON / YAML or not a
/// List of objects; an object with bad fields is kept with its FieldErrors; an item that is not an object, or lacks kind / metadata.name, fails.
/// Bytes readable after a snapshot's text (a string's spare capacity) that let a JSON List be parsed
/// where it is rather than copied: simdjson's padding (k8s/model/watch_decode.hpp).
inline constexpr size_t kSnapshotInPlacePadding = 64;

/// `readable_after`: bytes readable after the text's end; kSnapshotInPlacePadding or more avoid a copy.
Result<ClusterObjects> decode_snapshot(std::string_view text, size_t readable_after = 0);

/// Encodes a snapshot as a `v1 List` in JSON (the format decode_snapshot reads back).
std::string encode_snapshot_json(const ClusterObjects& objects);

}  // namespace kai::model
