// Store: update (PUT of an object or its status) and patch (merge, JSON and strategic merge
// patches), with the real server's immutable fields and generation bumps.
#include <algorithm>

#include "k8s/apiserver/crd_schema.hpp"
#include "k8s/apiserver/event_versions.hpp"
#include "k8s/apiserver/patch.hpp"
#include "k8s/apiserver/store_internal.hpp"

namespace kai::apiserver {
namespace {

/// The object without metadata and status: what a "spec change" compares.
Json spec_part(const Json& obj) {
  Json out = obj;
  out.erase("metadata");
  out.erase("status");
  out.erase("apiVersion");
  out.erase("kind");
  return out;
}

const char* kModified =
    "the object has been modified; please apply your changes to the latest version and try again";

}  // namespace

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
  // As the real API server: a uid in the object (or in a patch) is a precondition, not a change.
  const std::string want_uid = str_at(body, "metadata", "uid");
  if (!want_uid.empty() && want_uid != str_at(old, "metadata", "uid")) {
    throw conflict(r, name, "Precondition failed: UID in precondition: " + want_uid +
                                ", UID in object meta: " + str_at(old, "metadata", "uid"));
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
  if (r.custom) check_custom(r, next, &old);
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

}  // namespace kai::apiserver
