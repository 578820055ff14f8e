#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "k8s/model/codec.hpp"
#include "k8s/model/json_codec.hpp"
#include "k8s/model/kinds.hpp"
#include "k8s/model/watch_decode.hpp"

namespace kai::model {
namespace {

using nlohmann::json;

/// True for `kind: List` and typed lists (`PodList`, `NodeList`...) that carry `items`.
bool is_list(const json& j) {
  if (!j.is_object()) return false;
  auto kind = j.find("kind");
  auto items = j.find("items");
  if (kind == j.end() || !kind->is_string() || items == j.end()) return false;
  const std::string& k = kind->get_ref<const std::string&>();
  return k.size() >= 4 && k.compare(k.size() - 4, 4, "List") == 0;
}

/// Adds the objects of one top-level value (a List, an array or a single object) to `out`.
/// Items are numbered across the whole input so that a message points at one object.
Status add_value(const json& value, ClusterObjects& out, size_t& item, int depth) {
  auto add_item = [&](const json& j) -> Status {
    if (is_list(j) && depth < 2) return add_value(j, out, item, depth + 1);
    const size_t n = item++;
    if (!j.is_object()) {
      return Status::error("item " + std::to_string(n) + ": not an object but " + std::string(j.type_name()));
    }
    if (Status s = decode_object_into(j, out); !s)
      return Status::error("item " + std::to_string(n) + ": " + s.message());
    return Status::ok();
  };
  if (is_list(value)) {
    const json& items = value["items"];
    if (items.is_null()) return Status::ok();  // Go writes `"items": null` for an empty list.
    if (!items.is_array())
      return Status::error("List items is not an array but " + std::string(items.type_name()));
    for (const json& j : items) {
      if (Status s = add_item(j); !s) return s;
    }
    return Status::ok();
  }
  if (value.is_array()) {
    for (const json& j : value) {
      if (Status s = add_item(j); !s) return s;
    }
    return Status::ok();
  }
  return add_item(value);
}

}  // namespace

Result<ClusterObjects> decode_snapshot(std::string_view text, size_t readable_after) {
  const size_t first = text.find_first_not_of(" \t\r\n");
  // An empty file is almost always a failed export or a wrong path, not an empty cluster: refuse it
  // (an empty cluster is written as a List with no items).
  if (first == std::string_view::npos) return Status::error("empty");
  // Everything that does not start like JSON is read as YAML (a JSON document is valid YAML too,
  // but the JSON parser gives better messages and is much faster).
  const bool is_json = first != std::string_view::npos && (text[first] == '{' || text[first] == '[');
  ClusterObjects out;
  size_t item = 0;
  if (is_json) {
    // The common shape (a List of objects, as kubectl and kai-gen write it) through simdjson: no
    // DOM of the whole file (k8s/model/watch_decode.hpp); anything else, and every error, below.
    if (decode_flat_list_json(text, out, readable_after)) return out;
    json root;
    try {
      root = json::parse(text.begin(), text.end());
    } catch (const json::parse_error& e) {
      return Status::error(std::string("not valid JSON: ") + e.what() + " at byte " + std::to_string(e.byte));
    } catch (const std::exception& e) {
      return Status::error(std::string("not valid JSON: ") + e.what());
    }
    if (Status s = add_value(root, out, item, 0); !s) return s;
    return out;
  }
  Result<std::vector<json>> docs = yaml_documents_to_json(text);
  if (!docs) return docs.status();
  for (size_t d = 0; d < docs->size(); ++d) {
    const json& doc = (*docs)[d];
    if (!doc.is_object() && !doc.is_array()) {
      return Status::error("YAML document " + std::to_string(d) + ": not an object but " +
                           std::string(doc.type_name()));
    }
    if (Status s = add_value(doc, out, item, 0); !s) return s;
  }
  return out;
}

std::string encode_snapshot_json(const ClusterObjects& objects) {
  // Referenced kinds first (nodes, queues, classes, groups), then what refers to them.
  std::array<json, kinds::kCount> by_rank;
  for_each_kind([&](auto kind) {
    json& part = by_rank[decltype(kind)::kReferenceRank] = json::array();
    for (const auto& x : decltype(kind)::in(objects)) part.push_back(encode(x));
  });
  json items = json::array();
  for (json& part : by_rank) {
    for (json& x : part) items.push_back(std::move(x));
  }
  const json list = {{"apiVersion", "v1"}, {"kind", "List"}, {"items", std::move(items)}};
  // Strings from the API server may hold invalid UTF-8; replace rather than throw.
  return list.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace kai::model
