// Router: the read-only endpoints a client looks at before any resource: health, /version, API
// discovery (/api, /apis, group-version resource lists) and the OpenAPI v3 kubectl reads.
#include <algorithm>
#include <functional>

#include "k8s/apiserver/request_io.hpp"
#include "k8s/apiserver/router.hpp"

namespace kai::apiserver {
namespace {

Json resource_entry(const std::string& name, const std::string& singular, bool namespaced,
                    const std::string& kind, std::vector<std::string> verbs,
                    const std::vector<std::string>& short_names) {
  Json e = {{"name", name},
            {"singularName", singular},
            {"namespaced", namespaced},
            {"kind", kind},
            {"verbs", std::move(verbs)}};
  if (!short_names.empty()) e["shortNames"] = short_names;
  return e;
}

const std::vector<std::string> kAllVerbs = {"create", "delete", "deletecollection", "get",
                                            "list",   "patch",  "update",           "watch"};

}  // namespace

HttpResponse Router::discovery(const std::string& path, bool& handled) {
  handled = true;
  if (path == "/healthz" || path == "/readyz" || path == "/livez") {
    HttpResponse r;
    r.content_type = "text/plain; charset=utf-8";
    r.body = "ok";
    return r;
  }
  if (path == "/version") {
    return json_response(200, Json{{"major", "1"},
                                   {"minor", "32"},
                                   {"gitVersion", "v1.32.0-kai"},
                                   {"gitCommit", "kai-apiserver"},
                                   {"gitTreeState", "clean"},
                                   {"buildDate", "2026-01-01T00:00:00Z"},
                                   {"goVersion", "c++20"},
                                   {"compiler", "gc"},
                                   {"platform", "linux/amd64"}});
  }
  const auto all = store_.resources();
  if (path == "/api") {
    return json_response(200,
                         Json{{"kind", "APIVersions"},
                              {"versions", {"v1"}},
                              {"serverAddressByClientCIDRs",
                               Json::array({{{"clientCIDR", "0.0.0.0/0"}, {"serverAddress", address_}}})}});
  }
  // group -> versions (in registration order of the first resource)
  std::map<std::string, std::vector<std::string>> groups;
  for (const auto& r : all) {
    if (r->group.empty()) continue;
    auto& v = groups[r->group];
    if (std::find(v.begin(), v.end(), r->version) == v.end()) v.push_back(r->version);
  }
  auto group_json = [&](const std::string& g) {
    Json versions = Json::array();
    for (const auto& v : groups[g]) versions.push_back({{"groupVersion", g + "/" + v}, {"version", v}});
    return Json{{"name", g}, {"versions", versions}, {"preferredVersion", versions[0]}};
  };
  if (path == "/apis") {
    Json list = Json::array();
    for (const auto& [g, v] : groups) list.push_back(group_json(g));
    return json_response(200, Json{{"kind", "APIGroupList"}, {"apiVersion", "v1"}, {"groups", list}});
  }
  const auto seg = split_path(path);
  if (seg.size() == 2 && seg[0] == "apis" && groups.count(seg[1])) {
    Json g = group_json(seg[1]);
    g["kind"] = "APIGroup";
    g["apiVersion"] = "v1";
    return json_response(200, g);
  }
  std::string group, version;
  if (seg.size() == 2 && seg[0] == "api") {
    version = seg[1];
  } else if (seg.size() == 3 && seg[0] == "apis") {
    group = seg[1];
    version = seg[2];
  } else {
    handled = false;
    return {};
  }
  Json resources = Json::array();
  bool any = false;
  for (const auto& r : all) {
    if (r->group != group || r->version != version) continue;
    any = true;
    resources.push_back(
        resource_entry(r->resource, r->singular, r->namespaced, r->kind, kAllVerbs, r->short_names));
    if (r->has_status) {
      resources.push_back(resource_entry(r->resource + "/status", "", r->namespaced, r->kind,
                                         {"get", "patch", "update"}, {}));
    }
    if (r->kind == "Pod" && r->group.empty()) {
      resources.push_back(resource_entry("pods/binding", "", true, "Binding", {"create"}, {}));
      Json ev = resource_entry("pods/eviction", "", true, "Eviction", {"create"}, {});
      ev["group"] = "policy";
      ev["version"] = "v1";
      resources.push_back(ev);
    }
  }
  if (!any) {
    handled = false;
    return {};
  }
  return json_response(200, Json{{"kind", "APIResourceList"},
                                 {"apiVersion", "v1"},
                                 {"groupVersion", group.empty() ? version : group + "/" + version},
                                 {"resources", resources}});
}

// OpenAPI v3, only as much as kubectl reads: per group-version, a PATCH operation per kind that
// declares the fieldValidation parameter, so kubectl validates server-side instead of asking for the
// v2 schema. No request body content types are listed, so `kubectl apply` computes strategic merge
// patches from its built-in types (and JSON merge patches for custom resources).
HttpResponse Router::openapi(const std::string& path, bool& handled) {
  handled = true;
  const auto all = store_.resources();
  std::map<std::string, std::vector<std::shared_ptr<const ResourceInfo>>> gvs;
  for (const auto& r : all) {
    gvs[r->group.empty() ? "api/" + r->version : "apis/" + r->group + "/" + r->version].push_back(r);
  }
  if (path == "/openapi/v3" || path == "/openapi/v3/") {
    Json paths = Json::object();
    for (const auto& [gv, rs] : gvs) {
      std::string sig;
      for (const auto& r : rs) sig += r->resource + r->kind;
      paths[gv] = {{"serverRelativeURL",
                    "/openapi/v3/" + gv + "?hash=" + std::to_string(std::hash<std::string>{}(sig))}};
    }
    return json_response(200, Json{{"paths", paths}});
  }
  const std::string gv = path.substr(std::string("/openapi/v3/").size());
  auto it = gvs.find(gv);
  if (it == gvs.end()) {
    handled = false;
    return {};
  }
  Json paths = Json::object();
  for (const auto& r : it->second) {
    const std::string base =
        "/" + gv + (r->namespaced ? "/namespaces/{namespace}/" : "/") + r->resource + "/{name}";
    Json op = {{"operationId", "patch" + r->kind},
               {"x-kubernetes-group-version-kind",
                {{"group", r->group}, {"version", r->version}, {"kind", r->kind}}},
               {"x-kubernetes-action", "patch"},
               {"parameters", Json::array({{{"name", "fieldValidation"},
                                            {"in", "query"},
                                            {"schema", {{"type", "string"}}},
                                            {"description", "Strict, Warn or Ignore"}}})},
               {"responses", {{"200", {{"description", "OK"}}}}}};
    paths[base] = {{"patch", op}};
  }
  HttpResponse r = json_response(200, Json{{"openapi", "3.0.0"},
                                           {"info", {{"title", "Kubernetes"}, {"version", "v1.32.0"}}},
                                           {"paths", paths},
                                           {"components", {{"schemas", Json::object()}}}});
  return r;
}

}  // namespace kai::apiserver
