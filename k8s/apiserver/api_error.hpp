#pragma once
// ApiError: a failed request as the real API server reports it (code, Status reason, message).

#include <exception>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

namespace kai::apiserver {

using Json = nlohmann::json;

/// A failed request: thrown inside the library, turned into a `Status` body at the HTTP edge.
struct ApiError : std::exception {
  int code = 500;
  std::string reason;
  std::string message;
  Json details = Json::object();
  ApiError(int c, std::string r, std::string m, Json d = Json::object())
      : code(c), reason(std::move(r)), message(std::move(m)), details(std::move(d)) {}
  const char* what() const noexcept override { return message.c_str(); }
  /// The Kubernetes `Status` object for this error.
  Json status() const {
    Json s = {{"kind", "Status"},    {"apiVersion", "v1"}, {"metadata", Json::object()},
              {"status", "Failure"}, {"message", message}, {"reason", reason},
              {"code", code}};
    if (!details.empty()) s["details"] = details;
    return s;
  }
};

/// 400 BadRequest.
inline ApiError bad_request(std::string message) {
  return {400, "BadRequest", std::move(message)};
}

/// 404 NotFound for `name` of `qualified` resource ("pods", "deployments.apps").
inline ApiError not_found(const std::string& group, const std::string& resource, const std::string& name) {
  const std::string q = group.empty() ? resource : resource + "." + group;
  return {404, "NotFound", q + " \"" + name + "\" not found",
          Json{{"name", name}, {"group", group}, {"kind", resource}}};
}

/// 422 Invalid with one field cause, worded as the real server does.
inline ApiError invalid(const std::string& kind, const std::string& group, const std::string& name,
                        const std::string& field, const std::string& type, const std::string& detail) {
  const std::string msg = field + ": " + detail;
  Json d = {{"name", name},
            {"group", group},
            {"kind", kind},
            {"causes", Json::array({{{"reason", type}, {"message", detail}, {"field", field}}})}};
  return {422, "Invalid", kind + " \"" + name + "\" is invalid: " + msg, std::move(d)};
}

}  // namespace kai::apiserver
