#pragma once
// Label selectors (=, ==, !=, in, notin, exists, !key) and field selectors (=, ==, !=) as the real
// server parses them from `labelSelector` / `fieldSelector` query parameters.

#include <string>
#include <vector>

#include "k8s/apiserver/api_error.hpp"

namespace kai::apiserver {

/// A parsed label selector; an empty one matches everything.
class LabelSelector {
 public:
  /// Parses `text`; throws ApiError 400 when it does not parse.
  static LabelSelector parse(const std::string& text);
  /// True when the object's metadata.labels satisfy every requirement.
  bool matches(const Json& object) const;
  bool empty() const { return reqs_.empty(); }

 private:
  struct Req {
    std::string key;
    std::string op;  // =, !=, in, notin, exists, !
    std::vector<std::string> values;
  };
  std::vector<Req> reqs_;
};

/// A parsed field selector restricted to the fields the real server supports for a kind.
class FieldSelector {
 public:
  /// Parses `text` for `kind`; throws ApiError 400 for a bad term or an unsupported field
  /// ("field label not supported: x").
  static FieldSelector parse(const std::string& text, const std::string& kind);
  bool matches(const Json& object) const;
  bool empty() const { return reqs_.empty(); }

 private:
  struct Req {
    std::string field;
    bool equal = true;
    std::string value;
  };
  std::vector<Req> reqs_;
};

}  // namespace kai::apiserver
