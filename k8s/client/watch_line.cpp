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

/// Reads metadata.resourceVersion, or for an ERROR event the Status's code and message, from the
/// object (a slice of the padded buffer, so the padding after it is readable).
model::Status read_object_fields(od::parser& parser, std::string_view object, size_t capacity,
                                 WatchLine& out) {
  od::document doc;
  if (parser.iterate(object.data(), object.size(), capacity).get(doc))
    return model::Status::error("object is not JSON");
  od::object obj;
  if (doc.get_object().get(obj)) return model::Status::error("object is not an object");
  for (auto field : obj) {
    std::string_view key;
    if (field.unescaped_key().get(key)) return model::Status::error("object is not JSON");
    if (out.type == WatchLineType::kError) {
      if (key == "code") {
        int64_t code = 0;
        if (!field.value().get_int64().get(code)) out.error_code = code;
      } else if (key == "message") {
        std::string_view message;
        if (!field.value().get_string().get(message)) out.error_message = std::string(message);
      }
      continue;
    }
    if (key != "metadata") continue;
    od::object meta;
    if (field.value().get_object().get(meta)) return model::Status::ok();  // the typed decoder reports it
    for (auto m : meta) {
      std::string_view mkey;
      if (m.unescaped_key().get(mkey)) return model::Status::error("object is not JSON");
      if (mkey != "resourceVersion") continue;
      std::string_view rv;
      if (!m.value().get_string().get(rv)) out.resource_version = std::string(rv);
      return model::Status::ok();
    }
    return model::Status::ok();
  }
  return model::Status::ok();
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
  if (model::Status s = read_object_fields(parser, object, capacity, out); !s) return s;
  out.object = line.substr(offset, object.size());
  return out;
}

}  // namespace kai::k8s
