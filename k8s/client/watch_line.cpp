#include "k8s/client/watch_line.hpp"

#include <simdjson.h>

#include <cstring>

namespace kai::k8s {
namespace {

namespace od = simdjson::ondemand;

/// The line copied with simdjson's padding after it (On-Demand reads a little past the end).
std::string_view padded_copy(std::string_view line, std::string& buffer) {
  buffer.resize(line.size() + simdjson::SIMDJSON_PADDING);
  std::memcpy(buffer.data(), line.data(), line.size());
  std::memset(buffer.data() + line.size(), ' ', simdjson::SIMDJSON_PADDING);
  return {buffer.data(), line.size()};
}

model::Result<WatchLineType> type_of(std::string_view type) {
  if (type == "ADDED") return WatchLineType::kAdded;
  if (type == "MODIFIED") return WatchLineType::kModified;
  if (type == "DELETED") return WatchLineType::kDeleted;
  if (type == "BOOKMARK") return WatchLineType::kBookmark;
  if (type == "ERROR") return WatchLineType::kError;
  return model::Status::error("unknown event type " + std::string(type));
}

/// Reads the identity (metadata name, namespace, resourceVersion) of an object, or for an ERROR
/// event the Status's code and message. `object` is a slice of a padded buffer with `capacity`
/// readable bytes from its start.
model::Status read_object_fields(od::parser& parser, std::string_view object, size_t capacity, bool status,
                                 bool look_for_kind, ObjectIdentity& id, WatchLine* error) {
  od::document doc;
  if (parser.iterate(object.data(), object.size(), capacity).get(doc))
    return model::Status::error("object is not JSON");
  od::object obj;
  if (doc.get_object().get(obj)) return model::Status::error("object is not an object");
  for (auto field : obj) {
    std::string_view key;
    if (field.unescaped_key().get(key)) return model::Status::error("object is not JSON");
    if (status) {
      if (key == "code") {
        int64_t code = 0;
        if (!field.value().get_int64().get(code)) error->error_code = code;
      } else if (key == "message") {
        std::string_view message;
        if (!field.value().get_string().get(message)) error->error_message = std::string(message);
      }
      continue;
    }
    if (key == "kind") id.has_kind = true;
    if (key != "metadata") continue;
    od::object meta;
    if (field.value().get_object().get(meta)) continue;  // the typed decoder reports it
    for (auto m : meta) {
      std::string_view mkey;
      if (m.unescaped_key().get(mkey)) return model::Status::error("object is not JSON");
      std::string* target = mkey == "resourceVersion" ? &id.resource_version
                            : mkey == "name"          ? &id.name
                            : mkey == "namespace"     ? &id.namespace_
                                                      : nullptr;
      if (target == nullptr) continue;
      std::string_view v;
      if (!m.value().get_string().get(v)) *target = std::string(v);
    }
    // A watch object states its kind before its metadata; a list item has none: stop here unless
    // the caller needs to know.
    if (!look_for_kind || id.has_kind) return model::Status::ok();
  }
  return model::Status::ok();
}

std::string_view trim_right(std::string_view s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\n' || s.back() == '\r' || s.back() == '\t'))
    s.remove_suffix(1);
  return s;
}

}  // namespace

model::Result<WatchLine> scan_watch_line(std::string_view line) {
  thread_local od::parser parser;
  thread_local std::string buffer;
  const std::string_view padded = padded_copy(line, buffer);
  WatchLine out;
  bool has_type = false;
  std::string_view object;
  {
    od::document doc;
    od::object event;
    if (parser.iterate(padded.data(), padded.size(), buffer.size()).get(doc) || doc.get_object().get(event)) {
      return model::Status::error("not a JSON object");
    }
    for (auto field : event) {
      std::string_view key;
      if (field.unescaped_key().get(key)) return model::Status::error("not a JSON object");
      if (key == "type") {
        std::string_view type;
        if (field.value().get_string().get(type)) return model::Status::error("type is not a string");
        auto t = type_of(type);
        if (!t) return t.status();
        out.type = *t;
        has_type = true;
      } else if (key == "object") {
        od::object obj;
        if (field.value().get_object().get(obj)) return model::Status::error("object is not an object");
        if (obj.raw_json().get(object)) return model::Status::error("object is not JSON");
      }
    }
  }
  if (!has_type) return model::Status::error("no type");
  if (object.data() == nullptr) return model::Status::error("no object");
  // raw_json() ends at the closing brace; trim any whitespace it kept.
  while (!object.empty() &&
         (object.back() == ' ' || object.back() == '\n' || object.back() == '\r' || object.back() == '\t'))
    object.remove_suffix(1);
  const size_t offset = static_cast<size_t>(object.data() - buffer.data());
  const size_t capacity = buffer.size() - offset;
  if (model::Status s = read_object_fields(parser, object, capacity, out.type == WatchLineType::kError, false,
                                           out.id, &out);
      !s)
    return s;
  out.object = line.substr(offset, object.size());
  return out;
}

model::Result<ListPage> scan_list_page(std::string_view body) {
  thread_local od::parser parser;
  thread_local std::string buffer;
  const std::string_view padded = padded_copy(body, buffer);
  ListPage page;
  std::vector<std::string_view> objects;
  {
    od::document doc;
    od::object list;
    if (parser.iterate(padded.data(), padded.size(), buffer.size()).get(doc) || doc.get_object().get(list)) {
      return model::Status::error("the answer is not a List");
    }
    bool has_items = false;
    for (auto field : list) {
      std::string_view key;
      if (field.unescaped_key().get(key)) return model::Status::error("the answer is not a List");
      if (key == "metadata") {
        od::object meta;
        if (field.value().get_object().get(meta))
          return model::Status::error("the List's metadata is not an object");
        for (auto m : meta) {
          std::string_view mkey, v;
          if (m.unescaped_key().get(mkey)) return model::Status::error("the answer is not a List");
          if (mkey == "resourceVersion" && !m.value().get_string().get(v))
            page.resource_version = std::string(v);
          if (mkey == "continue" && !m.value().get_string().get(v)) page.continue_token = std::string(v);
        }
      } else if (key == "items") {
        od::value items_value;
        if (field.value().get(items_value)) return model::Status::error("the answer is not a List");
        bool is_null = false;
        if (!items_value.is_null().get(is_null) && is_null) {  // Go writes `"items": null` for an empty list
          has_items = true;
          continue;
        }
        od::array items;
        if (items_value.get_array().get(items))
          return model::Status::error("the List's items are not an array");
        has_items = true;
        size_t index = 0;
        for (auto item : items) {
          od::object obj;
          std::string_view raw;
          if (item.get_object().get(obj) || obj.raw_json().get(raw)) {
            return model::Status::error("item " + std::to_string(index) + " of the List is not an object");
          }
          objects.push_back(trim_right(raw));
          ++index;
        }
      }
    }
    if (!has_items) return model::Status::error("the answer is not a List (no items)");
  }
  page.items.reserve(objects.size());
  for (std::string_view object : objects) {
    ListedObject listed;
    const size_t offset = static_cast<size_t>(object.data() - buffer.data());
    if (model::Status s =
            read_object_fields(parser, object, buffer.size() - offset, false, true, listed.id, nullptr);
        !s) {
      return model::Status::error("item " + std::to_string(page.items.size()) +
                                  " of the List: " + s.message());
    }
    listed.object = body.substr(offset, object.size());
    page.items.push_back(std::move(listed));
  }
  return page;
}

}  // namespace kai::k8s
