// YAML to JSON with yaml-cpp 0.7. yaml-cpp leaves scalars untyped, so this file resolves plain
// scalars with the YAML 1.2 core schema (what Kubernetes' sigs.k8s.io/yaml effectively does for
// manifests), and keeps every quoted or block scalar a string.

#include <yaml-cpp/yaml.h>

#include <charconv>
#include <cstdint>
#include <exception>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "k8s/model/json_codec.hpp"

namespace kai::model {
namespace {

using nlohmann::json;

/// Deeper documents are refused rather than risking the stack on hostile input.
constexpr int kMaxDepth = 256;

bool all_of(std::string_view s, bool (*pred)(char)) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!pred(c)) return false;
  }
  return true;
}

bool is_dec(char c) {
  return c >= '0' && c <= '9';
}
bool is_oct(char c) {
  return c >= '0' && c <= '7';
}
bool is_hex(char c) {
  return is_dec(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/// Core-schema float: [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?
bool is_core_float(std::string_view s) {
  size_t pos = 0;
  if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) ++pos;
  size_t int_digits = 0, frac_digits = 0;
  while (pos < s.size() && is_dec(s[pos])) ++pos, ++int_digits;
  if (pos < s.size() && s[pos] == '.') {
    ++pos;
    while (pos < s.size() && is_dec(s[pos])) ++pos, ++frac_digits;
  }
  if (int_digits == 0 && frac_digits == 0) return false;
  if (pos < s.size() && (s[pos] == 'e' || s[pos] == 'E')) {
    ++pos;
    if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) ++pos;
    size_t exp_digits = 0;
    while (pos < s.size() && is_dec(s[pos])) ++pos, ++exp_digits;
    if (exp_digits == 0) return false;
  }
  return pos == s.size();
}

/// Resolves a plain (unquoted) scalar to a JSON value with the YAML 1.2 core schema.
json resolve_plain(const std::string& s) {
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return nullptr;
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;

  std::string_view body = s;
  bool negative = false;
  if (body[0] == '+' || body[0] == '-') {
    negative = body[0] == '-';
    body.remove_prefix(1);
  }
  if (all_of(body, is_dec)) {
    int64_t i = 0;
    // from_chars does not take a leading '+'.
    const char* first = s.data() + (s[0] == '+' ? 1 : 0);
    if (auto r = std::from_chars(first, s.data() + s.size(), i);
        r.ec == std::errc() && r.ptr == s.data() + s.size()) {
      return i;
    }
    uint64_t u = 0;
    if (!negative) {
      if (auto r = std::from_chars(body.data(), body.data() + body.size(), u); r.ec == std::errc()) return u;
    }
    // Too large for 64 bits: fall through to a float, as JSON has no bigger integers.
  } else if (!negative && s[0] != '+' && body.size() > 2 && body[0] == '0' &&
             (body[1] == 'o' || body[1] == 'x')) {
    const bool hex = body[1] == 'x';
    const std::string_view digits = body.substr(2);
    uint64_t u = 0;
    if (all_of(digits, hex ? is_hex : is_oct)) {
      if (auto r = std::from_chars(digits.data(), digits.data() + digits.size(), u, hex ? 16 : 8);
          r.ec == std::errc()) {
        // Signed where it fits, so that 0x1F and 31 are the same JSON value.
        if (u <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return static_cast<int64_t>(u);
        return u;
      }
    }
    return s;
  }
  if (is_core_float(s)) {
    double d = 0;
    const char* first = s.data() + (s[0] == '+' ? 1 : 0);
    if (auto r = std::from_chars(first, s.data() + s.size(), d); r.ec == std::errc()) return d;
  }
  // .inf and .nan have no JSON form, so they stay strings like every other plain scalar.
  return s;
}

Status at_mark(const std::string& what, const YAML::Mark& mark) {
  if (mark.is_null() || mark.line < 0) return Status::error(what);
  return Status::error(what + " at line " + std::to_string(mark.line + 1));
}

Status convert(const YAML::Node& node, json& out, int depth) {
  if (depth > kMaxDepth) return at_mark("YAML nested too deeply", node.Mark());
  switch (node.Type()) {
    case YAML::NodeType::Undefined:
    case YAML::NodeType::Null:
      out = nullptr;
      return Status::ok();
    case YAML::NodeType::Scalar: {
      const std::string& tag = node.Tag();
      // "!" is yaml-cpp's tag for quoted and block scalars: they are strings whatever they spell.
      if (tag == "!" || tag == "tag:yaml.org,2002:str") {
        out = node.Scalar();
      } else {
        out = resolve_plain(node.Scalar());
      }
      return Status::ok();
    }
    case YAML::NodeType::Sequence: {
      out = json::array();
      for (const YAML::Node& item : node) {
        json v;
        if (Status s = convert(item, v, depth + 1); !s) return s;
        out.push_back(std::move(v));
      }
      return Status::ok();
    }
    case YAML::NodeType::Map: {
      out = json::object();
      for (auto it = node.begin(); it != node.end(); ++it) {
        if (!it->first.IsScalar()) return at_mark("YAML map key is not a scalar", it->first.Mark());
        json v;
        if (Status s = convert(it->second, v, depth + 1); !s) return s;
        out[it->first.Scalar()] = std::move(v);
      }
      return Status::ok();
    }
  }
  return Status::error("unknown YAML node type");
}

Status yaml_error(const YAML::Exception& e) {
  return at_mark("not valid YAML: " + e.msg, e.mark);
}

}  // namespace

Result<json> yaml_to_json(std::string_view yaml_document) {
  try {
    const YAML::Node root = YAML::Load(std::string(yaml_document));
    json out;
    if (Status s = convert(root, out, 0); !s) return s;
    return out;
  } catch (const YAML::Exception& e) {
    return yaml_error(e);
  } catch (const std::exception& e) {
    return Status::error(std::string("not valid YAML: ") + e.what());
  }
}

Result<std::vector<json>> yaml_documents_to_json(std::string_view yaml_stream) {
  try {
    const std::vector<YAML::Node> docs = YAML::LoadAll(std::string(yaml_stream));
    std::vector<json> out;
    out.reserve(docs.size());
    for (const YAML::Node& doc : docs) {
      if (doc.IsNull() || !doc.IsDefined()) continue;  // "---" with nothing after it
      json j;
      if (Status s = convert(doc, j, 0); !s) return s;
      out.push_back(std::move(j));
    }
    return out;
  } catch (const YAML::Exception& e) {
    return yaml_error(e);
  } catch (const std::exception& e) {
    return Status::error(std::string("not valid YAML: ") + e.what());
  }
}

}  // namespace kai::model
