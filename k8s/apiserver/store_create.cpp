// Store: create, with the real server's name rules, generated names and uids, and per-kind
// admission (pods' admission is in store_pods.cpp, custom resources' schema in crd_schema.cpp).
#include <algorithm>
#include <cctype>
#include <string_view>

#include "k8s/apiserver/crd_schema.hpp"
#include "k8s/apiserver/event_versions.hpp"
#include "k8s/apiserver/store_internal.hpp"

namespace kai::apiserver {
namespace {

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

}  // namespace

Json Store::create(const ResourceInfo& r, const std::string& ns, Json body, bool dry_run) {
  std::lock_guard lock(mu_);
  FlagScope scope(dry_run_, dry_run);
  return output(r, create_locked(r, ns, std::move(body)));
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

}  // namespace kai::apiserver
