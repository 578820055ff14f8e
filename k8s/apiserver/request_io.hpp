#pragma once
// The router's reading of requests (query string, URL-decoded path segments, a JSON or YAML body)
// and writing of answers (JSON bodies, Status errors). Internal to kai_apiserver.

#include <map>
#include <string>
#include <vector>

#include "k8s/apiserver/api_error.hpp"
#include "k8s/http/http_message.hpp"

namespace kai::apiserver {

/// The parameters of a query string ("a=1&b=x%20y"), URL-decoded; a later repeat wins.
std::map<std::string, std::string> parse_query(const std::string& q);

/// The non-empty, URL-decoded segments of a path.
std::vector<std::string> split_path(const std::string& path);

/// True when the query parameter `key` is "true" or "1".
bool is_true(const std::map<std::string, std::string>& q, const char* key);

/// The query parameter `key`, or `def` when absent.
std::string query_or(const std::map<std::string, std::string>& q, const char* key, const std::string& def = "");

/// Reads a request body as JSON, or YAML when the content type says so.
Json parse_body(const http::HttpRequest& req);

/// An answer with `status` and `body` as JSON.
inline http::HttpResponse json_response(int status, const Json& body) {
  http::HttpResponse r;
  r.status = status;
  r.body = body.dump();
  return r;
}

/// The Status answer of a failed request.
inline http::HttpResponse error_response(const ApiError& e) {
  return json_response(e.code, e.status());
}

/// 404 for a path that names nothing served.
inline ApiError path_not_found() {
  return {404, "NotFound", "the server could not find the requested resource"};
}

/// 405 for a verb the resource does not take.
inline ApiError method_not_allowed() {
  return {405, "MethodNotAllowed", "the server does not allow this method on the requested resource"};
}

}  // namespace kai::apiserver
