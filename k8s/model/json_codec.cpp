#include "k8s/model/json_codec.hpp"

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "k8s/model/quantity.hpp"
#include "k8s/model/time.hpp"

namespace kai::model {
namespace {

using nlohmann::json;

// ------------------------------------------------------------------------------- small helpers

std::string join(const std::string& base, std::string_view key) {
  if (base.empty()) return std::string(key);
  std::string out;
  out.reserve(base.size() + 1 + key.size());
  out.append(base).append(".").append(key);
  return out;
}

std::string at_index(const std::string& base, size_t i) {
  return base + "[" + std::to_string(i) + "]";
}

/// The member `key` of `obj`, or nullptr when `obj` is not an object or the member is absent or null.
/// JSON null is treated as absent because Go clients write `null` for empty slices and maps.
const json* member(const json& obj, std::string_view key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return nullptr;
  return &*it;
}

/// Integer value of a JSON number; floats are accepted only when integral (YAML "2.0").
std::optional<int64_t> as_int64(const json& v) {
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

// ---------------------------------------------------------------------------------- time

/// Formats nanoseconds the way Go's Duration.String() does ("1h30m0s", "500ms", "1.5s").
std::string format_go_duration(int64_t ns) {
  if (ns == 0) return "0s";
  std::string sign = ns < 0 ? "-" : "";
  const unsigned __int128 mag = ns < 0 ? static_cast<unsigned __int128>(-static_cast<__int128>(ns))
                                       : static_cast<unsigned __int128>(ns);
  auto with_fraction = [](uint64_t v, uint64_t unit, int unit_digits) {
    std::string out = std::to_string(v / unit);
    uint64_t frac = v % unit;
    if (frac != 0) {
      std::string f = std::to_string(frac);
      f.insert(0, static_cast<size_t>(unit_digits) - f.size(), '0');
      while (!f.empty() && f.back() == '0') f.pop_back();
      out += "." + f;
    }
    return out;
  };
  const auto v = static_cast<uint64_t>(mag);
  if (v < 1'000) return sign + std::to_string(v) + "ns";
  if (v < 1'000'000) return sign + with_fraction(v, 1'000, 3) + "us";
  if (v < 1'000'000'000) return sign + with_fraction(v, 1'000'000, 6) + "ms";
  std::string out = sign;
  const uint64_t hours = v / 3'600'000'000'000;
  const uint64_t minutes = v / 60'000'000'000 % 60;
  if (hours > 0) out += std::to_string(hours) + "h";
  if (hours > 0 || minutes > 0) out += std::to_string(minutes) + "m";
  return out + with_fraction(v % 60'000'000'000, 1'000'000'000, 9) + "s";
}

// ------------------------------------------------------------------------------- the decoder

/// Typed field readers that record a FieldError instead of throwing, so that one bad field leaves
/// the rest of the object usable (contracts.md §2: bad fields become unschedulable reasons).
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
    const json* v = member(obj, key);
    if (v == nullptr) return nullptr;
    if (!v->is_object()) {
      wrong_type(path, "an object", *v);
      return nullptr;
    }
    return v;
  }

  const json* array(const json& obj, std::string_view key, const std::string& path) {
    const json* v = member(obj, key);
    if (v == nullptr) return nullptr;
    if (!v->is_array()) {
      wrong_type(path, "an array", *v);
      return nullptr;
    }
    return v;
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

  void str(const json& obj, std::string_view key, const std::string& path, std::string& out) {
    const json* v = member(obj, key);
    if (v == nullptr) return;
    if (!v->is_string()) return wrong_type(path, "a string", *v);
    out = v->get<std::string>();
  }

  void optional_str(const json& obj, std::string_view key, const std::string& path,
                    std::optional<std::string>& out) {
    const json* v = member(obj, key);
    if (v == nullptr) return;
    if (!v->is_string()) return wrong_type(path, "a string", *v);
    out = v->get<std::string>();
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
    const json* v = member(obj, key);
    if (v == nullptr) return;
    if (!v->is_string()) return wrong_type(path, "an RFC 3339 timestamp", *v);
    const std::string s = v->get<std::string>();
    const Result<int64_t> t = parse_rfc3339(s);
    if (!t) return fail(path, t.message());
    out = *t;
  }

  void duration_seconds(const json& obj, std::string_view key, const std::string& path,
                        std::optional<double>& out) {
    const json* v = member(obj, key);
    if (v == nullptr) return;
    if (!v->is_string()) return wrong_type(path, "a duration string", *v);
    const std::string s = v->get<std::string>();
    const Result<int64_t> ns = parse_go_duration_ns(s);
    if (!ns) return fail(path, ns.message());
    out = static_cast<double>(*ns) / 1e9;
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
  std::vector<FieldError>& errors_;
};

Status not_an_object(const json& j) {
  return Status::error("expected an object, got " + std::string(j.type_name()));
}

/// Runs a decoder body, turning any exception that slipped through into a Status.
template <class T, class F>
Result<T> guarded(const json& j, F&& body) {
  if (!j.is_object()) return not_an_object(j);
  try {
    T out;
    Decoder d(out.errors);
    d.meta(j, out.meta);
    body(d, out);
    return out;
  } catch (const std::exception& e) {
    return Status::error(std::string("decode failed: ") + e.what());
  }
}

// ------------------------------------------------------------------------------- pod pieces

/// The path of a container port's hostPort, recorded as an unsupported constraint.
std::string host_port_path(bool init, size_t container, size_t port) {
  return std::string(init ? "spec.initContainers" : "spec.containers") + "[" + std::to_string(container) +
         "].ports[" + std::to_string(port) + "].hostPort";
}

std::string sidecar_path(size_t container) {
  return "spec.initContainers[" + std::to_string(container) + "].restartPolicy";
}

constexpr std::string_view kPodAffinityPath =
    "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution";
constexpr std::string_view kPodAntiAffinityPath =
    "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution";
constexpr std::string_view kTopologySpreadPath = "spec.topologySpreadConstraints";
constexpr std::string_view kResourceClaimsPath = "spec.resourceClaims";

void decode_containers(Decoder& d, const json& spec, bool init, Pod& pod) {
  const std::string base = init ? "spec.initContainers" : "spec.containers";
  std::vector<Container>& out = init ? pod.init_containers : pod.containers;
  d.each_object(spec, init ? "initContainers" : "containers", base,
                [&](const json& c, const std::string& p, size_t ci) {
                  Container container;
                  d.str(c, "name", join(p, "name"), container.name);
                  if (const json* res = d.object(c, "resources", join(p, "resources"))) {
                    const std::string rp = join(p, "resources");
                    d.resources(*res, "requests", join(rp, "requests"), container.requests);
                    d.resources(*res, "limits", join(rp, "limits"), container.limits);
                  }
                  // The API server defaults a missing request to its limit.
                  for (const auto& [name, limit] : container.limits) container.requests.emplace(name, limit);
                  d.each_object(c, "ports", join(p, "ports"),
                                [&](const json& port, const std::string& pp, size_t pi) {
                                  int64_t host_port = 0;
                                  d.integer(port, "hostPort", join(pp, "hostPort"), host_port);
                                  if (host_port > 0) {
                                    container.has_host_port = true;
                                    pod.unsupported_constraints.push_back(host_port_path(init, ci, pi));
                                  }
                                });
                  if (init) {
                    std::string policy;
                    d.str(c, "restartPolicy", join(p, "restartPolicy"), policy);
                    if (policy == "Always") {
                      container.restart_policy_always = true;
                      pod.unsupported_constraints.push_back(sidecar_path(ci));
                    }
                  }
                  out.push_back(std::move(container));
                });
}

std::vector<NodeSelectorRequirement> decode_requirements(Decoder& d, const json& term, std::string_view key,
                                                         const std::string& path) {
  std::vector<NodeSelectorRequirement> out;
  d.each_object(term, key, path, [&](const json& r, const std::string& p, size_t) {
    NodeSelectorRequirement req;
    d.str(r, "key", join(p, "key"), req.key);
    d.str(r, "operator", join(p, "operator"), req.op);
    d.string_list(r, "values", join(p, "values"), req.values);
    out.push_back(std::move(req));
  });
  return out;
}

void decode_affinity(Decoder& d, const json& spec, Pod& pod) {
  const json* affinity = d.object(spec, "affinity", "spec.affinity");
  if (affinity == nullptr) return;
  if (const json* na = d.object(*affinity, "nodeAffinity", "spec.affinity.nodeAffinity")) {
    const std::string rp = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution";
    if (const json* req = d.object(*na, "requiredDuringSchedulingIgnoredDuringExecution", rp)) {
      std::vector<NodeSelectorTerm> terms;
      d.each_object(*req, "nodeSelectorTerms", join(rp, "nodeSelectorTerms"),
                    [&](const json& t, const std::string& p, size_t) {
                      NodeSelectorTerm term;
                      term.match_expressions =
                          decode_requirements(d, t, "matchExpressions", join(p, "matchExpressions"));
                      term.match_fields = decode_requirements(d, t, "matchFields", join(p, "matchFields"));
                      terms.push_back(std::move(term));
                    });
      pod.required_node_affinity = std::move(terms);
    }
  }
  // Required pod (anti-)affinity is not implemented: record it so that the pod is refused.
  const std::pair<std::string_view, std::string_view> pod_affinities[] = {
      {"podAffinity", kPodAffinityPath}, {"podAntiAffinity", kPodAntiAffinityPath}};
  for (const auto& [kind, path] : pod_affinities) {
    const json* pa = d.object(*affinity, kind, "spec.affinity." + std::string(kind));
    if (pa == nullptr) continue;
    const json* req = d.array(*pa, "requiredDuringSchedulingIgnoredDuringExecution", std::string(path));
    if (req != nullptr && !req->empty()) pod.unsupported_constraints.emplace_back(path);
  }
}

void decode_topology_spread(Decoder& d, const json& spec, Pod& pod) {
  bool hard = false;
  d.each_object(spec, "topologySpreadConstraints", std::string(kTopologySpreadPath),
                [&](const json& c, const std::string& p, size_t) {
                  std::string when = "DoNotSchedule";  // the API default
                  d.str(c, "whenUnsatisfiable", join(p, "whenUnsatisfiable"), when);
                  if (when == "DoNotSchedule") hard = true;
                });
  if (hard) pod.unsupported_constraints.emplace_back(kTopologySpreadPath);
}

// ------------------------------------------------------------------------------- encoding helpers

json encode_meta(const ObjectMeta& m) {
  json md = json::object();
  md["name"] = m.name;
  if (!m.namespace_.empty()) md["namespace"] = m.namespace_;
  if (!m.uid.empty()) md["uid"] = m.uid;
  if (!m.resource_version.empty()) md["resourceVersion"] = m.resource_version;
  if (m.generation != 0) md["generation"] = m.generation;
  if (m.creation_timestamp != 0) md["creationTimestamp"] = format_rfc3339(m.creation_timestamp);
  if (m.deletion_timestamp) md["deletionTimestamp"] = format_rfc3339(*m.deletion_timestamp);
  if (!m.labels.empty()) md["labels"] = m.labels;
  if (!m.annotations.empty()) md["annotations"] = m.annotations;
  if (!m.owner_references.empty()) {
    json refs = json::array();
    for (const OwnerReference& r : m.owner_references) {
      json o = {{"apiVersion", r.api_version}, {"kind", r.kind}, {"name", r.name}, {"uid", r.uid}};
      if (r.controller) o["controller"] = true;
      refs.push_back(std::move(o));
    }
    md["ownerReferences"] = std::move(refs);
  }
  return md;
}

json header(std::string_view api_version, std::string_view kind, const ObjectMeta& m) {
  return json{{"apiVersion", api_version}, {"kind", kind}, {"metadata", encode_meta(m)}};
}

json encode_resources(const ResourceList& r) {
  json out = json::object();
  for (const auto& [name, milli] : r) out[name] = format_quantity_milli(milli);
  return out;
}

void put_if(json& obj, const char* key, const std::string& value) {
  if (!value.empty()) obj[key] = value;
}

json encode_requirements(const std::vector<NodeSelectorRequirement>& reqs) {
  json out = json::array();
  for (const NodeSelectorRequirement& r : reqs) {
    json o = {{"key", r.key}, {"operator", r.op}};
    if (!r.values.empty()) o["values"] = r.values;
    out.push_back(std::move(o));
  }
  return out;
}

json encode_topology_constraint(const TopologyConstraint& t) {
  json o = json::object();
  put_if(o, "topology", t.topology);
  put_if(o, "requiredTopologyLevel", t.required_level);
  put_if(o, "preferredTopologyLevel", t.preferred_level);
  return o;
}

TopologyConstraint decode_topology_constraint(Decoder& d, const json& obj, const std::string& path) {
  TopologyConstraint t;
  const json* tc = d.object(obj, "topologyConstraint", path);
  if (tc == nullptr) return t;
  d.str(*tc, "topology", join(path, "topology"), t.topology);
  d.str(*tc, "requiredTopologyLevel", join(path, "requiredTopologyLevel"), t.required_level);
  d.str(*tc, "preferredTopologyLevel", join(path, "preferredTopologyLevel"), t.preferred_level);
  return t;
}

/// Parses "spec.containers[i].ports[j].hostPort" (or initContainers) back into its indices.
bool parse_host_port_path(const std::string& path, bool& init, size_t& container, size_t& port) {
  unsigned long c = 0, p = 0;
  char tail[16] = {};
  if (std::sscanf(path.c_str(), "spec.containers[%lu].ports[%lu].%15s", &c, &p, tail) == 3) {
    init = false;
  } else if (std::sscanf(path.c_str(), "spec.initContainers[%lu].ports[%lu].%15s", &c, &p, tail) == 3) {
    init = true;
  } else {
    return false;
  }
  if (std::string_view(tail) != "hostPort") return false;
  container = c;
  port = p;
  return true;
}

json encode_containers(const std::vector<Container>& containers, bool init, const Pod& pod) {
  json out = json::array();
  for (size_t ci = 0; ci < containers.size(); ++ci) {
    const Container& c = containers[ci];
    json o = {{"name", c.name}};
    json resources = json::object();
    // Requests equal to a limit were possibly defaulted from it; writing them is harmless because
    // decoding keeps an explicit request.
    if (!c.requests.empty()) resources["requests"] = encode_resources(c.requests);
    if (!c.limits.empty()) resources["limits"] = encode_resources(c.limits);
    if (!resources.empty()) o["resources"] = std::move(resources);
    if (c.has_host_port) {
      // The host port numbers are not kept; write ports with a host port at the recorded indices so
      // that decoding reproduces the same unsupported-constraint paths.
      std::vector<size_t> ports;
      for (const std::string& path : pod.unsupported_constraints) {
        bool is_init = false;
        size_t pc = 0, pp = 0;
        if (parse_host_port_path(path, is_init, pc, pp) && is_init == init && pc == ci) ports.push_back(pp);
      }
      if (ports.empty()) ports.push_back(0);
      json arr = json::array();
      for (size_t pp : ports) {
        while (arr.size() < pp) arr.push_back({{"containerPort", 1}});
        if (arr.size() == pp) arr.push_back({{"containerPort", 1}, {"hostPort", 1}});
      }
      o["ports"] = std::move(arr);
    }
    if (init && c.restart_policy_always) o["restartPolicy"] = "Always";
    out.push_back(std::move(o));
  }
  return out;
}

bool lists(const Pod& pod, std::string_view path) {
  for (const std::string& p : pod.unsupported_constraints) {
    if (p == path) return true;
  }
  return false;
}

std::string group_of(std::string_view api_version) {
  const size_t slash = api_version.find('/');
  return slash == std::string_view::npos ? std::string() : std::string(api_version.substr(0, slash));
}

}  // namespace

// ------------------------------------------------------------------------------------ decoders

Result<Node> decode_node(const json& j) {
  return guarded<Node>(j, [&](Decoder& d, Node& n) {
    if (const json* spec = d.object(j, "spec", "spec")) {
      d.boolean(*spec, "unschedulable", "spec.unschedulable", n.unschedulable);
      d.each_object(*spec, "taints", "spec.taints", [&](const json& t, const std::string& p, size_t) {
        Taint taint;
        d.str(t, "key", join(p, "key"), taint.key);
        d.str(t, "value", join(p, "value"), taint.value);
        d.str(t, "effect", join(p, "effect"), taint.effect);
        n.taints.push_back(std::move(taint));
      });
    }
    if (const json* status = d.object(j, "status", "status")) {
      d.resources(*status, "capacity", "status.capacity", n.capacity);
      d.resources(*status, "allocatable", "status.allocatable", n.allocatable);
      d.each_object(*status, "conditions", "status.conditions",
                    [&](const json& c, const std::string& p, size_t) {
                      NodeCondition cond;
                      d.str(c, "type", join(p, "type"), cond.type);
                      d.str(c, "status", join(p, "status"), cond.status);
                      n.conditions.push_back(std::move(cond));
                    });
    }
  });
}

Result<Pod> decode_pod(const json& j) {
  return guarded<Pod>(j, [&](Decoder& d, Pod& pod) {
    if (const json* spec = d.object(j, "spec", "spec")) {
      d.str(*spec, "schedulerName", "spec.schedulerName", pod.scheduler_name);
      d.str(*spec, "nodeName", "spec.nodeName", pod.node_name);
      d.str(*spec, "priorityClassName", "spec.priorityClassName", pod.priority_class_name);
      d.optional_integer(*spec, "priority", "spec.priority", pod.priority);
      d.string_map(*spec, "nodeSelector", "spec.nodeSelector", pod.node_selector);
      // The order of these calls fixes the order of unsupported_constraints, which encode relies on.
      decode_affinity(d, *spec, pod);
      decode_topology_spread(d, *spec, pod);
      d.each_object(*spec, "tolerations", "spec.tolerations",
                    [&](const json& t, const std::string& p, size_t) {
                      Toleration tol;
                      d.str(t, "key", join(p, "key"), tol.key);
                      d.str(t, "operator", join(p, "operator"), tol.op);
                      if (tol.op.empty()) tol.op = "Equal";
                      d.str(t, "value", join(p, "value"), tol.value);
                      d.str(t, "effect", join(p, "effect"), tol.effect);
                      pod.tolerations.push_back(std::move(tol));
                    });
      decode_containers(d, *spec, false, pod);
      decode_containers(d, *spec, true, pod);
      d.resources(*spec, "overhead", "spec.overhead", pod.overhead);
      if (const json* gates = d.array(*spec, "schedulingGates", "spec.schedulingGates")) {
        pod.scheduling_gates = static_cast<int>(gates->size());
      }
      const json* claims = d.array(*spec, "resourceClaims", std::string(kResourceClaimsPath));
      if (claims != nullptr && !claims->empty())
        pod.unsupported_constraints.emplace_back(kResourceClaimsPath);
    }
    if (const json* status = d.object(j, "status", "status")) {
      d.str(*status, "phase", "status.phase", pod.phase);
      d.str(*status, "nominatedNodeName", "status.nominatedNodeName", pod.nominated_node_name);
      d.each_object(*status, "conditions", "status.conditions",
                    [&](const json& c, const std::string& p, size_t) {
                      PodCondition cond;
                      d.str(c, "type", join(p, "type"), cond.type);
                      d.str(c, "status", join(p, "status"), cond.status);
                      d.str(c, "reason", join(p, "reason"), cond.reason);
                      d.str(c, "message", join(p, "message"), cond.message);
                      d.timestamp(c, "lastTransitionTime", join(p, "lastTransitionTime"),
                                  cond.last_transition_time);
                      pod.conditions.push_back(std::move(cond));
                    });
    }
  });
}

Result<Queue> decode_queue(const json& j) {
  return guarded<Queue>(j, [&](Decoder& d, Queue& q) {
    const json* spec = d.object(j, "spec", "spec");
    if (spec == nullptr) return;
    d.str(*spec, "displayName", "spec.displayName", q.display_name);
    d.str(*spec, "parentQueue", "spec.parentQueue", q.parent_queue);
    d.integer(*spec, "priority", "spec.priority", q.priority);
    if (const json* res = d.object(*spec, "resources", "spec.resources")) {
      q.has_resources = true;
      const std::pair<const char*, QueueResource*> kinds[] = {
          {"gpu", &q.gpu}, {"cpu", &q.cpu}, {"memory", &q.memory}};
      for (const auto& [name, target] : kinds) {
        const std::string p = std::string("spec.resources.") + name;
        const json* r = d.object(*res, name, p);
        if (r == nullptr) continue;
        d.number(*r, "quota", join(p, "quota"), target->quota);
        d.number(*r, "overQuotaWeight", join(p, "overQuotaWeight"), target->over_quota_weight);
        d.number(*r, "limit", join(p, "limit"), target->limit);
      }
    }
    d.duration_seconds(*spec, "preemptMinRuntime", "spec.preemptMinRuntime", q.preempt_min_runtime_seconds);
    d.duration_seconds(*spec, "reclaimMinRuntime", "spec.reclaimMinRuntime", q.reclaim_min_runtime_seconds);
  });
}

Result<PodGroup> decode_pod_group(const json& j) {
  return guarded<PodGroup>(j, [&](Decoder& d, PodGroup& pg) {
    const json* spec = d.object(j, "spec", "spec");
    if (spec == nullptr) return;
    d.integer(*spec, "minMember", "spec.minMember", pg.min_member);
    d.str(*spec, "queue", "spec.queue", pg.queue);
    d.str(*spec, "priorityClassName", "spec.priorityClassName", pg.priority_class_name);
    d.str(*spec, "preemptibility", "spec.preemptibility", pg.preemptibility);
    d.optional_boolean(*spec, "markUnschedulable", "spec.markUnschedulable", pg.mark_unschedulable);
    d.optional_integer(*spec, "schedulingBackoff", "spec.schedulingBackoff", pg.scheduling_backoff);
    pg.topology_constraint = decode_topology_constraint(d, *spec, "spec.topologyConstraint");
    d.each_object(*spec, "subGroups", "spec.subGroups", [&](const json& s, const std::string& p, size_t) {
      SubGroup sg;
      d.str(s, "name", join(p, "name"), sg.name);
      d.integer(s, "minMember", join(p, "minMember"), sg.min_member);
      d.optional_str(s, "parent", join(p, "parent"), sg.parent);
      sg.topology_constraint = decode_topology_constraint(d, s, join(p, "topologyConstraint"));
      pg.sub_groups.push_back(std::move(sg));
    });
  });
}

Result<PriorityClass> decode_priority_class(const json& j) {
  return guarded<PriorityClass>(j, [&](Decoder& d, PriorityClass& pc) {
    d.integer(j, "value", "value", pc.value);
    d.boolean(j, "globalDefault", "globalDefault", pc.global_default);
    d.str(j, "preemptionPolicy", "preemptionPolicy", pc.preemption_policy);
  });
}

Result<BindRequest> decode_bind_request(const json& j) {
  return guarded<BindRequest>(j, [&](Decoder& d, BindRequest& br) {
    if (const json* spec = d.object(j, "spec", "spec")) {
      d.str(*spec, "podName", "spec.podName", br.pod_name);
      d.str(*spec, "selectedNode", "spec.selectedNode", br.selected_node);
      d.str(*spec, "receivedResourceType", "spec.receivedResourceType", br.received_resource_type);
      if (const json* gpu = d.object(*spec, "receivedGPU", "spec.receivedGPU")) {
        d.integer(*gpu, "count", "spec.receivedGPU.count", br.received_gpu_count);
        d.str(*gpu, "portion", "spec.receivedGPU.portion", br.received_gpu_portion);
      }
      d.string_list(*spec, "selectedGPUGroups", "spec.selectedGPUGroups", br.selected_gpu_groups);
      d.optional_integer(*spec, "backoffLimit", "spec.backoffLimit", br.backoff_limit);
    }
    if (const json* status = d.object(j, "status", "status")) {
      d.str(*status, "phase", "status.phase", br.phase);
      d.str(*status, "reason", "status.reason", br.reason);
      d.integer(*status, "failedAttempts", "status.failedAttempts", br.failed_attempts);
    }
  });
}

// ------------------------------------------------------------------------------------ encoders

json encode(const Node& x) {
  json j = header("v1", "Node", x.meta);
  json spec = json::object();
  if (x.unschedulable) spec["unschedulable"] = true;
  if (!x.taints.empty()) {
    json taints = json::array();
    for (const Taint& t : x.taints) {
      json o = {{"key", t.key}, {"effect", t.effect}};
      put_if(o, "value", t.value);
      taints.push_back(std::move(o));
    }
    spec["taints"] = std::move(taints);
  }
  j["spec"] = std::move(spec);
  json status = json::object();
  if (!x.capacity.empty()) status["capacity"] = encode_resources(x.capacity);
  if (!x.allocatable.empty()) status["allocatable"] = encode_resources(x.allocatable);
  if (!x.conditions.empty()) {
    json conds = json::array();
    for (const NodeCondition& c : x.conditions) conds.push_back({{"type", c.type}, {"status", c.status}});
    status["conditions"] = std::move(conds);
  }
  j["status"] = std::move(status);
  return j;
}

json encode(const Pod& x) {
  json j = header("v1", "Pod", x.meta);
  json spec = json::object();
  put_if(spec, "schedulerName", x.scheduler_name);
  put_if(spec, "nodeName", x.node_name);
  put_if(spec, "priorityClassName", x.priority_class_name);
  if (x.priority) spec["priority"] = *x.priority;
  if (!x.node_selector.empty()) spec["nodeSelector"] = x.node_selector;
  json affinity = json::object();
  if (x.required_node_affinity) {
    json terms = json::array();
    for (const NodeSelectorTerm& t : *x.required_node_affinity) {
      json term = json::object();
      if (!t.match_expressions.empty()) term["matchExpressions"] = encode_requirements(t.match_expressions);
      if (!t.match_fields.empty()) term["matchFields"] = encode_requirements(t.match_fields);
      terms.push_back(std::move(term));
    }
    affinity["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"] =
        std::move(terms);
  }
  // The terms of required pod (anti-)affinity and hard spread constraints are not kept (the pod is
  // refused for having them); write a placeholder so that a decoded copy is refused the same way.
  const json pod_term =
      json::array({{{"topologyKey", "kubernetes.io/hostname"}, {"labelSelector", json::object()}}});
  if (lists(x, kPodAffinityPath)) {
    affinity["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] = pod_term;
  }
  if (lists(x, kPodAntiAffinityPath)) {
    affinity["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] = pod_term;
  }
  if (!affinity.empty()) spec["affinity"] = std::move(affinity);
  if (lists(x, kTopologySpreadPath)) {
    spec["topologySpreadConstraints"] = json::array({{{"maxSkew", 1},
                                                      {"topologyKey", "kubernetes.io/hostname"},
                                                      {"whenUnsatisfiable", "DoNotSchedule"}}});
  }
  if (!x.tolerations.empty()) {
    json tols = json::array();
    for (const Toleration& t : x.tolerations) {
      json o = {{"operator", t.op}};
      put_if(o, "key", t.key);
      put_if(o, "value", t.value);
      put_if(o, "effect", t.effect);
      tols.push_back(std::move(o));
    }
    spec["tolerations"] = std::move(tols);
  }
  spec["containers"] = encode_containers(x.containers, false, x);
  if (!x.init_containers.empty()) spec["initContainers"] = encode_containers(x.init_containers, true, x);
  if (!x.overhead.empty()) spec["overhead"] = encode_resources(x.overhead);
  if (x.scheduling_gates > 0) {
    json gates = json::array();
    for (int i = 0; i < x.scheduling_gates; ++i) gates.push_back({{"name", "gate-" + std::to_string(i)}});
    spec["schedulingGates"] = std::move(gates);
  }
  if (lists(x, kResourceClaimsPath)) spec["resourceClaims"] = json::array({{{"name", "claim-0"}}});
  j["spec"] = std::move(spec);
  json status = json::object();
  put_if(status, "phase", x.phase);
  put_if(status, "nominatedNodeName", x.nominated_node_name);
  if (!x.conditions.empty()) {
    json conds = json::array();
    for (const PodCondition& c : x.conditions) {
      json o = {{"type", c.type}, {"status", c.status}};
      put_if(o, "reason", c.reason);
      put_if(o, "message", c.message);
      if (c.last_transition_time) o["lastTransitionTime"] = format_rfc3339(*c.last_transition_time);
      conds.push_back(std::move(o));
    }
    status["conditions"] = std::move(conds);
  }
  j["status"] = std::move(status);
  return j;
}

json encode(const Queue& x) {
  json j = header("scheduling.run.ai/v2", "Queue", x.meta);
  json spec = json::object();
  put_if(spec, "displayName", x.display_name);
  put_if(spec, "parentQueue", x.parent_queue);
  spec["priority"] = x.priority;
  if (x.has_resources) {
    auto res = [](const QueueResource& r) {
      return json{{"quota", r.quota}, {"overQuotaWeight", r.over_quota_weight}, {"limit", r.limit}};
    };
    spec["resources"] = {{"gpu", res(x.gpu)}, {"cpu", res(x.cpu)}, {"memory", res(x.memory)}};
  }
  auto duration = [](double seconds) { return format_go_duration(std::llround(seconds * 1e9)); };
  if (x.preempt_min_runtime_seconds) spec["preemptMinRuntime"] = duration(*x.preempt_min_runtime_seconds);
  if (x.reclaim_min_runtime_seconds) spec["reclaimMinRuntime"] = duration(*x.reclaim_min_runtime_seconds);
  j["spec"] = std::move(spec);
  return j;
}

json encode(const PodGroup& x) {
  json j = header("scheduling.run.ai/v2alpha2", "PodGroup", x.meta);
  json spec = {{"minMember", x.min_member}};
  put_if(spec, "queue", x.queue);
  put_if(spec, "priorityClassName", x.priority_class_name);
  put_if(spec, "preemptibility", x.preemptibility);
  if (x.mark_unschedulable) spec["markUnschedulable"] = *x.mark_unschedulable;
  if (x.scheduling_backoff) spec["schedulingBackoff"] = *x.scheduling_backoff;
  if (!x.topology_constraint.empty())
    spec["topologyConstraint"] = encode_topology_constraint(x.topology_constraint);
  if (!x.sub_groups.empty()) {
    json subs = json::array();
    for (const SubGroup& s : x.sub_groups) {
      json o = {{"name", s.name}, {"minMember", s.min_member}};
      if (s.parent) o["parent"] = *s.parent;
      if (!s.topology_constraint.empty())
        o["topologyConstraint"] = encode_topology_constraint(s.topology_constraint);
      subs.push_back(std::move(o));
    }
    spec["subGroups"] = std::move(subs);
  }
  j["spec"] = std::move(spec);
  return j;
}

json encode(const PriorityClass& x) {
  json j = header("scheduling.k8s.io/v1", "PriorityClass", x.meta);
  j["value"] = x.value;
  if (x.global_default) j["globalDefault"] = true;
  put_if(j, "preemptionPolicy", x.preemption_policy);
  return j;
}

json encode(const BindRequest& x) {
  json j = header("scheduling.run.ai/v1alpha2", "BindRequest", x.meta);
  json spec = json::object();
  put_if(spec, "podName", x.pod_name);
  put_if(spec, "selectedNode", x.selected_node);
  put_if(spec, "receivedResourceType", x.received_resource_type);
  if (x.received_gpu_count != 0 || !x.received_gpu_portion.empty()) {
    json gpu = {{"count", x.received_gpu_count}};
    put_if(gpu, "portion", x.received_gpu_portion);
    spec["receivedGPU"] = std::move(gpu);
  }
  if (!x.selected_gpu_groups.empty()) spec["selectedGPUGroups"] = x.selected_gpu_groups;
  if (x.backoff_limit) spec["backoffLimit"] = *x.backoff_limit;
  j["spec"] = std::move(spec);
  json status = json::object();
  put_if(status, "phase", x.phase);
  put_if(status, "reason", x.reason);
  if (x.failed_attempts != 0) status["failedAttempts"] = x.failed_attempts;
  j["status"] = std::move(status);
  return j;
}

// ------------------------------------------------------------------------------------ dispatch

Status decode_object_into(const json& j, ClusterObjects& out) {
  if (!j.is_object()) return not_an_object(j);
  const json* kind_v = member(j, "kind");
  if (kind_v == nullptr || !kind_v->is_string() || kind_v->get_ref<const std::string&>().empty()) {
    return Status::error("missing kind");
  }
  const std::string& kind = kind_v->get_ref<const std::string&>();
  const json* md = member(j, "metadata");
  const json* name_v = md == nullptr ? nullptr : member(*md, "name");
  if (name_v == nullptr || !name_v->is_string() || name_v->get_ref<const std::string&>().empty()) {
    return Status::error("missing metadata.name (" + kind + ")");
  }
  std::string api_version;
  if (const json* av = member(j, "apiVersion"); av != nullptr && av->is_string())
    api_version = av->get<std::string>();

  std::string expected_group;
  if (kind == "Queue" || kind == "PodGroup" || kind == "BindRequest") {
    expected_group = "scheduling.run.ai";
  } else if (kind == "PriorityClass") {
    expected_group = "scheduling.k8s.io";
  } else if (kind != "Node" && kind != "Pod") {
    expected_group = "?";  // not a kind of ours
  }
  // A missing apiVersion is accepted for hand-written inputs; a different group (Volcano's Queue and
  // PodGroup, say) is another kind with the same name.
  const bool known =
      expected_group != "?" && (api_version.empty() || group_of(api_version) == expected_group);
  if (!known) {
    std::string ns;
    if (const json* n = member(*md, "namespace"); n != nullptr && n->is_string()) ns = n->get<std::string>();
    std::string what = kind + " " + (ns.empty() ? "" : ns + "/") + name_v->get<std::string>();
    if (expected_group != "?") what += " (" + api_version + ")";
    out.skipped.push_back(std::move(what));
    return Status::ok();
  }

  auto add = [](auto result, auto& list) -> Status {
    if (!result) return result.status();
    list.push_back(std::move(result).value());
    return Status::ok();
  };
  if (kind == "Node") return add(decode_node(j), out.nodes);
  if (kind == "Pod") return add(decode_pod(j), out.pods);
  if (kind == "Queue") return add(decode_queue(j), out.queues);
  if (kind == "PodGroup") return add(decode_pod_group(j), out.pod_groups);
  if (kind == "PriorityClass") return add(decode_priority_class(j), out.priority_classes);
  return add(decode_bind_request(j), out.bind_requests);
}

}  // namespace kai::model
