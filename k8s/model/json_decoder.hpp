#pragma once
// Decoder: typed readers of JSON fields that record a FieldError instead of throwing, over any JSON
// view (nlohmann's DOM in json_decode.cpp, simdjson's in watch_decode.cpp), and the field paths they
// name in errors, built only when an error needs one. Internal to the JSON codec.
//
// A view V is a cheap handle on one JSON value with:
//   is_object() is_array() is_string() is_boolean() is_number() is_null()
//   type_name()              nlohmann's name of its type ("object", "number", ...)
//   find(key)                std::optional<V>: the member, null included; of repeated keys the last
//   string() boolean()       the value (std::string_view, bool)
//   as_int64()               std::optional<int64_t>: integers, and floats only when integral
//   as_double()              any number
//   dump_number()            the number as nlohmann's dump() writes it
//   size()                   an array's length
//   for_each_element(f)      f(size_t index, V item)
//   for_each_member(f)       f(std::string_view key, V value), keys ascending, each once (the last)
// so that both views decide and word every error alike (tests/model/watch_decode_test.cpp).

#include <cstdint>
#include <limits>
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

/// A field's path ("spec.containers[0].name"), kept as links to its parent until an error spells
/// it out: a decoder reads a hundred fields of a pod and almost never reports one. A Path refers to
/// its parent, so it is neither copied nor moved; it lives in the call that made it.
class Path {
 public:
  /// The top level.
  Path() = default;
  /// A path spelt out at once, e.g. "spec.affinity.nodeAffinity".
  explicit Path(std::string_view literal) : key_(literal) {}
  Path(const Path& parent, std::string_view key) : parent_(&parent), key_(key) {}
  Path(const Path& parent, size_t index) : parent_(&parent), index_(index), is_index_(true) {}
  Path(const Path&) = delete;
  Path(Path&&) = delete;
  Path& operator=(const Path&) = delete;
  Path& operator=(Path&&) = delete;
  ~Path() = default;

  /// "parent.key" ("key" at the top level).
  Path operator/(std::string_view key) const { return Path(*this, key); }
  /// "parent[index]".
  Path operator[](size_t index) const { return Path(*this, index); }

  std::string str() const {
    std::string out;
    append_to(out);
    return out;
  }

 private:
  void append_to(std::string& out) const {
    if (parent_ != nullptr) parent_->append_to(out);
    if (is_index_) {
      out.append("[").append(std::to_string(index_)).append("]");
      return;
    }
    if (!out.empty()) out.push_back('.');
    out.append(key_);
  }

  const Path* parent_ = nullptr;
  std::string_view key_;
  size_t index_ = 0;
  bool is_index_ = false;
};

/// Integer value of a double, only when integral and within int64 (YAML "2.0").
inline std::optional<int64_t> integral(double d) {
  // The bounds are exact powers of two, so the comparison is exact.
  if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0)) return std::nullopt;
  const auto i = static_cast<int64_t>(d);
  if (static_cast<double>(i) != d) return std::nullopt;
  return i;
}

/// The member `key` of `obj`, or nothing when `obj` is not an object or the member is absent or null.
/// JSON null is treated as absent because Go clients write `null` for empty slices and maps.
template <class V>
std::optional<V> member(V obj, std::string_view key) {
  if (!obj.is_object()) return std::nullopt;
  std::optional<V> v = obj.find(key);
  if (!v || v->is_null()) return std::nullopt;
  return v;
}

/// Typed field readers that record a FieldError instead of throwing, so that one bad field leaves
/// the rest of the object usable (bad fields become unschedulable reasons: docs/kai-compatibility.md "Predicates and refused constraints").
template <class V>
class Decoder {
 public:
  explicit Decoder(std::vector<FieldError>& errors) : errors_(errors) {}

  void fail(const Path& path, std::string message) {
    errors_.push_back(FieldError{path.str(), std::move(message)});
  }

  void wrong_type(const Path& path, std::string_view expected, V got) {
    fail(path, "expected " + std::string(expected) + ", got " + got.type_name());
  }

  /// The object at `obj.key`, or nothing (with a FieldError when present but not an object).
  std::optional<V> object(V obj, std::string_view key, const Path& path) {
    std::optional<V> v = member(obj, key);
    if (v && !v->is_object()) return mistyped(path, "an object", *v);
    return v;
  }

  /// The array at `obj.key`, or nothing (with a FieldError when present but not an array).
  std::optional<V> array(V obj, std::string_view key, const Path& path) {
    std::optional<V> v = member(obj, key);
    if (v && !v->is_array()) return mistyped(path, "an array", *v);
    return v;
  }

  /// Each element of the array `obj.key` that is an object, with its path; others are FieldErrors.
  template <class F>
  void each_object(V obj, std::string_view key, const Path& path, F&& f) {
    std::optional<V> arr = array(obj, key, path);
    if (!arr) return;
    arr->for_each_element([&](size_t i, V item) {
      const Path item_path(path, i);
      if (!item.is_object()) return wrong_type(item_path, "an object", item);
      f(item, item_path, i);
    });
  }

  /// Decodes each object of the array `obj.key` into a new element of `out`: `f(item, path, element)`.
  template <class T, class F>
  void each_into(V obj, std::string_view key, const Path& path, std::vector<T>& out, F&& f) {
    each_object(obj, key, path, [&](V item, const Path& item_path, size_t) {
      T element;
      f(item, item_path, element);
      out.push_back(std::move(element));
    });
  }

  void str(V obj, std::string_view key, const Path& path, std::string& out) {
    if (auto v = string_at(obj, key, path, "a string")) out.assign(*v);
  }

  void optional_str(V obj, std::string_view key, const Path& path, std::optional<std::string>& out) {
    if (auto v = string_at(obj, key, path, "a string")) out = std::string(*v);
  }

  void boolean(V obj, std::string_view key, const Path& path, bool& out) {
    std::optional<V> v = member(obj, key);
    if (!v) return;
    if (!v->is_boolean()) return wrong_type(path, "a boolean", *v);
    out = v->boolean();
  }

  void optional_boolean(V obj, std::string_view key, const Path& path, std::optional<bool>& out) {
    bool b = false;
    const size_t before = errors_.size();
    if (!member(obj, key)) return;
    boolean(obj, key, path, b);
    if (errors_.size() == before) out = b;
  }

  template <class Int>
  void integer(V obj, std::string_view key, const Path& path, Int& out) {
    std::optional<Int> v;
    optional_integer(obj, key, path, v);
    if (v) out = *v;
  }

  template <class Int>
  void optional_integer(V obj, std::string_view key, const Path& path, std::optional<Int>& out) {
    std::optional<V> v = member(obj, key);
    if (!v) return;
    if (!v->is_number()) return wrong_type(path, "an integer", *v);
    const std::optional<int64_t> i = v->as_int64();
    if (!i || *i < std::numeric_limits<Int>::min() || *i > std::numeric_limits<Int>::max()) {
      return fail(path, "integer " + v->dump_number() + " is out of range or not whole");
    }
    out = static_cast<Int>(*i);
  }

  void number(V obj, std::string_view key, const Path& path, double& out) {
    std::optional<V> v = member(obj, key);
    if (!v) return;
    if (!v->is_number()) return wrong_type(path, "a number", *v);
    out = v->as_double();
  }

  void string_map(V obj, std::string_view key, const Path& path, StringMap& out) {
    std::optional<V> m = object(obj, key, path);
    if (!m) return;
    m->for_each_member([&](std::string_view k, V v) {
      if (!v.is_string()) return wrong_type(Path(path, k), "a string", v);
      out.insert_or_assign(std::string(k), std::string(v.string()));
    });
  }

  void string_list(V obj, std::string_view key, const Path& path, std::vector<std::string>& out) {
    std::optional<V> arr = array(obj, key, path);
    if (!arr) return;
    arr->for_each_element([&](size_t i, V v) {
      if (!v.is_string()) return wrong_type(Path(path, i), "a string", v);
      out.emplace_back(v.string());
    });
  }

  /// A ResourceList; values are quantity strings or, as the API server also accepts, JSON numbers.
  void resources(V obj, std::string_view key, const Path& path, ResourceList& out) {
    std::optional<V> m = object(obj, key, path);
    if (!m) return;
    m->for_each_member([&](std::string_view name, V v) {
      std::string number_text;
      std::string_view text;
      if (v.is_string()) {
        text = v.string();
      } else if (v.is_number()) {
        number_text = v.dump_number();  // shortest round-trip form, e.g. 0.5 -> "0.5", 1e20 -> "1e+20"
        text = number_text;
      } else {
        return wrong_type(Path(path, name), "a quantity", v);
      }
      Result<int64_t> q = parse_quantity_milli(text);
      if (!q) return fail(Path(path, name), q.message());
      out.insert_or_assign(std::string(name), *q);
    });
  }

  void timestamp(V obj, std::string_view key, const Path& path, std::optional<int64_t>& out) {
    if (auto t = parsed(obj, key, path, "an RFC 3339 timestamp", &parse_rfc3339)) out = *t;
  }

  void duration_seconds(V obj, std::string_view key, const Path& path, std::optional<double>& out) {
    if (auto ns = parsed(obj, key, path, "a duration string", &parse_go_duration_ns)) {
      out = static_cast<double>(*ns) / 1e9;
    }
  }

  void meta(V j, ObjectMeta& m) {
    const Path root;
    const Path md_path(root, "metadata");
    std::optional<V> md = object(j, "metadata", md_path);
    if (!md) return;
    str(*md, "name", md_path / "name", m.name);
    str(*md, "namespace", md_path / "namespace", m.namespace_);
    str(*md, "uid", md_path / "uid", m.uid);
    str(*md, "resourceVersion", md_path / "resourceVersion", m.resource_version);
    integer(*md, "generation", md_path / "generation", m.generation);
    std::optional<int64_t> created;
    timestamp(*md, "creationTimestamp", md_path / "creationTimestamp", created);
    if (created) m.creation_timestamp = *created;
    timestamp(*md, "deletionTimestamp", md_path / "deletionTimestamp", m.deletion_timestamp);
    string_map(*md, "labels", md_path / "labels", m.labels);
    string_map(*md, "annotations", md_path / "annotations", m.annotations);
    each_object(*md, "ownerReferences", md_path / "ownerReferences", [&](V o, const Path& p, size_t) {
      OwnerReference r;
      str(o, "apiVersion", p / "apiVersion", r.api_version);
      str(o, "kind", p / "kind", r.kind);
      str(o, "name", p / "name", r.name);
      str(o, "uid", p / "uid", r.uid);
      boolean(o, "controller", p / "controller", r.controller);
      m.owner_references.push_back(std::move(r));
    });
  }

 private:
  std::optional<V> mistyped(const Path& path, std::string_view expected, V got) {
    wrong_type(path, expected, got);
    return std::nullopt;
  }

  /// The string at `obj.key`, or nothing (with a FieldError expecting `expected` when it is not a string).
  std::optional<std::string_view> string_at(V obj, std::string_view key, const Path& path,
                                            std::string_view expected) {
    std::optional<V> v = member(obj, key);
    if (!v) return std::nullopt;
    if (!v->is_string()) {
      wrong_type(path, expected, *v);
      return std::nullopt;
    }
    return v->string();
  }

  /// The string at `obj.key` read by `parse`; nothing when absent, with a FieldError when it is not a
  /// string or `parse` refuses it.
  std::optional<int64_t> parsed(V obj, std::string_view key, const Path& path, std::string_view expected,
                                Result<int64_t> (*parse)(std::string_view)) {
    std::optional<std::string_view> s = string_at(obj, key, path, expected);
    if (!s) return std::nullopt;
    Result<int64_t> value = parse(*s);
    if (!value) {
      fail(path, value.message());
      return std::nullopt;
    }
    return *value;
  }

  std::vector<FieldError>& errors_;
};

}  // namespace kai::model::json_detail
