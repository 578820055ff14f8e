// Codec unit: simdjson and nlohmann meet here, nowhere else.
#include "k8s/model/watch_decode.hpp"

#include <simdjson.h>

#include <algorithm>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "k8s/model/codec.hpp"
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

namespace {

bool is_list_kind(std::string_view k) { return k.size() >= 4 && k.substr(k.size() - 4) == "List"; }

/// The raw text of every item of a snapshot List (or top-level array), each with its kind, found
/// by simdjson's On-Demand parser, which indexes the text but builds no tree of it. Every member
/// of the List besides its items is checked by a DOM parse of its own text, so that nothing the
/// whole-document parse refused is accepted. False for any other shape (decode_snapshot then reads
/// the text through nlohmann).
class ListItems {
 public:
  bool find(simdjson::padded_string_view input) {
    simdjson::ondemand::document doc;
    if (parser_.iterate(input).get(doc)) return false;
    simdjson::ondemand::json_type type;
    if (doc.type().get(type)) return false;
    if (type == simdjson::ondemand::json_type::array) {
      simdjson::ondemand::array items;
      if (doc.get_array().get(items) || !add_items(items)) return false;
    } else if (type == simdjson::ondemand::json_type::object) {
      simdjson::ondemand::object root;
      if (doc.get_object().get(root) || !list_members(root)) return false;
    } else {
      return false;
    }
    // Nothing after the root: its end is the document's end.
    const char* trailing = nullptr;
    return doc.current_location().get(trailing) != simdjson::SUCCESS;
  }

  const std::vector<std::pair<std::string_view, std::string_view>>& items() const { return items_; }
  const std::map<std::string, size_t, std::less<>>& per_kind() const { return per_kind_; }

  /// Frees the parsers once the items are found. The On-Demand index takes 4 bytes per byte of
  /// text (260 MB for kai-gen's 65 MB List), more than the objects decoded from it; the items'
  /// texts are views into the input and their kinds are held here, so neither needs the parsers.
  void release_parsers() {
    parser_ = simdjson::ondemand::parser{};
    checked_ = simdjson::dom::parser{};
  }

 private:
  bool list_members(simdjson::ondemand::object& root) {
    bool seen_kind = false;
    bool seen_items = false;
    for (auto field_result : root) {
      simdjson::ondemand::field field;
      std::string_view key;
      if (std::move(field_result).get(field) || field.unescaped_key().get(key)) return false;
      simdjson::ondemand::value value = field.value();
      if (key == "items") {
        if (seen_items) return false;  // repeated: the reference parser's rules decide
        seen_items = true;
        if (value.is_null()) continue;  // Go writes `"items": null` for an empty list
        simdjson::ondemand::array items;
        if (value.get_array().get(items) || !add_items(items)) return false;
        continue;
      }
      std::string_view raw;
      element member;
      if (!raw_text(value, raw) || checked_.parse(raw.data(), raw.size(), false).get(member)) return false;
      if (key == "kind") {
        std::string_view kind;
        if (seen_kind || member.get_string().get(kind) || !is_list_kind(kind)) return false;
        seen_kind = true;
      }
    }
    return seen_kind && seen_items;
  }

  bool add_items(simdjson::ondemand::array& items) {
    for (auto item_result : items) {
      simdjson::ondemand::object item;
      std::string_view kind;
      std::string_view raw;
      if (item_result.get_object().get(item) || item.find_field_unordered("kind").get_string().get(kind) ||
          is_list_kind(kind) || item.raw_json().get(raw)) {
        return false;
      }
      // The kind is copied: an On-Demand string may live in the parser's buffer.
      auto known = per_kind_.find(kind);
      if (known == per_kind_.end()) known = per_kind_.emplace(std::string(kind), 0).first;
      ++known->second;
      items_.emplace_back(known->first, raw);
    }
    return true;
  }

  /// A member's whole text: an object's or array's up to its closing bracket, a scalar's token.
  static bool raw_text(simdjson::ondemand::value& value, std::string_view& raw) {
    simdjson::ondemand::json_type type;
    if (value.type().get(type)) return false;
    if (type == simdjson::ondemand::json_type::object) {
      simdjson::ondemand::object o;
      return !value.get_object().get(o) && !o.raw_json().get(raw);
    }
    if (type == simdjson::ondemand::json_type::array) {
      simdjson::ondemand::array a;
      return !value.get_array().get(a) && !a.raw_json().get(raw);
    }
    raw = value.raw_json_token();
    return true;
  }

  simdjson::ondemand::parser parser_;
  simdjson::dom::parser checked_;
  std::vector<std::pair<std::string_view, std::string_view>> items_;  ///< (kind in per_kind_, text in the input)
  std::map<std::string, size_t, std::less<>> per_kind_;
};

}  // namespace

static_assert(kSnapshotInPlacePadding == simdjson::SIMDJSON_PADDING, "codec.hpp's padding is simdjson's");

bool decode_flat_list_json(std::string_view text, ClusterObjects& out, size_t readable_after) {
  // The text is read in place when the caller left simdjson's padding readable after it, else copied.
  simdjson::padded_string copy;
  simdjson::padded_string_view input;
  if (readable_after >= simdjson::SIMDJSON_PADDING) {
    input = simdjson::padded_string_view(text.data(), text.size(), text.size() + readable_after);
  } else {
    copy = simdjson::padded_string(text);
    input = copy;
  }
  // No tree of the whole snapshot: at 150,000 pods simdjson's DOM of kai-gen's 65 MB List took
  // about 320 MB more at the peak than the objects decoded from it. The items are found first, then
  // each is parsed on its own into a parser as large as the largest item, freed on return (the watch
  // path's thread_local parser is for many small objects).
  ListItems list;
  if (!list.find(input)) return false;
  list.release_parsers();
  // Each kind's vector sized once: grown by doubling, 150,000 pods were moved again and again.
  for (const auto& [kind, count] : list.per_kind()) {
    with_kind(kind, [&, n = count](auto k) { decltype(k)::in(out).reserve(decltype(k)::in(out).size() + n); });
  }
  simdjson::dom::parser item_parser;
  try {
    for (const auto& [kind, raw] : list.items()) {
      element item;
      // In place: the bytes after an item are the rest of the padded input.
      if (item_parser.parse(raw.data(), raw.size(), false).get(item) || !decode_item(item, kind, out)) {
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
