// Store: delete, with preconditions, graceful pod deletion, finalizers, and the cascades of a
// Namespace or a CustomResourceDefinition.
#include <vector>

#include "k8s/apiserver/store_internal.hpp"

namespace kai::apiserver {

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
  Json old = *it->second;  // not const: returned by value, so it moves
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

}  // namespace kai::apiserver
