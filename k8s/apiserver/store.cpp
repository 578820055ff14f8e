#include "k8s/apiserver/store.hpp"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <random>
#include <set>

#include "k8s/apiserver/patch.hpp"
#include "k8s/apiserver/table.hpp"
#include "k8s/model/time.hpp"

namespace kai::apiserver {
namespace {

std::string now_rfc3339() {
  return model::format_rfc3339(static_cast<int64_t>(std::time(nullptr)));
}

std::mt19937_64& rng() {
  static thread_local std::mt19937_64 gen{std::random_device{}()};
  return gen;
}

std::string new_uid() {
  static const char* kHex = "0123456789abcdef";
  std::string out;
  for (int i = 0; i < 32; ++i) {
    int v = static_cast<int>(rng()() & 15);
    if (i == 12) v = 4;
    if (i == 16) v = 8 | (v & 3);
    out += kHex[v];
    if (i == 7 || i == 11 || i == 15 || i == 19) out += '-';
  }
  return out;
}

std::string random_suffix() {
  static const std::string kChars = "bcdfghjklmnpqrstvwxz2456789";
  std::string s;
  for (int i = 0; i < 5; ++i) s += kChars[rng()() % kChars.size()];
  return s;
}

// Hand-written rather than std::regex: g++ 12 reports false maybe-uninitialized warnings inside
// <regex> under the sanitizers, and these run on every create.
bool is_dns_label(std::string_view s) {
  if (s.empty()) return false;
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (!alnum(s.front()) || !alnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(), [&](char c) { return alnum(c) || c == '-'; });
}

bool is_dns_subdomain(std::string_view s) {
  size_t pos = 0;
  while (true) {
    const size_t dot = s.find('.', pos);
    if (!is_dns_label(s.substr(pos, dot == std::string_view::npos ? std::string_view::npos : dot - pos)))
      return false;
    if (dot == std::string_view::npos) return true;
    pos = dot + 1;
  }
}

/// The real server's message for a name that is not a DNS-1123 subdomain / label; "" when valid.
std::string name_error(const std::string& name, bool label) {
  if (label) {
    if (name.size() > 63) return "must be no more than 63 characters";
    if (!is_dns_label(name)) {
      return "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
             "start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
             "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
    }
    return "";
  }
  if (name.size() > 253) return "must be no more than 253 characters";
  if (!is_dns_subdomain(name)) {
    return "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
           "and "
           "must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation "
           "is "
           "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
  }
  return "";
}

std::string obj_key(const std::string& ns, const std::string& name) {
  return ns + "/" + name;
}

std::string str_at(const Json& j, const char* a, const char* b = nullptr) {
  auto it = j.find(a);
  if (it == j.end()) return "";
  if (b == nullptr) return it->is_string() ? it->get<std::string>() : "";
  if (!it->is_object()) return "";
  auto jt = it->find(b);
  return (jt != it->end() && jt->is_string()) ? jt->get<std::string>() : "";
}

/// MicroTime values need exactly six fractional digits ("2006-01-02T15:04:05.000000Z07:00").
bool is_micro_time(const std::string& s) {
  // YYYY-MM-DDTHH:MM:SS.ffffff then Z or +HH:MM / -HH:MM
  static const std::string_view kShape = "dddd-dd-ddTdd:dd:dd.dddddd";
  if (s.size() < kShape.size() + 1) return false;
  for (size_t i = 0; i < kShape.size(); ++i) {
    if (kShape[i] == 'd' ? !std::isdigit(static_cast<unsigned char>(s[i])) : s[i] != kShape[i]) return false;
  }
  const std::string_view zone = std::string_view(s).substr(kShape.size());
  if (zone == "Z") return true;
  return zone.size() == 6 && (zone[0] == '+' || zone[0] == '-') &&
         std::isdigit(static_cast<unsigned char>(zone[1])) &&
         std::isdigit(static_cast<unsigned char>(zone[2])) && zone[3] == ':' &&
         std::isdigit(static_cast<unsigned char>(zone[4])) &&
         std::isdigit(static_cast<unsigned char>(zone[5]));
}

/// The object without metadata and status: what a "spec change" compares.
Json spec_part(const Json& obj) {
  Json out = obj;
  out.erase("metadata");
  out.erase("status");
  out.erase("apiVersion");
  out.erase("kind");
  return out;
}

std::string pod_qos(const Json& pod) {
  bool any = false;
  bool guaranteed = true;
  for (const char* list : {"containers", "initContainers"}) {
    if (!pod["spec"].contains(list) || !pod["spec"][list].is_array()) continue;
    for (const auto& c : pod["spec"][list]) {
      Json req = c.contains("resources") ? c["resources"].value("requests", Json::object()) : Json::object();
      Json lim = c.contains("resources") ? c["resources"].value("limits", Json::object()) : Json::object();
      if (!req.empty() || !lim.empty()) any = true;
      for (const char* r : {"cpu", "memory"}) {
        if (!lim.contains(r)) {
          guaranteed = false;
        } else if (req.contains(r) && req[r] != lim[r]) {
          guaranteed = false;
        }
      }
    }
  }
  if (!any) return "BestEffort";
  return guaranteed ? "Guaranteed" : "Burstable";
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

/// Structural-schema validation of a custom resource, as the real server's OpenAPI validator: type,
/// required, enum, nullable, int-or-string, minimum / maximum. Appends "field: detail" causes.
void validate(const Json& v, const Json& s, const std::string& path,
              std::vector<std::pair<std::string, std::string>>& errs) {
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
      if (props != s.end() && props->contains(it.key())) {
        validate(it.value(), (*props)[it.key()], prefix + it.key(), errs);
      } else if (addl != s.end() && addl->is_object()) {
        validate(it.value(), *addl, prefix + it.key(), errs);
      }
    }
  } else if (v.is_array()) {
    if (auto items = s.find("items"); items != s.end()) {
      for (size_t i = 0; i < v.size(); ++i)
        validate(v[i], *items, path + "[" + std::to_string(i) + "]", errs);
    }
  }
}

/// Prunes and validates a custom resource against its CRD schema; throws 422 with every cause.
void check_custom(const ResourceInfo& r, Json& obj) {
  if (!r.schema.is_object()) return;
  Json m = obj["metadata"];
  prune(obj, r.schema);
  obj["metadata"] = m;
  obj["apiVersion"] = r.api_version();
  obj["kind"] = r.kind;
  std::vector<std::pair<std::string, std::string>> errs;
  validate(obj, r.schema, "", errs);
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

ApiError conflict(const ResourceInfo& r, const std::string& name, const std::string& why) {
  return {409, "Conflict", "Operation cannot be fulfilled on " + r.qualified() + " \"" + name + "\": " + why,
          Json{{"name", name}, {"group", r.group}, {"kind", r.resource}}};
}

const char* kModified =
    "the object has been modified; please apply your changes to the latest version and try again";

std::string encode_continue(uint64_t rv, const std::string& start) {
  // base64 "RawURLEncoding", as the real server: safe in a query string without escaping.
  static const char* kB64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  const std::string in = Json{{"v", "meta.k8s.io/v1"}, {"rv", rv}, {"start", start}}.dump();
  std::string out;
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    uint32_t n = (uint8_t(in[i]) << 16) | (uint8_t(in[i + 1]) << 8) | uint8_t(in[i + 2]);
    for (int k = 18; k >= 0; k -= 6) out += kB64[(n >> k) & 63];
  }
  if (i < in.size()) {
    uint32_t n = uint8_t(in[i]) << 16;
    if (i + 1 < in.size()) n |= uint8_t(in[i + 1]) << 8;
    out += kB64[(n >> 18) & 63];
    out += kB64[(n >> 12) & 63];
    if (i + 1 < in.size()) out += kB64[(n >> 6) & 63];
  }
  return out;
}

bool decode_continue(const std::string& token, uint64_t& rv, std::string& start) {
  std::string bin;
  uint32_t acc = 0;
  int bits = 0;
  for (char c : token) {
    int v;
    if (c >= 'A' && c <= 'Z')
      v = c - 'A';
    else if (c >= 'a' && c <= 'z')
      v = c - 'a' + 26;
    else if (c >= '0' && c <= '9')
      v = c - '0' + 52;
    else if (c == '+' || c == '-')
      v = 62;
    else if (c == '/' || c == '_')
      v = 63;
    else if (c == '=')
      break;
    else
      return false;
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      bin += static_cast<char>((acc >> bits) & 0xff);
    }
  }
  Json j = Json::parse(bin, nullptr, false);
  if (!j.is_object() || !j.contains("rv") || !j["rv"].is_number_unsigned() || !j.contains("start") ||
      !j["start"].is_string()) {
    return false;
  }
  rv = j["rv"].get<uint64_t>();
  start = j["start"].get<std::string>();
  return true;
}

// events.k8s.io/v1 <-> core/v1 Event field names (the two API versions of one stored object).
const std::vector<std::pair<const char*, const char*>> kEventFields = {
    {"regarding", "involvedObject"},
    {"note", "message"},
    {"deprecatedSource", "source"},
    {"deprecatedFirstTimestamp", "firstTimestamp"},
    {"deprecatedLastTimestamp", "lastTimestamp"},
    {"deprecatedCount", "count"},
    {"reportingController", "reportingComponent"}};

void event_to_core(Json& e) {
  for (const auto& [from, to] : kEventFields) {
    if (e.contains(from)) {
      e[to] = e[from];
      e.erase(from);
    }
  }
  e["apiVersion"] = "v1";
}

Json event_from_core(Json e) {
  for (const auto& [to, from] : kEventFields) {
    if (e.contains(from)) {
      e[to] = e[from];
      e.erase(from);
    }
  }
  e["apiVersion"] = "events.k8s.io/v1";
  return e;
}

}  // namespace

// ------------------------------------------------------------------------------------ lifecycle

Store::Store(StoreOptions options) : options_(std::move(options)) {
  register_builtins();
  for (const char* ns : {"default", "kube-system", "kube-public", "kube-node-lease"}) {
    create(*find("", "v1", "namespaces"), "", Json{{"metadata", {{"name", ns}}}});
  }
  for (auto [name, value] : {std::pair<const char*, int64_t>{"system-cluster-critical", 2000000000},
                             std::pair<const char*, int64_t>{"system-node-critical", 2000001000}}) {
    create(*find("scheduling.k8s.io", "v1", "priorityclasses"), "",
           Json{{"metadata", {{"name", name}}}, {"value", value}, {"description", "built in"}});
  }
}

Store::~Store() {
  stop();
}

void Store::start() {
  std::lock_guard lock(mu_);
  if (running_) return;
  running_ = true;
  stopping_ = false;
  thread_ = std::thread([this] { tick(); });
}

void Store::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    cv_.notify_all();
  }
  if (thread_.joinable()) thread_.join();
  std::lock_guard lock(mu_);
  running_ = false;
  for (auto& [id, w] : watchers_) w.sink.close();
  watchers_.clear();
}

void Store::tick() {
  auto next_bookmark = std::chrono::steady_clock::now() + options_.bookmark_interval;
  std::unique_lock lock(mu_);
  while (!stopping_) {
    cv_.wait_for(lock, std::chrono::milliseconds(10));
    if (stopping_) break;
    const auto now = std::chrono::steady_clock::now();
    run_actions_locked(now);
    if (now >= next_bookmark) {
      next_bookmark = now + options_.bookmark_interval;
      for (auto& [id, w] : watchers_) {
        if (!w.bookmarks) continue;
        Json ev = {{"type", "BOOKMARK"},
                   {"object",
                    {{"kind", w.kind},
                     {"apiVersion", w.api_version},
                     {"metadata", {{"resourceVersion", std::to_string(rv_)}}}}}};
        w.sink.push(std::make_shared<const std::string>(ev.dump() + "\n"));
      }
    }
  }
}

// ------------------------------------------------------------------------------------ registry

void Store::add_resource_locked(std::shared_ptr<ResourceInfo> info) {
  resources_[info->group + "/" + info->version + "/" + info->resource] = std::move(info);
}

void Store::register_builtins() {
  auto add = [&](std::string group, std::string version, std::string resource, std::string singular,
                 std::string kind, bool namespaced, bool status, bool generation,
                 std::vector<std::string> short_names) {
    auto r = std::make_shared<ResourceInfo>();
    r->group = std::move(group);
    r->version = std::move(version);
    r->resource = std::move(resource);
    r->singular = std::move(singular);
    r->kind = kind;
    r->list_kind = kind + "List";
    r->namespaced = namespaced;
    r->has_status = status;
    r->has_generation = generation;
    r->short_names = std::move(short_names);
    add_resource_locked(std::move(r));
  };
  add("", "v1", "namespaces", "namespace", "Namespace", false, true, false, {"ns"});
  add("", "v1", "nodes", "node", "Node", false, true, false, {"no"});
  add("", "v1", "pods", "pod", "Pod", true, true, false, {"po"});
  add("", "v1", "events", "event", "Event", true, false, false, {"ev"});
  add("", "v1", "configmaps", "configmap", "ConfigMap", true, false, false, {"cm"});
  add("events.k8s.io", "v1", "events", "event", "Event", true, false, false, {"ev"});
  add("coordination.k8s.io", "v1", "leases", "lease", "Lease", true, false, false, {});
  add("scheduling.k8s.io", "v1", "priorityclasses", "priorityclass", "PriorityClass", false, false, false,
      {"pc"});
  add("apps", "v1", "deployments", "deployment", "Deployment", true, true, true, {"deploy"});
  add("apps", "v1", "replicasets", "replicaset", "ReplicaSet", true, true, true, {"rs"});
  add("batch", "v1", "jobs", "job", "Job", true, true, true, {});
  // The kinds deploy/ installs, stored without kind-specific rules, so that the manifests can be
  // applied to this server as they would be to a real cluster.
  add("", "v1", "serviceaccounts", "serviceaccount", "ServiceAccount", true, false, false, {"sa"});
  add("", "v1", "secrets", "secret", "Secret", true, false, false, {});
  add("", "v1", "services", "service", "Service", true, true, false, {"svc"});
  add("apps", "v1", "statefulsets", "statefulset", "StatefulSet", true, true, true, {"sts"});
  add("policy", "v1", "poddisruptionbudgets", "poddisruptionbudget", "PodDisruptionBudget", true, true,
      true, {"pdb"});
  add("node.k8s.io", "v1", "runtimeclasses", "runtimeclass", "RuntimeClass", false, false, false, {});
  add("rbac.authorization.k8s.io", "v1", "clusterroles", "clusterrole", "ClusterRole", false, false,
      false, {});
  add("rbac.authorization.k8s.io", "v1", "clusterrolebindings", "clusterrolebinding",
      "ClusterRoleBinding", false, false, false, {});
  add("rbac.authorization.k8s.io", "v1", "roles", "role", "Role", true, false, false, {});
  add("rbac.authorization.k8s.io", "v1", "rolebindings", "rolebinding", "RoleBinding", true, false,
      false, {});
  add("admissionregistration.k8s.io", "v1", "mutatingwebhookconfigurations",
      "mutatingwebhookconfiguration", "MutatingWebhookConfiguration", false, false, true, {});
  add("admissionregistration.k8s.io", "v1", "validatingwebhookconfigurations",
      "validatingwebhookconfiguration", "ValidatingWebhookConfiguration", false, false, true, {});
  add("apiextensions.k8s.io", "v1", "customresourcedefinitions", "customresourcedefinition",
      "CustomResourceDefinition", false, true, true, {"crd", "crds"});
}

std::shared_ptr<const ResourceInfo> Store::find(const std::string& group, const std::string& version,
                                                const std::string& resource) const {
  std::lock_guard lock(mu_);
  auto it = resources_.find(group + "/" + version + "/" + resource);
  return it == resources_.end() ? nullptr : it->second;
}

std::vector<std::shared_ptr<const ResourceInfo>> Store::resources() const {
  std::lock_guard lock(mu_);
  std::vector<std::shared_ptr<const ResourceInfo>> out;
  for (const auto& [k, r] : resources_) out.push_back(r);
  return out;
}

const ResourceInfo* Store::find_any_version_locked(const std::string& storage_key) const {
  for (const auto& [k, r] : resources_) {
    if (r->storage_key() == storage_key) return r.get();
  }
  return nullptr;
}

void Store::register_crd_locked(const Json& crd) {
  const Json& spec = crd["spec"];
  const Json& names = spec["names"];
  for (const auto& v : spec["versions"]) {
    if (!v.value("served", true)) continue;
    auto r = std::make_shared<ResourceInfo>();
    r->group = spec.value("group", "");
    r->version = v.value("name", "");
    r->resource = names.value("plural", "");
    r->singular = names.value("singular", "");
    r->kind = names.value("kind", "");
    r->list_kind = names.value("listKind", r->kind + "List");
    if (names.contains("shortNames")) r->short_names = names["shortNames"].get<std::vector<std::string>>();
    r->namespaced = spec.value("scope", "Namespaced") == "Namespaced";
    r->has_status = v.contains("subresources") && v["subresources"].contains("status");
    r->has_generation = true;
    r->custom = true;
    if (v.contains("schema")) r->schema = v["schema"].value("openAPIV3Schema", Json());
    if (v.contains("additionalPrinterColumns")) r->printer_columns = v["additionalPrinterColumns"];
    add_resource_locked(std::move(r));
  }
}

void Store::unregister_crd_locked(const Json& crd) {
  const Json& spec = crd["spec"];
  const std::string group = spec.value("group", "");
  const std::string plural = spec["names"].value("plural", "");
  for (auto it = resources_.begin(); it != resources_.end();) {
    if (it->second->group == group && it->second->resource == plural) {
      it = resources_.erase(it);
    } else {
      ++it;
    }
  }
}

void Store::create_crd(const Json& crd) {
  auto r = find("apiextensions.k8s.io", "v1", "customresourcedefinitions");
  create(*r, "", crd);
}

// ------------------------------------------------------------------------------------ helpers

Json Store::output(const ResourceInfo& r, const Json& stored) const {
  if (r.group == "events.k8s.io") return event_from_core(stored);
  if (str_at(stored, "apiVersion") == r.api_version() && str_at(stored, "kind") == r.kind) return stored;
  Json out = stored;
  out["apiVersion"] = r.api_version();
  out["kind"] = r.kind;
  return out;
}

void Store::check_namespace_locked(const ResourceInfo& r, const std::string& ns) const {
  if (!r.namespaced) return;
  const auto& nss = objects_.find("/namespaces");
  if (nss == objects_.end() || !nss->second.count(obj_key("", ns))) {
    throw not_found("", "namespaces", ns);
  }
}

void Store::emit_locked(const std::string& storage_key, const std::string& type,
                        std::shared_ptr<const Json> obj, std::shared_ptr<const Json> old) {
  Event e{rv_, storage_key, type, std::move(obj), std::move(old)};
  LineCache cache;
  for (auto& [id, w] : watchers_) deliver_locked(w, e, cache);
  history_.push_back(std::move(e));
  while (history_.size() > options_.history_limit) {
    history_start_ = history_.front().rv;
    history_.pop_front();
  }
}

std::shared_ptr<const std::string> Store::line_locked(const Watcher& w, const std::string& type,
                                                      const Json& obj) {
  Json ev = {{"type", type}, {"object", nullptr}};
  if (w.table && w.info) {
    ev["object"] = to_table(*w.info, output(*w.info, obj));
  } else if (w.api_version == "events.k8s.io/v1") {
    ev["object"] = event_from_core(obj);
  } else if (str_at(obj, "apiVersion") == w.api_version) {
    ev["object"] = obj;
  } else {
    Json o = obj;
    o["apiVersion"] = w.api_version;
    ev["object"] = std::move(o);
  }
  return std::make_shared<const std::string>(ev.dump() + "\n");
}

void Store::deliver_locked(Watcher& w, const Event& e, LineCache& cache) {
  if (e.storage_key != w.storage_key) return;
  auto matches = [&](const Json* o) {
    if (o == nullptr) return false;
    if (!w.ns.empty() && str_at(*o, "metadata", "namespace") != w.ns) return false;
    return w.labels.matches(*o) && w.fields.matches(*o);
  };
  std::string type = e.type;
  if (e.type == "MODIFIED") {
    const bool now = matches(e.object.get());
    const bool before = matches(e.old.get());
    if (!now && !before) return;
    if (now && !before) type = "ADDED";
    if (!now && before) type = "DELETED";
  } else if (!matches(e.object.get())) {
    return;
  }
  auto& line = cache[w.api_version + "|" + type + (w.table ? "|table" : "")];
  if (!line) line = line_locked(w, type, *e.object);
  w.sink.push(line);
}

// ------------------------------------------------------------------------------------ create

namespace {
/// Sets a flag for one scope.
struct FlagScope {
  bool& flag;
  FlagScope(bool& f, bool v) : flag(f) { flag = v; }
  ~FlagScope() { flag = false; }
};
}  // namespace

Json Store::create(const ResourceInfo& r, const std::string& ns, Json body, bool dry_run) {
  std::lock_guard lock(mu_);
  FlagScope scope(dry_run_, dry_run);
  return output(r, create_locked(r, ns, std::move(body)));
}

void Store::admit_pod_locked(Json& pod, const Json* old) {
  const std::string name = str_at(pod, "metadata", "name");
  Json& spec = pod["spec"];
  if (old != nullptr) return;
  if (!spec.is_object() || !spec.contains("containers") || !spec["containers"].is_array() ||
      spec["containers"].empty()) {
    throw invalid("Pod", "", name, "spec.containers", "FieldValueRequired", "Required value");
  }
  for (size_t i = 0; i < spec["containers"].size(); ++i) {
    Json& c = spec["containers"][i];
    const std::string f = "spec.containers[" + std::to_string(i) + "]";
    if (!c.is_object() || str_at(c, "name").empty()) {
      throw invalid("Pod", "", name, f + ".name", "FieldValueRequired", "Required value");
    }
    if (str_at(c, "image").empty()) {
      throw invalid("Pod", "", name, f + ".image", "FieldValueRequired", "Required value");
    }
    if (!c.contains("terminationMessagePath")) c["terminationMessagePath"] = "/dev/termination-log";
    if (!c.contains("terminationMessagePolicy")) c["terminationMessagePolicy"] = "File";
    if (!c.contains("imagePullPolicy")) c["imagePullPolicy"] = "IfNotPresent";
    if (!c.contains("resources")) c["resources"] = Json::object();
  }
  if (!spec.contains("schedulerName")) spec["schedulerName"] = "default-scheduler";
  if (!spec.contains("restartPolicy")) spec["restartPolicy"] = "Always";
  if (!spec.contains("terminationGracePeriodSeconds")) spec["terminationGracePeriodSeconds"] = 30;
  if (!spec.contains("dnsPolicy")) spec["dnsPolicy"] = "ClusterFirst";
  if (!spec.contains("securityContext")) spec["securityContext"] = Json::object();
  if (!spec.contains("enableServiceLinks")) spec["enableServiceLinks"] = true;
  // The Priority admission plugin: priority and preemptionPolicy come from the PriorityClass.
  const std::string pc = str_at(spec, "priorityClassName");
  const auto& pcs = objects_["scheduling.k8s.io/priorityclasses"];
  std::shared_ptr<const Json> cls;
  if (!pc.empty()) {
    auto it = pcs.find(obj_key("", pc));
    if (it == pcs.end()) {
      throw ApiError(403, "Forbidden",
                     "pods \"" + name + "\" is forbidden: no PriorityClass with name " + pc + " was found",
                     Json{{"name", name}, {"kind", "pods"}});
    }
    cls = it->second;
  } else {
    for (const auto& [k, c] : pcs) {
      if (c->value("globalDefault", false)) cls = c;
    }
  }
  const int64_t prio = cls ? cls->value("value", int64_t{0}) : 0;
  if (spec.contains("priority") && spec["priority"] != prio) {
    throw ApiError(403, "Forbidden",
                   "pods \"" + name + "\" is forbidden: the integer value of priority (" +
                       spec["priority"].dump() +
                       ") must not be provided in pod spec; priority admission controller computed " +
                       std::to_string(prio) + " from the given PriorityClass name",
                   Json{{"name", name}, {"kind", "pods"}});
  }
  spec["priority"] = prio;
  if (cls && !pc.empty()) spec["priorityClassName"] = pc;
  if (cls && cls->contains("preemptionPolicy")) {
    spec["preemptionPolicy"] = (*cls)["preemptionPolicy"];
  } else if (!spec.contains("preemptionPolicy")) {
    spec["preemptionPolicy"] = "PreemptLowerPriority";
  }
  // The RuntimeClass admission plugin (after Priority, as the real server orders them): a pod may
  // name only a RuntimeClass that exists, and takes its pod overhead.
  const std::string rc = str_at(spec, "runtimeClassName");
  if (!rc.empty()) {
    const auto& rcs = objects_["node.k8s.io/runtimeclasses"];
    auto it = rcs.find(obj_key("", rc));
    if (it == rcs.end()) {
      throw ApiError(403, "Forbidden",
                     "pods \"" + name + "\" is forbidden: pod rejected: RuntimeClass \"" + rc + "\" not found",
                     Json{{"name", name}, {"kind", "pods"}});
    }
    const Json* fixed = nullptr;
    if (auto o = it->second->find("overhead"); o != it->second->end() && o->is_object()) {
      if (auto f = o->find("podFixed"); f != o->end() && f->is_object()) fixed = &*f;
    }
    if (fixed != nullptr) {
      if (spec.contains("overhead") && spec["overhead"] != *fixed) {
        throw ApiError(403, "Forbidden",
                       "pods \"" + name +
                           "\" is forbidden: pod rejected: Pod's Overhead doesn't match RuntimeClass's defined "
                           "Overhead",
                       Json{{"name", name}, {"kind", "pods"}});
      }
      spec["overhead"] = *fixed;
    } else if (spec.contains("overhead")) {
      throw ApiError(403, "Forbidden",
                     "pods \"" + name +
                         "\" is forbidden: pod rejected: Pod Overhead set without corresponding RuntimeClass "
                         "defined Overhead",
                     Json{{"name", name}, {"kind", "pods"}});
    }
  }
  pod["status"] = Json{{"phase", "Pending"}, {"qosClass", pod_qos(pod)}};
}

Json Store::create_locked(const ResourceInfo& r, const std::string& ns, Json body) {
  if (!body.is_object()) throw bad_request("the body of the request is not a JSON object");
  const std::string kind = str_at(body, "kind");
  const std::string api_version = str_at(body, "apiVersion");
  if (!kind.empty() && kind != r.kind) {
    throw bad_request("the kind in the data (" + kind + ") does not match the expected kind (" + r.kind +
                      ")");
  }
  if (!api_version.empty() && api_version != r.api_version()) {
    throw bad_request("the API version in the data (" + api_version +
                      ") does not match the expected API version (" + r.api_version() + ")");
  }
  if (!body.contains("metadata") || !body["metadata"].is_object()) body["metadata"] = Json::object();
  Json& meta = body["metadata"];
  std::string name = str_at(meta, "name");
  if (name.empty() && !str_at(meta, "generateName").empty()) {
    name = str_at(meta, "generateName") + random_suffix();
    meta["name"] = name;
  }
  if (name.empty()) {
    throw invalid(r.kind, r.group, "", "metadata.name", "FieldValueRequired",
                  "Required value: name or generateName is required");
  }
  if (r.namespaced) {
    const std::string body_ns = str_at(meta, "namespace");
    if (!body_ns.empty() && body_ns != ns) {
      throw bad_request(
          "the namespace of the provided object does not match the namespace sent on the request");
    }
    meta["namespace"] = ns;
  } else {
    meta.erase("namespace");
  }
  if (std::string err = name_error(name, r.kind == "Namespace"); !err.empty()) {
    throw invalid(r.kind, r.group, name, "metadata.name", "FieldValueInvalid",
                  "Invalid value: \"" + name + "\": " + err);
  }
  check_namespace_locked(r, ns);
  body["apiVersion"] = r.api_version();
  body["kind"] = r.kind;

  // Kind-specific admission and validation.
  if (r.custom) {
    if (r.has_status) body.erase("status");
    check_custom(r, body);
  } else if (r.kind == "Pod") {
    admit_pod_locked(body, nullptr);
  } else if (r.kind == "Namespace") {
    body["status"] = Json{{"phase", "Active"}};
    body["spec"] = Json{{"finalizers", Json::array({"kubernetes"})}};
    if (!meta.contains("labels") || !meta["labels"].is_object()) meta["labels"] = Json::object();
    meta["labels"]["kubernetes.io/metadata.name"] = name;
  } else if (r.kind == "Deployment" || r.kind == "ReplicaSet" || r.kind == "Job") {
    body.erase("status");
  } else if (r.kind == "Lease") {
    for (const char* f : {"renewTime", "acquireTime"}) {
      if (body.contains("spec") && body["spec"].contains(f) && !body["spec"][f].is_null() &&
          !(body["spec"][f].is_string() && is_micro_time(body["spec"][f].get<std::string>()))) {
        throw bad_request("Lease in version \"v1\" cannot be handled as a Lease: parsing time " +
                          body["spec"][f].dump() + " as \"2006-01-02T15:04:05.000000Z07:00\": cannot parse");
      }
    }
  } else if (r.kind == "Event") {
    if (body.contains("eventTime") && !body["eventTime"].is_null() &&
        !(body["eventTime"].is_string() && is_micro_time(body["eventTime"].get<std::string>()))) {
      throw bad_request("Event in version \"" + r.version + "\" cannot be handled as a Event: parsing time " +
                        body["eventTime"].dump() + " as \"2006-01-02T15:04:05.000000Z07:00\": cannot parse");
    }
    if (r.group == "events.k8s.io") {
      for (const char* f : {"eventTime", "reportingController", "reportingInstance", "action", "reason"}) {
        if (!body.contains(f) || body[f].is_null() ||
            (body[f].is_string() && body[f].get<std::string>().empty())) {
          throw invalid("Event", r.group, name, f, "FieldValueRequired", "Required value");
        }
      }
      event_to_core(body);
    }
  } else if (r.kind == "PriorityClass") {
    if (!body.contains("value") || !body["value"].is_number_integer()) {
      throw invalid("PriorityClass", r.group, name, "value", "FieldValueRequired", "Required value");
    }
  } else if (r.kind == "RuntimeClass") {
    const std::string handler = str_at(body, "handler");
    if (handler.empty()) throw invalid("RuntimeClass", r.group, name, "handler", "FieldValueRequired", "Required value");
    if (std::string err = name_error(handler, true); !err.empty()) {
      throw invalid("RuntimeClass", r.group, name, "handler", "FieldValueInvalid",
                    "Invalid value: \"" + handler + "\": " + err);
    }
  } else if (r.kind == "CustomResourceDefinition") {
    const Json spec = body.value("spec", Json::object());
    const std::string group = spec.value("group", "");
    const std::string plural = spec.contains("names") ? spec["names"].value("plural", "") : "";
    if (group.empty() || plural.empty() || spec.value("versions", Json::array()).empty()) {
      throw invalid("CustomResourceDefinition", r.group, name, "spec", "FieldValueRequired",
                    "Required value: group, names.plural and versions are required");
    }
    if (name != plural + "." + group) {
      throw invalid("CustomResourceDefinition", r.group, name, "metadata.name", "FieldValueInvalid",
                    "Invalid value: \"" + name + "\": must be spec.names.plural+\".\"+spec.group");
    }
    std::string storage;
    for (const auto& v : spec["versions"]) {
      if (v.value("storage", false)) storage = v.value("name", "");
    }
    body["status"] = Json{{"acceptedNames", spec["names"]},
                          {"conditions", Json::array({{{"type", "NamesAccepted"},
                                                       {"status", "True"},
                                                       {"reason", "NoConflicts"},
                                                       {"message", "no conflicts found"},
                                                       {"lastTransitionTime", now_rfc3339()}},
                                                      {{"type", "Established"},
                                                       {"status", "True"},
                                                       {"reason", "InitialNamesAccepted"},
                                                       {"message", "the initial names have been accepted"},
                                                       {"lastTransitionTime", now_rfc3339()}}})},
                          {"storedVersions", Json::array({storage})}};
  }

  auto& objs = objects_[r.storage_key()];
  const std::string key = obj_key(r.namespaced ? ns : "", name);
  if (objs.count(key)) {
    throw ApiError(409, "AlreadyExists", r.qualified() + " \"" + name + "\" already exists",
                   Json{{"name", name}, {"group", r.group}, {"kind", r.resource}});
  }
  meta.erase("deletionTimestamp");
  meta.erase("deletionGracePeriodSeconds");
  meta.erase("managedFields");
  meta["uid"] = new_uid();
  meta["creationTimestamp"] = now_rfc3339();
  if (r.has_generation) {
    meta["generation"] = 1;
  } else {
    meta.erase("generation");
  }
  if (dry_run_) return body;
  meta["resourceVersion"] = next_rv_locked();
  if (r.kind == "CustomResourceDefinition") register_crd_locked(body);
  auto stored = std::make_shared<const Json>(std::move(body));
  objs[key] = stored;
  emit_locked(r.storage_key(), "ADDED", stored, nullptr);
  if (r.kind == "Pod" && options_.kubelet && !str_at((*stored)["spec"], "nodeName").empty()) {
    schedule_locked("run", *stored);
  }
  return *stored;
}

// ------------------------------------------------------------------------------------ read

Json Store::get(const ResourceInfo& r, const std::string& ns, const std::string& name) const {
  std::lock_guard lock(mu_);
  auto objs = objects_.find(r.storage_key());
  const std::string key = obj_key(r.namespaced ? ns : "", name);
  if (objs == objects_.end() || !objs->second.count(key)) throw not_found(r.group, r.resource, name);
  return output(r, *objs->second.at(key));
}

Json Store::list(const ResourceInfo& r, const std::string& ns, const ListOptions& opt) const {
  const LabelSelector labels = LabelSelector::parse(opt.label_selector);
  const FieldSelector fields = FieldSelector::parse(opt.field_selector, r.kind);
  std::lock_guard lock(mu_);
  uint64_t list_rv = rv_;
  std::string start;
  if (!opt.continue_token.empty()) {
    if (!decode_continue(opt.continue_token, list_rv, start)) {
      throw bad_request(
          "continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)");
    }
    if (list_rv < history_start_) {
      throw ApiError(
          410, "Expired",
          "The provided continue parameter is too old to display a consistent list result. You can start "
          "a new list without the continue parameter, or use the continue token in this response to "
          "retrieve the remainder of the results. Continuing with the provided token results in an "
          "inconsistent list - objects that were created, modified, or deleted between the time the "
          "first chunk was returned and now may show up in the list.");
    }
  }
  // resourceVersion=0 is served from the watch cache, which ignores limit.
  const int64_t limit = opt.resource_version == "0" ? 0 : opt.limit;
  Json items = Json::array();
  std::string last_key;
  int64_t remaining = 0;
  bool more = false;
  auto objs = objects_.find(r.storage_key());
  // A continuation reads the snapshot at the first page's resourceVersion, as etcd does: the
  // current objects with every later change undone from the history (newest first).
  Objects snapshot;
  const Objects* view = objs == objects_.end() ? nullptr : &objs->second;
  if (list_rv < rv_ && view != nullptr) {
    snapshot = *view;
    for (auto e = history_.rbegin(); e != history_.rend() && e->rv > list_rv; ++e) {
      if (e->storage_key != r.storage_key()) continue;
      const std::string key = obj_key(r.namespaced ? str_at(*e->object, "metadata", "namespace") : "",
                                      str_at(*e->object, "metadata", "name"));
      if (e->type == "ADDED") {
        snapshot.erase(key);
      } else if (e->old) {
        snapshot[key] = e->old;
      }
    }
    view = &snapshot;
  }
  if (view != nullptr) {
    const std::string prefix = r.namespaced && !ns.empty() ? ns + "/" : "";
    auto it = start.empty() ? view->lower_bound(prefix) : view->upper_bound(start);
    for (; it != view->end(); ++it) {
      if (!prefix.empty() && it->first.compare(0, prefix.size(), prefix) != 0) break;
      const Json& o = *it->second;
      if (!labels.matches(o) || !fields.matches(o)) continue;
      if (limit > 0 && static_cast<int64_t>(items.size()) >= limit) {
        more = true;
        ++remaining;
        continue;
      }
      items.push_back(output(r, o));
      last_key = it->first;
    }
  }
  Json meta = {{"resourceVersion", std::to_string(list_rv)}};
  if (more) {
    meta["continue"] = encode_continue(list_rv, last_key);
    if (labels.empty() && fields.empty()) meta["remainingItemCount"] = remaining;
  }
  return Json{{"kind", r.list_kind},
              {"apiVersion", r.api_version()},
              {"metadata", meta},
              {"items", std::move(items)}};
}

// ------------------------------------------------------------------------------------ update

Json Store::update(const ResourceInfo& r, const std::string& ns, const std::string& name, Json body,
                   const std::string& subresource, bool dry_run) {
  std::lock_guard lock(mu_);
  FlagScope scope(dry_run_, dry_run);
  return output(r, update_locked(r, ns, name, std::move(body), subresource));
}

Json Store::update_locked(const ResourceInfo& r, const std::string& ns, const std::string& name, Json body,
                          const std::string& subresource) {
  if (!body.is_object()) throw bad_request("the body of the request is not a JSON object");
  if (r.group == "events.k8s.io") event_to_core(body);
  const std::string kind = str_at(body, "kind");
  if (!kind.empty() && kind != r.kind) {
    throw bad_request("the kind in the data (" + kind + ") does not match the expected kind (" + r.kind +
                      ")");
  }
  if (!body.contains("metadata") || !body["metadata"].is_object()) body["metadata"] = Json::object();
  const std::string body_name = str_at(body, "metadata", "name");
  if (body_name != name) {
    throw bad_request("the name of the object (" + body_name + ") does not match the name on the URL (" +
                      name + ")");
  }
  if (r.namespaced) {
    const std::string body_ns = str_at(body, "metadata", "namespace");
    if (!body_ns.empty() && body_ns != ns) {
      throw bad_request(
          "the namespace of the provided object does not match the namespace sent on the request");
    }
  }
  auto& objs = objects_[r.storage_key()];
  const std::string key = obj_key(r.namespaced ? ns : "", name);
  auto it = objs.find(key);
  if (it == objs.end()) throw not_found(r.group, r.resource, name);
  const Json& old = *it->second;
  const std::string want_rv = str_at(body, "metadata", "resourceVersion");
  if (!want_rv.empty() && want_rv != str_at(old, "metadata", "resourceVersion")) {
    throw conflict(r, name, kModified);
  }
  Json next;
  if (subresource == "status") {
    next = old;
    if (body.contains("status")) {
      next["status"] = body["status"];
    } else {
      next.erase("status");
    }
  } else {
    next = std::move(body);
    next["apiVersion"] = old["apiVersion"];
    next["kind"] = r.kind;
    Json& meta = next["metadata"];
    for (const char* f : {"uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds",
                          "generation", "namespace"}) {
      if (old["metadata"].contains(f)) {
        meta[f] = old["metadata"][f];
      } else {
        meta.erase(f);
      }
    }
    meta.erase("managedFields");
    if (r.has_status) {
      if (old.contains("status")) {
        next["status"] = old["status"];
      } else {
        next.erase("status");
      }
    }
    if (r.kind == "Pod") {
      // Pod spec is immutable except images, activeDeadlineSeconds, added tolerations and removed
      // scheduling gates.
      Json a = old.value("spec", Json::object());
      Json b = next.value("spec", Json::object());
      for (const char* list : {"containers", "initContainers"}) {
        if (a.contains(list) && b.contains(list) && a[list].is_array() && b[list].is_array() &&
            a[list].size() == b[list].size()) {
          for (size_t i = 0; i < a[list].size(); ++i) {
            if (b[list][i].is_object() && b[list][i].contains("image"))
              a[list][i]["image"] = b[list][i]["image"];
          }
        }
      }
      if (b.contains("activeDeadlineSeconds")) a["activeDeadlineSeconds"] = b["activeDeadlineSeconds"];
      if (b.contains("tolerations")) {
        bool superset = true;
        for (const auto& t : a.value("tolerations", Json::array())) {
          if (std::find(b["tolerations"].begin(), b["tolerations"].end(), t) == b["tolerations"].end()) {
            superset = false;
          }
        }
        if (superset) a["tolerations"] = b["tolerations"];
      }
      if (a.contains("schedulingGates")) {
        bool subset = true;
        for (const auto& g : b.value("schedulingGates", Json::array())) {
          if (std::find(a["schedulingGates"].begin(), a["schedulingGates"].end(), g) ==
              a["schedulingGates"].end()) {
            subset = false;
          }
        }
        if (subset) {
          if (b.contains("schedulingGates")) {
            a["schedulingGates"] = b["schedulingGates"];
          } else {
            a.erase("schedulingGates");
          }
        }
      }
      if (a != b) {
        throw invalid(
            "Pod", "", name, "spec", "FieldValueForbidden",
            "Forbidden: pod updates may not change fields other than `spec.containers[*].image`,"
            "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only "
            "additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set "
            "to 1 if it was previously negative)");
      }
    } else if (r.kind == "RuntimeClass" && next.value("handler", Json()) != old.value("handler", Json())) {
      throw invalid("RuntimeClass", r.group, name, "handler", "FieldValueInvalid",
                    "Invalid value: " + next.value("handler", Json()).dump() + ": field is immutable");
    } else if (r.kind == "PriorityClass" && next.value("value", Json()) != old.value("value", Json())) {
      throw invalid("PriorityClass", r.group, name, "value", "FieldValueForbidden",
                    "Forbidden: may not be changed in an update.");
    } else if (r.kind == "Namespace") {
      next["spec"] = old.value("spec", Json::object());
    }
  }
  if (r.custom) check_custom(r, next);
  if (r.has_generation && spec_part(next) != spec_part(old)) {
    next["metadata"]["generation"] = old["metadata"].value("generation", int64_t{0}) + 1;
  }
  next["metadata"]["resourceVersion"] = old["metadata"]["resourceVersion"];
  if (next == old) return old;  // a no-op update writes nothing, as the real server
  if (dry_run_) return next;
  // An object whose deletion waits on finalizers goes once the last finalizer is removed.
  const bool terminating = next["metadata"].contains("deletionTimestamp");
  const bool no_finalizers =
      !next["metadata"].contains("finalizers") || next["metadata"]["finalizers"].empty();
  if (terminating && no_finalizers &&
      !(r.kind == "Pod" && !str_at(next["spec"], "nodeName").empty() &&
        next["metadata"].value("deletionGracePeriodSeconds", 0) > 0)) {
    next["metadata"]["resourceVersion"] = next_rv_locked();
    auto stored = std::make_shared<const Json>(std::move(next));
    auto prev = it->second;
    objs.erase(it);
    emit_locked(r.storage_key(), "DELETED", stored, prev);
    return *stored;
  }
  next["metadata"]["resourceVersion"] = next_rv_locked();
  auto prev = it->second;
  auto stored = std::make_shared<const Json>(std::move(next));
  it->second = stored;
  emit_locked(r.storage_key(), "MODIFIED", stored, prev);
  return *stored;
}

Json Store::patch(const ResourceInfo& r, const std::string& ns, const std::string& name,
                  const std::string& content_type, const std::string& body, const std::string& subresource,
                  bool dry_run) {
  Json p = Json::parse(body, nullptr, false);
  if (p.is_discarded()) throw bad_request("error decoding patch: invalid JSON");
  std::lock_guard lock(mu_);
  FlagScope scope(dry_run_, dry_run);
  auto& objs = objects_[r.storage_key()];
  auto it = objs.find(obj_key(r.namespaced ? ns : "", name));
  if (it == objs.end()) throw not_found(r.group, r.resource, name);
  const Json current = output(r, *it->second);
  Json next;
  if (content_type == "application/merge-patch+json") {
    next = apply_merge_patch(current, p);
  } else if (content_type == "application/json-patch+json") {
    next = apply_json_patch(current, p);
  } else if (content_type == "application/strategic-merge-patch+json" && !r.custom) {
    next = apply_strategic_merge_patch(current, p);
  } else {
    throw ApiError(415, "UnsupportedMediaType",
                   "the body of the request was in an unknown format - accepted media types include: "
                   "application/json-patch+json, application/merge-patch+json" +
                       std::string(r.custom ? "" : ", application/strategic-merge-patch+json"));
  }
  if (!next.is_object()) throw bad_request("the patched object is not a JSON object");
  if (!next.contains("metadata") || !next["metadata"].is_object()) next["metadata"] = Json::object();
  // Name and namespace cannot be patched; a resourceVersion in the patch is a precondition.
  next["metadata"]["name"] = name;
  return output(r, update_locked(r, ns, name, std::move(next), subresource));
}

// ------------------------------------------------------------------------------------ delete

Json Store::remove(const ResourceInfo& r, const std::string& ns, const std::string& name, const Json& options,
                   bool dry_run) {
  std::lock_guard lock(mu_);
  FlagScope scope(dry_run_, dry_run);
  return output(r, remove_locked(r, ns, name, options));
}

void Store::erase_locked(const ResourceInfo& r, const std::string& key) {
  auto& objs = objects_[r.storage_key()];
  auto it = objs.find(key);
  if (it == objs.end()) return;
  auto prev = it->second;
  Json last = *prev;
  objs.erase(it);
  last["metadata"]["resourceVersion"] = next_rv_locked();
  emit_locked(r.storage_key(), "DELETED", std::make_shared<const Json>(std::move(last)), prev);
}

Json Store::remove_locked(const ResourceInfo& r, const std::string& ns, const std::string& name,
                          const Json& options) {
  auto& objs = objects_[r.storage_key()];
  const std::string key = obj_key(r.namespaced ? ns : "", name);
  auto it = objs.find(key);
  if (it == objs.end()) throw not_found(r.group, r.resource, name);
  const Json old = *it->second;
  if (options.is_object() && options.contains("preconditions") && options["preconditions"].is_object()) {
    const Json& pre = options["preconditions"];
    const std::string uid = str_at(pre, "uid");
    const std::string rv = str_at(pre, "resourceVersion");
    const std::string have_uid = str_at(old, "metadata", "uid");
    const std::string have_rv = str_at(old, "metadata", "resourceVersion");
    if (!uid.empty() && uid != have_uid) {
      throw conflict(
          r, name, "Precondition failed: UID in precondition: " + uid + ", UID in object meta: " + have_uid);
    }
    if (!rv.empty() && rv != have_rv) {
      throw conflict(r, name,
                     "Precondition failed: ResourceVersion in precondition: " + rv +
                         ", ResourceVersion in object meta: " + have_rv);
    }
  }
  if (dry_run_) return old;
  int64_t grace = 0;
  if (r.kind == "Pod") {
    grace = old["spec"].value("terminationGracePeriodSeconds", int64_t{30});
    if (options.is_object() && options.contains("gracePeriodSeconds") &&
        options["gracePeriodSeconds"].is_number()) {
      grace = options["gracePeriodSeconds"].get<int64_t>();
    }
    const std::string phase = str_at(old, "status", "phase");
    if (str_at(old["spec"], "nodeName").empty() || phase == "Succeeded" || phase == "Failed") grace = 0;
    if (grace < 0) grace = 1;
  }
  const bool has_finalizers =
      old["metadata"].contains("finalizers") && !old["metadata"]["finalizers"].empty();
  if (grace > 0 || has_finalizers) {
    Json next = old;
    Json& meta = next["metadata"];
    const int64_t now = static_cast<int64_t>(std::time(nullptr));
    const int64_t prev_grace = meta.value("deletionGracePeriodSeconds", int64_t{-1});
    if (!meta.contains("deletionTimestamp") || (grace > 0 && grace < prev_grace)) {
      meta["deletionTimestamp"] = model::format_rfc3339(now + grace);
      meta["deletionGracePeriodSeconds"] = grace;
    }
    if (next == old) return old;
    meta["resourceVersion"] = next_rv_locked();
    auto stored = std::make_shared<const Json>(std::move(next));
    it->second = stored;
    emit_locked(r.storage_key(), "MODIFIED", stored, std::make_shared<const Json>(old));
    if (r.kind == "Pod" && options_.kubelet && grace > 0) schedule_locked("confirm", *stored);
    return *stored;
  }
  if (r.kind == "Namespace") {
    // The namespace controller's work, done at once: delete every object in the namespace.
    for (auto& [skey, sobjs] : objects_) {
      const ResourceInfo* info = find_any_version_locked(skey);
      if (info == nullptr || !info->namespaced) continue;
      const std::string prefix = name + "/";
      std::vector<std::string> keys;
      for (auto jt = sobjs.lower_bound(prefix); jt != sobjs.end() && jt->first.rfind(prefix, 0) == 0; ++jt) {
        keys.push_back(jt->first);
      }
      for (const auto& k : keys) erase_locked(*info, k);
    }
  } else if (r.kind == "CustomResourceDefinition") {
    const std::string skey = old["spec"].value("group", "") + "/" + old["spec"]["names"].value("plural", "");
    const ResourceInfo* info = find_any_version_locked(skey);
    if (info != nullptr) {
      std::vector<std::string> keys;
      for (const auto& [k, o] : objects_[skey]) keys.push_back(k);
      for (const auto& k : keys) erase_locked(*info, k);
    }
    objects_.erase(skey);
    unregister_crd_locked(old);
  }
  Json last = *objs.at(key);
  erase_locked(r, key);
  last["metadata"]["resourceVersion"] = std::to_string(rv_);
  return last;
}

// ------------------------------------------------------------------------------------ pods

Json Store::bind(const std::string& ns, const std::string& pod, const Json& binding) {
  std::lock_guard lock(mu_);
  const auto pods_info = resources_.at("/v1/pods");
  if (!binding.is_object()) throw bad_request("the body of the request is not a JSON object");
  if (!str_at(binding, "kind").empty() && str_at(binding, "kind") != "Binding") {
    throw bad_request("the kind in the data (" + str_at(binding, "kind") +
                      ") does not match the expected kind (Binding)");
  }
  const std::string bname = str_at(binding, "metadata", "name");
  if (!bname.empty() && bname != pod) {
    throw bad_request("the name of the object (" + bname + ") does not match the name on the URL (" + pod +
                      ")");
  }
  const std::string node = binding.contains("target") ? str_at(binding["target"], "name") : "";
  if (node.empty()) {
    throw invalid("Binding", "", pod, "target.name", "FieldValueRequired", "Required value");
  }
  auto& objs = objects_["/pods"];
  auto it = objs.find(obj_key(ns, pod));
  if (it == objs.end()) throw not_found("", "pods", pod);
  const Json& old = *it->second;
  ResourceInfo binding_info = *pods_info;
  binding_info.resource = "pods/binding";
  const std::string uid = str_at(binding, "metadata", "uid");
  if (!uid.empty() && uid != str_at(old, "metadata", "uid")) {
    throw conflict(binding_info, pod,
                   "Precondition failed: UID in precondition: " + uid +
                       ", UID in object meta: " + str_at(old, "metadata", "uid"));
  }
  if (old["metadata"].contains("deletionTimestamp")) {
    throw conflict(binding_info, pod, "pod " + pod + " is being deleted, cannot be assigned to a host");
  }
  if (!str_at(old["spec"], "nodeName").empty()) {
    throw conflict(binding_info, pod,
                   "pod " + pod + " is already assigned to node \"" + str_at(old["spec"], "nodeName") + "\"");
  }
  Json next = old;
  next["spec"]["nodeName"] = node;
  if (binding.contains("metadata") && binding["metadata"].contains("annotations") &&
      binding["metadata"]["annotations"].is_object()) {
    for (auto& [k, v] : binding["metadata"]["annotations"].items()) next["metadata"]["annotations"][k] = v;
  }
  Json& conds = next["status"]["conditions"];
  if (!conds.is_array()) conds = Json::array();
  Json cond = {{"type", "PodScheduled"},
               {"status", "True"},
               {"lastProbeTime", nullptr},
               {"lastTransitionTime", now_rfc3339()}};
  auto c = std::find_if(conds.begin(), conds.end(),
                        [](const Json& x) { return x.value("type", "") == "PodScheduled"; });
  if (c != conds.end()) {
    *c = cond;
  } else {
    conds.push_back(cond);
  }
  auto stored = replace_pod_locked(it->second, std::move(next));
  if (options_.kubelet) schedule_locked("run", *stored);
  return Json{{"kind", "Status"},
              {"apiVersion", "v1"},
              {"metadata", Json::object()},
              {"status", "Success"},
              {"code", 201}};
}

Json Store::evict(const std::string& ns, const std::string& pod, const Json& eviction) {
  std::lock_guard lock(mu_);
  if (!eviction.is_object()) throw bad_request("the body of the request is not a JSON object");
  const auto pods_info = resources_.at("/v1/pods");
  Json options = eviction.value("deleteOptions", Json::object());
  remove_locked(*pods_info, ns, pod, options);
  return Json{{"kind", "Status"},
              {"apiVersion", "v1"},
              {"metadata", Json::object()},
              {"status", "Success"},
              {"code", 201}};
}

// ------------------------------------------------------------------------------------ kubelet

void Store::schedule_locked(const std::string& kind, const Json& pod) {
  actions_.push_back(Action{std::chrono::steady_clock::now() + options_.kubelet_delay, kind,
                            str_at(pod, "metadata", "namespace"), str_at(pod, "metadata", "name"),
                            str_at(pod, "metadata", "uid")});
}

void Store::set_kubelet(bool on) {
  std::lock_guard lock(mu_);
  options_.kubelet = on;
  if (!on) return;
  for (const auto& [k, p] : objects_["/pods"]) {
    if (!str_at((*p)["spec"], "nodeName").empty()) {
      schedule_locked(p->at("metadata").contains("deletionTimestamp") ? "confirm" : "run", *p);
    }
  }
}

void Store::set_reserve_gpus(bool on) {
  std::lock_guard lock(mu_);
  options_.reserve_gpus = on;
  if (!on) return;
  // Reservation pods that started while reporting was off report now, as slow ones would.
  for (const auto& [k, p] : objects_["/pods"]) {
    const Json& m = (*p)["metadata"];
    if (m.value("labels", Json::object()).value("app", "") != "kai-resource-reservation") continue;
    if (m.contains("deletionTimestamp") || str_at(*p, "status", "phase") != "Running") continue;
    if (m.value("annotations", Json::object()).contains("run.ai/reserve_for_gpu_index")) continue;
    schedule_locked("reserve", *p);
  }
}

namespace {

/// A stable, UUID-shaped GPU id for device `index` of `node` (real ones come from NVML).
std::string gpu_uuid(const std::string& node, int64_t index) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (char ch : node + "#" + std::to_string(index)) h = (h ^ static_cast<unsigned char>(ch)) * 1099511628211ull;
  char buf[64];
  std::snprintf(buf, sizeof buf, "GPU-%08x-%04x-%04x-%04x-%012llx", static_cast<unsigned>(h >> 32),
                static_cast<unsigned>((h >> 16) & 0xffff), static_cast<unsigned>(h & 0xffff),
                static_cast<unsigned>(index & 0xffff), static_cast<unsigned long long>(h & 0xffffffffffffull));
  return buf;
}

}  // namespace

std::string Store::free_gpu_uuid_locked(const Json& pod) {
  constexpr const char* kAnnotation = "run.ai/reserve_for_gpu_index";
  const std::string node = str_at(pod["spec"], "nodeName");
  auto& nodes = objects_["/nodes"];
  auto n = nodes.find(obj_key("", node));
  if (n == nodes.end()) return "";
  int64_t gpus = 0;
  const Json& alloc = (*n->second)["status"].value("allocatable", Json::object());
  if (alloc.contains("nvidia.com/gpu")) {
    const Json& q = alloc["nvidia.com/gpu"];
    gpus = q.is_string() ? std::atoll(q.get<std::string>().c_str()) : q.is_number() ? q.get<int64_t>() : 0;
  }
  std::set<std::string> taken;
  for (const auto& [key, p] : objects_["/pods"]) {
    if (str_at((*p)["spec"], "nodeName") != node || str_at(*p, "metadata", "uid") == str_at(pod, "metadata", "uid")) {
      continue;
    }
    const Json& ann = (*p)["metadata"].value("annotations", Json::object());
    if (ann.contains(kAnnotation) && ann[kAnnotation].is_string()) taken.insert(ann[kAnnotation].get<std::string>());
  }
  for (int64_t i = 0; i < gpus; ++i) {
    std::string uuid = gpu_uuid(node, i);
    if (!taken.count(uuid)) return uuid;
  }
  return "";  // every device is held: the reservation pod waits, as it would on a full node
}

void Store::run_actions_locked(std::chrono::steady_clock::time_point now) {
  if (actions_.empty()) return;
  std::vector<Action> due;
  auto split =
      std::stable_partition(actions_.begin(), actions_.end(), [&](const Action& a) { return a.at > now; });
  due.assign(split, actions_.end());
  actions_.erase(split, actions_.end());
  const auto& pods_info = *resources_.at("/v1/pods");
  for (const Action& a : due) {
    auto& objs = objects_["/pods"];
    auto it = objs.find(obj_key(a.ns, a.name));
    if (it == objs.end() || str_at(*it->second, "metadata", "uid") != a.uid) continue;
    if (a.kind == "confirm") {
      if (it->second->at("metadata").contains("deletionTimestamp")) erase_locked(pods_info, it->first);
      continue;
    }
    if (a.kind == "reserve") {  // a running reservation pod reports its device late
      const Json& old = *it->second;
      if (old["metadata"].contains("deletionTimestamp") || !options_.reserve_gpus) continue;
      std::string uuid = free_gpu_uuid_locked(old);
      if (uuid.empty()) continue;
      Json next = old;
      next["metadata"]["annotations"]["run.ai/reserve_for_gpu_index"] = uuid;
      replace_pod_locked(it->second, std::move(next));
      continue;
    }
    const Json& old = *it->second;
    if (old["metadata"].contains("deletionTimestamp") || str_at(old, "status", "phase") != "Pending")
      continue;
    Json next = old;
    const std::string t = now_rfc3339();
    Json& st = next["status"];
    st["phase"] = "Running";
    st["startTime"] = t;
    st["hostIP"] = "10.0.0.1";
    st["podIP"] = "10.244.0." + std::to_string(1 + rng()() % 250);
    Json conds = Json::array();
    for (const char* type : {"Initialized", "Ready", "ContainersReady", "PodScheduled"}) {
      conds.push_back(
          {{"type", type}, {"status", "True"}, {"lastProbeTime", nullptr}, {"lastTransitionTime", t}});
    }
    st["conditions"] = conds;
    Json statuses = Json::array();
    for (const auto& c : old["spec"].value("containers", Json::array())) {
      statuses.push_back({{"name", c.value("name", "")},
                          {"image", c.value("image", "")},
                          {"ready", true},
                          {"started", true},
                          {"restartCount", 0},
                          {"imageID", ""},
                          {"containerID", ""},
                          {"state", {{"running", {{"startedAt", t}}}}}});
    }
    st["containerStatuses"] = statuses;
    const Json& labels = old["metadata"].value("labels", Json::object());
    if (options_.reserve_gpus && labels.value("app", "") == "kai-resource-reservation") {
      if (std::string uuid = free_gpu_uuid_locked(old); !uuid.empty()) {
        next["metadata"]["annotations"]["run.ai/reserve_for_gpu_index"] = uuid;
      }
    }
    replace_pod_locked(it->second, std::move(next));
  }
}

std::shared_ptr<const Json> Store::replace_pod_locked(std::shared_ptr<const Json>& slot, Json next) {
  next["metadata"]["resourceVersion"] = next_rv_locked();
  auto prev = slot;
  auto stored = std::make_shared<const Json>(std::move(next));
  slot = stored;
  emit_locked("/pods", "MODIFIED", stored, prev);
  return stored;
}

// ------------------------------------------------------------------------------------ watch

uint64_t Store::watch(const ResourceInfo& r, const std::string& ns, const ListOptions& opt, WatchSink sink) {
  Watcher w;
  w.storage_key = r.storage_key();
  w.ns = r.namespaced ? ns : "";
  w.api_version = r.api_version();
  w.kind = r.kind;
  w.labels = LabelSelector::parse(opt.label_selector);
  w.fields = FieldSelector::parse(opt.field_selector, r.kind);
  w.bookmarks = opt.allow_bookmarks;
  w.table = opt.table;
  w.info = std::make_shared<const ResourceInfo>(r);
  w.sink = std::move(sink);
  std::lock_guard lock(mu_);
  const uint64_t id = next_watch_++;
  if (stopping_) {
    // The server is shutting down: a watch registered now would outlive the HTTP transport its sink
    // writes to (stop() has already closed the others). End it at once.
    w.sink.close();
    return id;
  }
  if (opt.resource_version.empty() || opt.resource_version == "0") {
    auto objs = objects_.find(w.storage_key);
    if (objs != objects_.end()) {
      for (const auto& [k, o] : objs->second) {
        if (!w.ns.empty() && str_at(*o, "metadata", "namespace") != w.ns) continue;
        if (!w.labels.matches(*o) || !w.fields.matches(*o)) continue;
        w.sink.push(line_locked(w, "ADDED", *o));
      }
    }
  } else {
    uint64_t from = 0;
    try {
      size_t used = 0;
      from = std::stoull(opt.resource_version, &used);
      if (used != opt.resource_version.size()) throw std::invalid_argument("rv");
    } catch (const std::exception&) {
      throw bad_request("resourceVersion: Invalid value: \"" + opt.resource_version + "\": must be a number");
    }
    if (from < history_start_) {
      throw ApiError(410, "Expired",
                     "too old resource version: " + std::to_string(from) + " (" +
                         std::to_string(history_start_ + 1) + ")");
    }
    for (const Event& e : history_) {
      LineCache cache;
      if (e.rv > from) deliver_locked(w, e, cache);
    }
  }
  watchers_.emplace(id, std::move(w));
  return id;
}

void Store::unwatch(uint64_t id) {
  std::lock_guard lock(mu_);
  watchers_.erase(id);
}

void Store::drop_watches() {
  std::lock_guard lock(mu_);
  for (auto& [id, w] : watchers_) w.sink.close();
  watchers_.clear();
}

size_t Store::watch_count() const {
  std::lock_guard lock(mu_);
  return watchers_.size();
}

uint64_t Store::resource_version() const {
  std::lock_guard lock(mu_);
  return rv_;
}

size_t Store::history_size() const {
  std::lock_guard lock(mu_);
  return history_.size();
}

void Store::compact_history() {
  std::lock_guard lock(mu_);
  history_.clear();
  history_start_ = rv_;
}

size_t Store::object_count() const {
  std::lock_guard lock(mu_);
  size_t n = 0;
  for (const auto& [k, o] : objects_) n += o.size();
  return n;
}

}  // namespace kai::apiserver
