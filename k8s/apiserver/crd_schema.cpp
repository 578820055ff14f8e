// Pruning and validation of custom resources against their CRD's openAPIV3Schema (crd_schema.hpp).
#include "k8s/apiserver/crd_schema.hpp"

#include <boost/regex.hpp>

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace kai::apiserver {
namespace {

/// A schema's `pattern`, compiled once per server process. The real server checks patterns with Go's
/// RE2; the ones CRDs use (label and name syntax) mean the same in Boost's Perl syntax. A pattern
/// that does not compile here is not checked (the real server refuses such a CRD when it is created).
const boost::regex* pattern_regex(const std::string& pattern) {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<boost::regex>> compiled;
  const std::lock_guard lock(mutex);
  auto [it, added] = compiled.try_emplace(pattern);
  if (added) {
    try {
      it->second = std::make_unique<boost::regex>(pattern, boost::regex::perl);
    } catch (const boost::regex_error&) {
      it->second = nullptr;
    }
  }
  return it->second.get();
}

/// Structural pruning as the real server does for custom resources: fields the schema does not
/// declare are dropped, unless x-kubernetes-preserve-unknown-fields.
void prune(Json& v, const Json& s) {
  if (!s.is_object()) return;
  const bool preserve = s.value("x-kubernetes-preserve-unknown-fields", false);
  if (v.is_object()) {
    auto props = s.find("properties");
    auto addl = s.find("additionalProperties");
    for (auto it = v.begin(); it != v.end();) {
      if (props != s.end() && props->contains(it.key())) {
        prune(it.value(), (*props)[it.key()]);
      } else if (addl != s.end() && addl->is_object()) {
        prune(it.value(), *addl);
      } else if (!preserve && !(addl != s.end() && addl->is_boolean() && addl->get<bool>())) {
        it = v.erase(it);
        continue;
      }
      ++it;
    }
  } else if (v.is_array()) {
    if (auto items = s.find("items"); items != s.end()) {
      for (auto& e : v) prune(e, *items);
    }
  }
}

/// Whether a CEL rule is the immutability transition rule `self == oldSelf`, spaces aside: the one
/// CEL rule kai-apiserver evaluates (README, kai-apiserver).
bool is_immutability_rule(const Json& rule) {
  if (!rule.is_string()) return false;
  std::string text = rule.get<std::string>();
  std::erase_if(text, [](char c) { return c == ' ' || c == '\t' || c == '\n'; });
  return text == "self==oldSelf";
}

/// Structural-schema validation of a custom resource, as the real server's OpenAPI validator: type,
/// required, enum, nullable, int-or-string, minimum / maximum, minItems / maxItems, minLength /
/// maxLength, pattern, and on an update (`old`: the stored value at the same path, null when there is
/// none) the `self == oldSelf` rules of x-kubernetes-validations. Appends "field: detail" causes.
void validate(const Json& v, const Json& s, const std::string& path,
              std::vector<std::pair<std::string, std::string>>& errs, const Json* old = nullptr) {
  if (!s.is_object()) return;
  if (v.is_null()) {
    if (!s.value("nullable", false) && s.contains("type")) {
      errs.emplace_back(path, "Invalid value: \"null\": " + path + " in body must be of type " +
                                  s["type"].get<std::string>() + ": \"null\"");
    }
    return;
  }
  const std::string type = s.value("type", "");
  const char* got = v.is_object()           ? "object"
                    : v.is_array()          ? "array"
                    : v.is_string()         ? "string"
                    : v.is_boolean()        ? "boolean"
                    : v.is_number_integer() ? "integer"
                                            : "number";
  if (auto rules = s.find("x-kubernetes-validations"); old != nullptr && rules != s.end() && rules->is_array()) {
    for (const auto& r : *rules) {
      if (!r.is_object() || !is_immutability_rule(r.value("rule", Json())) || v == *old) continue;
      errs.emplace_back(path, "Invalid value: \"" + std::string(got) + "\": " +
                                  r.value("message", std::string("failed rule: ") + r.value("rule", "")));
    }
  }
  const bool int_or_string = s.value("x-kubernetes-int-or-string", false);
  bool ok = type.empty() || type == got || (type == "number" && std::string(got) == "integer");
  if (int_or_string) ok = v.is_number_integer() || v.is_string();
  if (!ok) {
    errs.emplace_back(path, "Invalid value: \"" + std::string(got) + "\": " + path +
                                " in body must be of type " +
                                (int_or_string ? std::string("integer,string") : type) + ": \"" + got + "\"");
    return;
  }
  if (auto e = s.find("enum");
      e != s.end() && e->is_array() && std::find(e->begin(), e->end(), v) == e->end()) {
    std::string allowed;
    for (const auto& a : *e) allowed += (allowed.empty() ? "" : ", ") + a.dump();
    errs.emplace_back(path, "Unsupported value: " + v.dump() + ": supported values: " + allowed);
  }
  if (v.is_number()) {
    if (s.contains("minimum") && s["minimum"].is_number() && v.get<double>() < s["minimum"].get<double>()) {
      errs.emplace_back(path, "Invalid value: " + v.dump() + ": " + path +
                                  " in body should be greater than or equal to " + s["minimum"].dump());
    }
    if (s.contains("maximum") && s["maximum"].is_number() && v.get<double>() > s["maximum"].get<double>()) {
      errs.emplace_back(path, "Invalid value: " + v.dump() + ": " + path +
                                  " in body should be less than or equal to " + s["maximum"].dump());
    }
  }
  // Lengths of lists and strings, in the real server's wording.
  auto limit = [&](const char* key) -> std::optional<size_t> {
    auto it = s.find(key);
    if (it == s.end() || !it->is_number_unsigned()) return std::nullopt;
    return it->get<size_t>();
  };
  if (v.is_array()) {
    if (auto n = limit("minItems"); n && v.size() < *n) {
      errs.emplace_back(path, "Invalid value: " + std::to_string(v.size()) + ": " + path +
                                  " in body should have at least " + std::to_string(*n) + " items");
    }
    if (auto n = limit("maxItems"); n && v.size() > *n) {
      errs.emplace_back(path, "Too many: " + std::to_string(v.size()) + ": must have at most " +
                                  std::to_string(*n) + " items");
    }
  }
  if (v.is_string()) {
    const size_t chars = v.get_ref<const std::string&>().size();
    if (auto n = limit("minLength"); n && chars < *n) {
      errs.emplace_back(path, "Invalid value: " + v.dump() + ": " + path + " in body should be at least " +
                                  std::to_string(*n) + " chars long");
    }
    if (auto n = limit("maxLength"); n && chars > *n) {
      errs.emplace_back(path, "Too long: may not be longer than " + std::to_string(*n));
    }
    if (auto p = s.find("pattern"); p != s.end() && p->is_string()) {
      const boost::regex* re = pattern_regex(p->get_ref<const std::string&>());
      bool matches = true;
      try {
        matches = re == nullptr || boost::regex_search(v.get_ref<const std::string&>(), *re);
      } catch (const std::runtime_error&) {
        // Boost gives up on a match too costly to finish; RE2 never does. Not refused for that.
      }
      if (!matches) {
        errs.emplace_back(path, "Invalid value: " + v.dump() + ": " + path + " in body should match '" +
                                    p->get_ref<const std::string&>() + "'");
      }
    }
  }
  const std::string prefix = path.empty() ? "" : path + ".";
  if (v.is_object()) {
    for (const auto& req : s.value("required", Json::array())) {
      if (req.is_string() && !v.contains(req.get<std::string>())) {
        errs.emplace_back(prefix + req.get<std::string>(), "Required value");
      }
    }
    auto props = s.find("properties");
    auto addl = s.find("additionalProperties");
    for (auto it = v.begin(); it != v.end(); ++it) {
      if (path.empty() && (it.key() == "metadata" || it.key() == "apiVersion" || it.key() == "kind"))
        continue;
      const Json* old_child = nullptr;
      if (old != nullptr && old->is_object()) {
        if (auto o = old->find(it.key()); o != old->end()) old_child = &*o;
      }
      if (props != s.end() && props->contains(it.key())) {
        validate(it.value(), (*props)[it.key()], prefix + it.key(), errs, old_child);
      } else if (addl != s.end() && addl->is_object()) {
        validate(it.value(), *addl, prefix + it.key(), errs, old_child);
      }
    }
  } else if (v.is_array()) {
    if (auto items = s.find("items"); items != s.end()) {
      for (size_t i = 0; i < v.size(); ++i)
        validate(v[i], *items, path + "[" + std::to_string(i) + "]", errs);
    }
  }
}

}  // namespace

void check_custom(const ResourceInfo& r, Json& obj, const Json* old) {
  if (!r.schema.is_object()) return;
  Json m = obj["metadata"];
  prune(obj, r.schema);
  obj["metadata"] = m;
  obj["apiVersion"] = r.api_version();
  obj["kind"] = r.kind;
  std::vector<std::pair<std::string, std::string>> errs;
  validate(obj, r.schema, "", errs, old);
  if (errs.empty()) return;
  const std::string name = m.value("name", "");
  std::string msg;
  Json causes = Json::array();
  for (const auto& [field, detail] : errs) {
    msg += (msg.empty() ? "" : ", ") + field + ": " + detail;
    causes.push_back(
        {{"reason", detail.rfind("Required", 0) == 0 ? "FieldValueRequired" : "FieldValueInvalid"},
         {"message", detail},
         {"field", field}});
  }
  if (errs.size() > 1) msg = "[" + msg + "]";
  throw ApiError(422, "Invalid", r.kind + "." + r.group + " \"" + name + "\" is invalid: " + msg,
                 Json{{"name", name}, {"group", r.group}, {"kind", r.kind}, {"causes", causes}});
}

}  // namespace kai::apiserver
