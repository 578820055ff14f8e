#pragma once
// One line of a watch stream (`{"type": ..., "object": {...}}`) split into what the reflector needs
// without building a document: the event type, the object's JSON as a slice of the line (handed on
// as received, not re-serialised), its resourceVersion, and for ERROR events the Status code and
// message. simdjson's On-Demand parser does the scan (docs/performance-targets.md "Data representation"); the object's own fields are
// checked later, by the typed decoder (k8s/model/watch_decode.hpp).

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "k8s/model/status.hpp"

namespace kai::k8s {

enum class WatchLineType : uint8_t { kAdded, kModified, kDeleted, kBookmark, kError };

/// What identifies an object and its version, read from its metadata.
struct ObjectIdentity {
  std::string name;
  std::string namespace_;
  std::string resource_version;
  bool has_kind = false;  ///< the object has a top-level `kind` (list items do not)
  /// "namespace/name", or "name" for a cluster-scoped object.
  std::string key() const { return namespace_.empty() ? name : namespace_ + "/" + name; }
};

struct WatchLine {
  WatchLineType type = WatchLineType::kAdded;
  std::string_view object;  ///< inside the scanned line: valid while the line is
  ObjectIdentity id;
  int64_t error_code = 0;  ///< ERROR events: the Status code (410: the resourceVersion is too old)
  std::string error_message;
};

/// Scans one watch line. Fails with a reason (not JSON, no type, no object, an unknown type) for a
/// line the reflector must skip; the reason starts with "unknown event type" for the last case.
model::Result<WatchLine> scan_watch_line(std::string_view line);

/// One object of a List page: its JSON as a slice of the page, and its identity.
struct ListedObject {
  std::string_view object;
  ObjectIdentity id;
};

/// One page of a LIST answer (`{"metadata": {"resourceVersion", "continue"}, "items": [...]}`).
struct ListPage {
  std::string resource_version;
  std::string continue_token;
  std::vector<ListedObject> items;  ///< slices of the scanned page: valid while the page is
};

/// Scans a LIST answer. Fails when it is not a List; an item that is not an object fails it too.
model::Result<ListPage> scan_list_page(std::string_view body);

}  // namespace kai::k8s
