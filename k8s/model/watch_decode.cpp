// Codec unit: simdjson and nlohmann meet here, nowhere else.
#include "k8s/model/watch_decode.hpp"

#include <simdjson.h>

#include <algorithm>
#include <cstdint>
#include <exception>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "k8s/model/json_codec.hpp"
#include "k8s/model/kind_decoders.hpp"

namespace kai::model {
namespace {

using nlohmann::json;
using simdjson::dom::element;
using simdjson::dom::element_type;

/// A view (json_decoder.hpp) of a simdjson DOM value. Its members are found by a scan that keeps
/// the last of repeated keys, and a map's members are visited in ascending key order, each once,
/// as nlohmann's std::map holds them (Go writes maps sorted, so the sort is almost never needed).
class SimdView {
 public:
  explicit SimdView(element e) : e_(e) {}

  bool is_object() const { return e_.type() == element_type::OBJECT; }
  bool is_array() const { return e_.type() == element_type::ARRAY; }
  bool is_string() const { return e_.type() == element_type::STRING; }
  bool is_boolean() const { return e_.type() == element_type::BOOL; }
  bool is_number() const {
    const element_type t = e_.type();
    return t == element_type::INT64 || t == element_type::UINT64 || t == element_type::DOUBLE;
  }
  bool is_null() const { return e_.type() == element_type::NULL_VALUE; }

  /// nlohmann's names, so that errors read the same whichever view decoded.
  const char* type_name() const {
    switch (e_.type()) {
      case element_type::OBJECT:
        return "object";
      case element_type::ARRAY:
        return "array";
      case element_type::STRING:
        return "string";
      case element_type::INT64:
      case element_type::UINT64:
      case element_type::DOUBLE:
        return "number";
      case element_type::BOOL:
        return "boolean";
      case element_type::NULL_VALUE:
        return "null";
    }
    return "null";
  }

  std::optional<SimdView> find(std::string_view key) const {
    std::optional<SimdView> found;
    for (auto [k, v] : simdjson::dom::object(e_)) {
      if (k == key) found = SimdView(v);
    }
    return found;
  }

  std::string_view string() const { return std::string_view(e_); }
  bool boolean() const { return bool(e_); }

  std::optional<int64_t> as_int64() const {
    switch (e_.type()) {
      case element_type::INT64:
        return int64_t(e_);
      case element_type::DOUBLE:
        return json_detail::integral(double(e_));
      default:
        return std::nullopt;  // UINT64 holds only values above int64's range
    }
  }
  double as_double() const {
    switch (e_.type()) {
      case element_type::INT64:
        return static_cast<double>(int64_t(e_));
      case element_type::UINT64:
        return static_cast<double>(uint64_t(e_));
      default:
        return double(e_);
    }
  }
  std::string dump_number() const {
    switch (e_.type()) {
      case element_type::INT64:
        return std::to_string(int64_t(e_));
      case element_type::UINT64:
        return std::to_string(uint64_t(e_));
      default:
        return json(double(e_)).dump();
    }
  }

  size_t size() const {
    size_t n = 0;
    for ([[maybe_unused]] element item : simdjson::dom::array(e_)) ++n;
    return n;
  }

  template <class F>
  void for_each_element(F&& f) const {
    size_t i = 0;
    for (element item : simdjson::dom::array(e_)) f(i++, SimdView(item));
  }

  template <class F>
  void for_each_member(F&& f) const {
    const simdjson::dom::object obj(e_);
    bool ascending = true;
    std::optional<std::string_view> previous;
    for (auto [k, v] : obj) {
      if (previous && !(*previous < k)) {
        ascending = false;
        break;
      }
      previous = k;
    }
    if (ascending) {
      for (auto [k, v] : obj) f(k, SimdView(v));
      return;
    }
    std::vector<std::pair<std::string_view, element>> members;
    for (auto [k, v] : obj) members.emplace_back(k, v);
    std::stable_sort(members.begin(), members.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    for (size_t i = 0; i < members.size(); ++i) {
      if (i + 1 < members.size() && members[i + 1].first == members[i].first) continue;  // the last wins
      f(members[i].first, SimdView(members[i].second));
    }
  }

 private:
  element e_;
};

Status decode_item(element e, std::string_view kind, ClusterObjects& out) {
  return json_detail::decode_object_into(SimdView(e), kind, out);
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
    std::map<std::string_view, size_t> per_kind;
    for (element item : simdjson::dom::array(items)) {
      std::string_view kind;
      if (!item.is_object() || item["kind"].get(kind) || is_list_kind(kind)) return false;
      ++per_kind[kind];
    }
    // Each kind's vector sized once: grown by doubling, 150,000 pods were moved again and again.
    for (const auto& [kind, count] : per_kind) {
      with_kind(kind, [&, n = count](auto k) { decltype(k)::in(out).reserve(decltype(k)::in(out).size() + n); });
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
