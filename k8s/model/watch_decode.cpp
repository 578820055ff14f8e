// Codec unit: simdjson and nlohmann meet here, nowhere else.
#include "k8s/model/watch_decode.hpp"

#include <simdjson.h>

#include <cstdint>
#include <exception>
#include <string>

#include "k8s/model/json_codec.hpp"

namespace kai::model {
namespace {

using nlohmann::json;
using simdjson::dom::element;
using simdjson::dom::element_type;

// ------------------------------------------------------------------------------- what is kept

/// Which members of an object are copied. A field with `only == nullptr` is copied whole; with a
/// shape, that shape applies to it (to each element when it is an array). `keep_others` copies the
/// members the list does not name, whole.
struct Shape;
struct Field {
  std::string_view key;
  const Shape* only = nullptr;
};
struct Shape {
  const Field* fields;
  size_t count;
  bool keep_others;
  const Field* find(std::string_view key) const {
    for (size_t i = 0; i < count; ++i)
      if (fields[i].key == key) return &fields[i];
    return nullptr;
  }
};

// These lists follow the decoders in json_codec.cpp: a field a decoder reads must be listed here
// (tests/model/watch_decode_test.cpp compares both paths on every kind and on mutated objects).
constexpr Field kMetaFields[] = {{"name"},
                                 {"namespace"},
                                 {"uid"},
                                 {"resourceVersion"},
                                 {"generation"},
                                 {"creationTimestamp"},
                                 {"deletionTimestamp"},
                                 {"labels"},
                                 {"annotations"},
                                 {"ownerReferences"}};
constexpr Shape kMeta{kMetaFields, std::size(kMetaFields), false};

constexpr Field kContainerFields[] = {{"name"}, {"resources"}, {"ports"}, {"restartPolicy"}};
constexpr Shape kContainer{kContainerFields, std::size(kContainerFields), false};

constexpr Field kPodSpecFields[] = {{"schedulerName"},
                                    {"nodeName"},
                                    {"priorityClassName"},
                                    {"priority"},
                                    {"nodeSelector"},
                                    {"affinity"},
                                    {"topologySpreadConstraints"},
                                    {"tolerations"},
                                    {"containers", &kContainer},
                                    {"initContainers", &kContainer},
                                    {"overhead"},
                                    {"schedulingGates"},
                                    {"resourceClaims"}};
constexpr Shape kPodSpec{kPodSpecFields, std::size(kPodSpecFields), false};

constexpr Field kPodStatusFields[] = {{"phase"}, {"nominatedNodeName"}, {"conditions"}};
constexpr Shape kPodStatus{kPodStatusFields, std::size(kPodStatusFields), false};

constexpr Field kPodFields[] = {
    {"apiVersion"}, {"kind"}, {"metadata", &kMeta}, {"spec", &kPodSpec}, {"status", &kPodStatus}};
constexpr Shape kPod{kPodFields, std::size(kPodFields), false};

constexpr Field kNodeStatusFields[] = {{"capacity"}, {"allocatable"}, {"conditions"}};
constexpr Shape kNodeStatus{kNodeStatusFields, std::size(kNodeStatusFields), false};

constexpr Field kNodeFields[] = {
    {"apiVersion"}, {"kind"}, {"metadata", &kMeta}, {"spec"}, {"status", &kNodeStatus}};
constexpr Shape kNode{kNodeFields, std::size(kNodeFields), false};

/// Every other kind: all of it but the managed fields.
constexpr Field kOtherFields[] = {{"metadata", &kMeta}};
constexpr Shape kOther{kOtherFields, std::size(kOtherFields), true};

const Shape& shape_of(std::string_view kind) {
  if (kind == "Pod") return kPod;
  if (kind == "Node") return kNode;
  return kOther;
}

// ------------------------------------------------------------------------------- conversion

/// Copies `e` into a nlohmann value exactly as nlohmann's own parser would have built it
/// (non-negative integers unsigned, as its lexer makes them; a repeated key keeps its last value).
json convert(element e, const Shape* shape) {
  switch (e.type()) {
    case element_type::OBJECT: {
      json out = json::object();
      for (auto [key, value] : simdjson::dom::object(e)) {
        const Shape* child = nullptr;
        if (shape != nullptr) {
          const Field* f = shape->find(key);
          if (f == nullptr && !shape->keep_others) continue;
          if (f != nullptr) child = f->only;
        }
        out[std::string(key)] = convert(value, child);
      }
      return out;
    }
    case element_type::ARRAY: {
      json out = json::array();
      for (element item : simdjson::dom::array(e)) out.push_back(convert(item, shape));
      return out;
    }
    case element_type::STRING:
      return json(std::string(std::string_view(e)));
    case element_type::INT64: {
      const int64_t v = int64_t(e);
      return v < 0 ? json(v) : json(static_cast<uint64_t>(v));
    }
    case element_type::UINT64:
      return json(uint64_t(e));
    case element_type::DOUBLE:
      return json(double(e));
    case element_type::BOOL:
      return json(bool(e));
    case element_type::NULL_VALUE:
      return json(nullptr);
  }
  return json(nullptr);
}

Status decode_item(element e, std::string_view kind, ClusterObjects& out) {
  const Shape* shape = &shape_of(kind);
  if (e.is_object()) {
    std::string_view own;
    if (!e["kind"].get(own)) shape = &shape_of(own);
  }
  json j = convert(e, shape);
  if (j.is_object() && !j.contains("kind")) j["kind"] = kind;
  return decode_object_into(j, out);
}

Status decode_tree(json& j, std::string_view kind, ClusterObjects& out) {
  auto add = [&](json& item) {
    if (item.is_object() && !item.contains("kind")) item["kind"] = kind;
    return decode_object_into(item, out);
  };
  if (j.is_object() && j.contains("items")) {
    json& items = j["items"];
    if (items.is_null()) return Status::ok();  // Go writes `"items": null` for an empty list
    if (!items.is_array()) return Status::error(std::string(kind) + ": List items is not an array");
    for (json& item : items) {
      if (Status st = add(item); !st) return st;
    }
    return Status::ok();
  }
  if (j.is_array()) {
    for (json& item : j) {
      if (Status st = add(item); !st) return st;
    }
    return Status::ok();
  }
  return add(j);
}

}  // namespace

Status decode_objects_json_reference(std::string_view text, std::string_view kind, ClusterObjects& out) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Status::error(std::string(kind) + ": object is not valid JSON");
  try {
    return decode_tree(j, kind, out);
  } catch (const std::exception& e) {
    return Status::error(std::string(kind) + ": " + e.what());
  }
}

bool decode_flat_list_json(std::string_view text, ClusterObjects& out) {
  // Its own parser, freed on return: a whole snapshot's DOM must not stay allocated beside the
  // session built from it (the watch path's thread_local parser is for many small objects).
  simdjson::dom::parser parser;
  element root;
  if (parser.parse(text.data(), text.size()).get(root)) return false;
  auto is_list_kind = [](std::string_view k) { return k.size() >= 4 && k.substr(k.size() - 4) == "List"; };
  try {
    element items = root;
    if (root.is_object()) {
      std::string_view kind;
      if (root["kind"].get(kind) || !is_list_kind(kind) || root["items"].get(items)) return false;
      if (items.is_null()) return true;  // Go writes `"items": null` for an empty list
    }
    if (!items.is_array()) return false;
    for (element item : simdjson::dom::array(items)) {
      std::string_view kind;
      if (!item.is_object() || item["kind"].get(kind) || is_list_kind(kind)) return false;
    }
    for (element item : simdjson::dom::array(items)) {
      std::string_view kind;
      if (item["kind"].get(kind) || !decode_item(item, kind, out)) {  // the kind was checked above
        out = ClusterObjects{};
        return false;
      }
    }
    return true;
  } catch (const std::exception&) {
    out = ClusterObjects{};
    return false;
  }
}

Status decode_objects_json(std::string_view text, std::string_view kind, ClusterObjects& out) {
  thread_local simdjson::dom::parser parser;
  element root;
  if (parser.parse(text.data(), text.size()).get(root)) {
    return decode_objects_json_reference(text, kind, out);
  }
  try {
    if (root.is_object()) {
      element items;
      if (!root["items"].get(items)) {
        if (items.is_null()) return Status::ok();
        if (!items.is_array()) return Status::error(std::string(kind) + ": List items is not an array");
        for (element item : simdjson::dom::array(items)) {
          if (Status st = decode_item(item, kind, out); !st) return st;
        }
        return Status::ok();
      }
    }
    if (root.is_array()) {
      for (element item : simdjson::dom::array(root)) {
        if (Status st = decode_item(item, kind, out); !st) return st;
      }
      return Status::ok();
    }
    return decode_item(root, kind, out);
  } catch (const std::exception& e) {
    return Status::error(std::string(kind) + ": " + e.what());
  }
}

}  // namespace kai::model
