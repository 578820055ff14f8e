// Query strings, path segments and request bodies for the router (request_io.hpp).
#include "k8s/apiserver/request_io.hpp"

#include <cctype>

#include "k8s/model/json_codec.hpp"

namespace kai::apiserver {
namespace {

std::string url_decode(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '+') {
      out += ' ';
    } else if (s[i] == '%' && i + 2 < s.size() && std::isxdigit(static_cast<unsigned char>(s[i + 1])) &&
               std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
      out += static_cast<char>(std::stoi(s.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

}  // namespace

std::map<std::string, std::string> parse_query(const std::string& q) {
  std::map<std::string, std::string> out;
  size_t pos = 0;
  while (pos < q.size()) {
    size_t amp = q.find('&', pos);
    std::string kv = q.substr(pos, amp == std::string::npos ? std::string::npos : amp - pos);
    size_t eq = kv.find('=');
    if (!kv.empty()) {
      out[url_decode(kv.substr(0, eq))] = eq == std::string::npos ? "" : url_decode(kv.substr(eq + 1));
    }
    if (amp == std::string::npos) break;
    pos = amp + 1;
  }
  return out;
}

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < path.size()) {
    size_t slash = path.find('/', pos);
    std::string seg = path.substr(pos, slash == std::string::npos ? std::string::npos : slash - pos);
    if (!seg.empty()) out.push_back(url_decode(seg));
    if (slash == std::string::npos) break;
    pos = slash + 1;
  }
  return out;
}

bool is_true(const std::map<std::string, std::string>& q, const char* key) {
  auto it = q.find(key);
  return it != q.end() && (it->second == "true" || it->second == "1");
}

std::string query_or(const std::map<std::string, std::string>& q, const char* key, const std::string& def) {
  auto it = q.find(key);
  return it == q.end() ? def : it->second;
}

Json parse_body(const http::HttpRequest& req) {
  const std::string ct = req.content_type.substr(0, req.content_type.find(';'));
  if (ct == "application/yaml") {
    auto j = model::yaml_to_json(req.body);
    if (!j.is_ok()) throw bad_request("error converting YAML to JSON: " + j.message());
    return j.value();
  }
  if (!ct.empty() && ct != "application/json" && ct != "*/*") {
    throw ApiError(415, "UnsupportedMediaType",
                   "the body of the request was in an unknown format - accepted media types include: "
                   "application/json, application/yaml, application/vnd.kubernetes.protobuf");
  }
  Json j = Json::parse(req.body, nullptr, false);
  if (j.is_discarded()) {
    throw bad_request(
        "the request body could not be decoded: invalid JSON (Object 'Kind' is missing or the "
        "document is malformed)");
  }
  return j;
}

}  // namespace kai::apiserver
