// Store: what is special about pods: admission (defaults, Priority and RuntimeClass admission
// plugins, QoS class), the binding and eviction subresources, and the server's own pod changes.
#include <algorithm>

#include "k8s/apiserver/store_internal.hpp"

namespace kai::apiserver {
namespace {

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
        // Guaranteed needs a limit for each, and a request, if any, equal to it.
        if (!lim.contains(r) || (req.contains(r) && req[r] != lim[r])) guaranteed = false;
      }
    }
  }
  if (!any) return "BestEffort";
  return guaranteed ? "Guaranteed" : "Burstable";
}

}  // namespace

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

std::shared_ptr<const Json> Store::replace_pod_locked(std::shared_ptr<const Json>& slot, Json next) {
  next["metadata"]["resourceVersion"] = next_rv_locked();
  auto prev = slot;
  auto stored = std::make_shared<const Json>(std::move(next));
  slot = stored;
  emit_locked("/pods", "MODIFIED", stored, prev);
  return stored;
}

}  // namespace kai::apiserver
