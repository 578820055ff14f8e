#pragma once
// Decoder: typed readers of JSON fields that record a FieldError instead of throwing, and the small
// path and value helpers they use. Internal to the JSON codec (json_decode.cpp).

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "k8s/model/objects.hpp"
#include "k8s/model/quantity.hpp"
#include "k8s/model/status.hpp"
#include "k8s/model/time.hpp"

namespace kai::model::json_detail {

using nlohmann::json;

/// "base.key", or "key" at the top level.
inline std::string join(const std::string& base, std::string_view key) {
  if (base.empty()) return std::string(key);
  std::string out;
  out.reserve(base.size() + 1 + key.size());
  out.append(base).append(".").append(key);
  return out;
}

/// "base[i]".
inline std::string at_index(const std::string& base, size_t i) {
  return base + "[" + std::to_string(i) + "]";
}

/// The member `key` of `obj`, or nullptr when `obj` is not an object or the member is absent or null.
/// JSON null is treated as absent because Go clients write `null` for empty slices and maps.
inline const json* member(const json& obj, std::string_view key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return nullptr;
  return &*it;
}

/// Integer value of a JSON number; floats are accepted only when integral (YAML "2.0").
inline std::optional<int64_t> as_int64(const json& v) {
  if (v.is_number_integer() && !v.is_number_unsigned()) return v.get<int64_t>();
  if (v.is_number_unsigned()) {
    const uint64_t u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
    return static_cast<int64_t>(u);
  }
  if (v.is_number_float()) {
    const double d = v.get<double>();
    // The bounds are exact powers of two, so the comparison is exact.
    if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0)) return std::nullopt;
    const auto i = static_cast<int64_t>(d);
    if (static_cast<double>(i) != d) return std::nullopt;
    return i;
  }
  return std::nullopt;
}

/// Typed field readers that record a FieldError instead of throwing, so that one bad field leaves
/// the rest of the object usable (bad fields become unschedulable reasons: docs/kai-compatibility.md "Predicates and refused constraints").
class Decoder {
 public:
  explicit Decoder(std::vector<FieldError>& errors) : errors_(errors) {}

  void fail(std::string path, std::string message) {
    errors_.push_back(FieldError{std::move(path), std::move(message)});
  }

  void wrong_type(const std::string& path, std::string_view expected, const json& got) {
    fail(path, "expected " + std::string(expected) + ", got " + std::string(got.type_name()));
  }

  /// The object at `obj.key`, or nullptr (with a FieldError when present but not an object).
  const json* object(const json& obj, std::string_view key, const std::string& path) {
    return typed(obj, key, path, json::value_t::object, "an object");
  }

  /// The array at `obj.key`, or nullptr (with a FieldError when present but not an array).
  const json* array(const json& obj, std::string_view key, const std::string& path) {
    return typed(obj, key, path, json::value_t::array, "an array");
  }

  /// Each element of the array `obj.key` that is an object, with its path; others are FieldErrors.
  template <class F>
  void each_object(const json& obj, std::string_view key, const std::string& path, F&& f) {
    const json* arr = array(obj, key, path);
    if (arr == nullptr) return;
    for (size_t i = 0; i < arr->size(); ++i) {
      const json& item = (*arr)[i];
      const std::string item_path = at_index(path, i);
      if (!item.is_object()) {
        wrong_type(item_path, "an object", item);
        continue;
      }
      f(item, item_path, i);
    }
  }

  /// Decodes each object of the array `obj.key` into a new element of `out`: `f(item, path, element)`.
  template <class T, class F>
  void each_into(const json& obj, std::string_view key, const std::string& path, std::vector<T>& out, F&& f) {
    each_object(obj, key, path, [&](const json& item, const std::string& item_path, size_t) {
      T element;
      f(item, item_path, element);
      out.push_back(std::move(element));
    });
  }

  void str(const json& obj, std::string_view key, const std::string& path, std::string& out) {
    if (const std::string* v = string_at(obj, key, path, "a string")) out = *v;
  }

  void optional_str(const json& obj, std::string_view key, const std::string& path,
                    std::optional<std::string>& out) {
    if (const std::string* v = string_at(obj, key, path, "a string")) out = *v;
  }

  void boolean(const json& obj, std::string_view key, const std::string& path, bool& out) {
    const json* v = member(obj, key);
    if (v == nullptr) return;
    if (!v->is_boolean()) return wrong_type(path, "a boolean", *v);
    out = v->get<bool>();
  }

  void optional_boolean(const json& obj, std::string_view key, const std::string& path,
                        std::optional<bool>& out) {
    bool b = false;
    const size_t before = errors_.size();
    if (member(obj, key) == nullptr) return;
    boolean(obj, key, path, b);
    if (errors_.size() == before) out = b;
  }

  template <class Int>
  void integer(const json& obj, std::string_view key, const std::string& path, Int& out) {
    std::optional<Int> v;
    optional_integer(obj, key, path, v);
    if (v) out = *v;
  }

  template <class Int>
  void optional_integer(const json& obj, std::string_view key, const std::string& path,
                        std::optional<Int>& out) {
    const json* v = member(obj, key);
    if (v == nullptr) return;
    if (!v->is_number()) return wrong_type(path, "an integer", *v);
    const std::optional<int64_t> i = as_int64(*v);
    if (!i || *i < std::numeric_limits<Int>::min() || *i > std::numeric_limits<Int>::max()) {
      return fail(path, "integer " + v->dump() + " is out of range or not whole");
    }
    out = static_cast<Int>(*i);
  }

  void number(const json& obj, std::string_view key, const std::string& path, double& out) {
    const json* v = member(obj, key);
    if (v == nullptr) return;
    if (!v->is_number()) return wrong_type(path, "a number", *v);
    out = v->get<double>();
  }

  void string_map(const json& obj, std::string_view key, const std::string& path, StringMap& out) {
    const json* m = object(obj, key, path);
    if (m == nullptr) return;
    for (const auto& [k, v] : m->items()) {
      if (!v.is_string()) {
        wrong_type(join(path, k), "a string", v);
        continue;
      }
      out[k] = v.get<std::string>();
    }
  }

  void string_list(const json& obj, std::string_view key, const std::string& path,
                   std::vector<std::string>& out) {
    const json* arr = array(obj, key, path);
    if (arr == nullptr) return;
    for (size_t i = 0; i < arr->size(); ++i) {
      const json& v = (*arr)[i];
      if (!v.is_string()) {
        wrong_type(at_index(path, i), "a string", v);
        continue;
      }
      out.push_back(v.get<std::string>());
    }
  }

  /// A ResourceList; values are quantity strings or, as the API server also accepts, JSON numbers.
  void resources(const json& obj, std::string_view key, const std::string& path, ResourceList& out) {
    const json* m = object(obj, key, path);
    if (m == nullptr) return;
    for (const auto& [name, v] : m->items()) {
      const std::string field = join(path, name);
      std::string text;
      if (v.is_string()) {
        text = v.get<std::string>();
      } else if (v.is_number()) {
        text = v.dump();  // shortest round-trip form, e.g. 0.5 -> "0.5", 1e20 -> "1e+20"
      } else {
        wrong_type(field, "a quantity", v);
        continue;
      }
      Result<int64_t> q = parse_quantity_milli(text);
      if (!q) {
        fail(field, q.message());
        continue;
      }
      out[name] = *q;
    }
  }

  void timestamp(const json& obj, std::string_view key, const std::string& path,
                 std::optional<int64_t>& out) {
    if (auto t = parsed(obj, key, path, "an RFC 3339 timestamp", &parse_rfc3339)) out = *t;
  }

  void duration_seconds(const json& obj, std::string_view key, const std::string& path,
                        std::optional<double>& out) {
    if (auto ns = parsed(obj, key, path, "a duration string", &parse_go_duration_ns)) {
      out = static_cast<double>(*ns) / 1e9;
    }
  }

  void meta(const json& j, ObjectMeta& m) {
    const json* md = object(j, "metadata", "metadata");
    if (md == nullptr) return;
    str(*md, "name", "metadata.name", m.name);
    str(*md, "namespace", "metadata.namespace", m.namespace_);
    str(*md, "uid", "metadata.uid", m.uid);
    str(*md, "resourceVersion", "metadata.resourceVersion", m.resource_version);
    integer(*md, "generation", "metadata.generation", m.generation);
    std::optional<int64_t> created;
    timestamp(*md, "creationTimestamp", "metadata.creationTimestamp", created);
    if (created) m.creation_timestamp = *created;
    timestamp(*md, "deletionTimestamp", "metadata.deletionTimestamp", m.deletion_timestamp);
    string_map(*md, "labels", "metadata.labels", m.labels);
    string_map(*md, "annotations", "metadata.annotations", m.annotations);
    each_object(*md, "ownerReferences", "metadata.ownerReferences",
                [&](const json& o, const std::string& p, size_t) {
                  OwnerReference r;
                  str(o, "apiVersion", join(p, "apiVersion"), r.api_version);
                  str(o, "kind", join(p, "kind"), r.kind);
                  str(o, "name", join(p, "name"), r.name);
                  str(o, "uid", join(p, "uid"), r.uid);
                  boolean(o, "controller", join(p, "controller"), r.controller);
                  m.owner_references.push_back(std::move(r));
                });
  }

 private:
  /// The string at `obj.key`, or null (with a FieldError expecting `expected` when it is not a string).
  const std::string* string_at(const json& obj, std::string_view key, const std::string& path,
                               std::string_view expected) {
    const json* v = member(obj, key);
    if (v == nullptr) return nullptr;
    if (!v->is_string()) {
      wrong_type(path, expected, *v);
      return nullptr;
    }
    return v->get_ptr<const std::string*>();
  }

  /// The string at `obj.key` read by `parse`; nullopt when absent, with a FieldError when it is not a
  /// string or `parse` refuses it.
  std::optional<int64_t> parsed(const json& obj, std::string_view key, const std::string& path,
                                std::string_view expected, Result<int64_t> (*parse)(std::string_view)) {
    const std::string* s = string_at(obj, key, path, expected);
    if (s == nullptr) return std::nullopt;
    Result<int64_t> value = parse(*s);
    if (!value) {
      fail(path, value.message());
      return std::nullopt;
    }
    return *value;
  }

  const json* typed(const json& obj, std::string_view key, const std::string& path, json::value_t type,
                    std::string_view expected) {
    const json* v = member(obj, key);
    if (v == nullptr) return nullptr;
    if (v->type() != type) {
      wrong_type(path, expected, *v);
      return nullptr;
    }
    return v;
  }

  std::vector<FieldError>& errors_;
};

}  // namespace kai::model::json_detail
