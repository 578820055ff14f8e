#include "actors/daemon/kube_sharing_api.hpp"

#include <nlohmann/json.hpp>

#include "actors/gpu_sharing/sharing_chain.hpp"

namespace kai::daemon {

using Json = nlohmann::json;
using model::kReservationNamespace;

namespace {

gpu_sharing::ReservationPod to_reservation(const Json& p) {
  gpu_sharing::ReservationPod r;
  const Json& m = p.value("metadata", Json::object());
  r.name = m.value("name", "");
  r.uid = m.value("uid", "");
  r.node = p.value("spec", Json::object()).value("nodeName", "");
  r.group = m.value("labels", Json::object()).value(model::kGpuGroupLabel, "");
  r.gpu_uuid = m.value("annotations", Json::object()).value(model::kGpuIndexAnnotation, "");
  r.terminating = m.contains("deletionTimestamp");
  return r;
}

}  // namespace

model::Result<std::vector<gpu_sharing::ReservationPod>> KubeSharingApi::list_reservation_pods(const std::string& group,
                                                                                             const std::string& node) {
  std::string selector = std::string("app=") + model::kReservationAppLabel;
  if (!group.empty()) selector += std::string(",") + model::kGpuGroupLabel + "=" + group;
  std::string path = k8s::core_path(model::kReservationNamespace, "pods") + "?labelSelector=" + selector;
  if (!node.empty()) path += "&fieldSelector=spec.nodeName=" + node;
  auto r = client_.get(path);
  if (!r.ok()) return r.status();
  Json list = Json::parse(r.body, nullptr, false);
  std::vector<gpu_sharing::ReservationPod> out;
  if (!list.is_object()) return model::Status::error(model::Code::kInvalid, "the answer is not a List");
  for (const auto& p : list.value("items", Json::array())) out.push_back(to_reservation(p));
  return out;
}

model::Result<std::string> KubeSharingApi::create_reservation_pod(const gpu_sharing::ReservationPodSpec& spec) {
  Json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata",
               {{"name", spec.name},
                {"namespace", model::kReservationNamespace},
                {"labels", {{"app", model::kReservationAppLabel}, {model::kGpuGroupLabel, spec.group}}},
                {"annotations", {{"karpenter.sh/do-not-disrupt", "true"}}}}},
              {"spec",
               {{"nodeName", spec.node},
                {"serviceAccountName", "kai-resource-reservation"},
                {"restartPolicy", "Always"},
                {"terminationGracePeriodSeconds", 0},
                {"tolerations", Json::array({{{"key", "nvidia.com/gpu"}, {"operator", "Exists"}}})},
                {"containers",
                 Json::array({{{"name", "resource-reservation"},
                               {"image", spec.image},
                               {"resources",
                                {{"requests", {{"nvidia.com/gpu", "1"}}}, {"limits", {{"nvidia.com/gpu", "1"}}}}},
                               {"env", Json::array({{{"name", "POD_NAME"},
                                                     {"valueFrom", {{"fieldRef", {{"fieldPath", "metadata.name"}}}}}},
                                                    {{"name", "POD_NAMESPACE"},
                                                     {"valueFrom",
                                                      {{"fieldRef", {{"fieldPath", "metadata.namespace"}}}}}}})}}})}}}};
  if (!spec.runtime_class.empty()) pod["spec"]["runtimeClassName"] = spec.runtime_class;
  for (const auto& t : spec.tolerations) {
    if (t.key == "nvidia.com/gpu" && t.op == "Exists" && t.effect.empty()) continue;  // already there
    Json tol = {{"operator", t.op}};
    if (!t.key.empty()) tol["key"] = t.key;
    if (!t.value.empty()) tol["value"] = t.value;
    if (!t.effect.empty()) tol["effect"] = t.effect;
    pod["spec"]["tolerations"].push_back(std::move(tol));
  }
  auto r = client_.create_pod(model::kReservationNamespace, pod.dump());
  if (!r.ok()) return r.status();
  Json created = Json::parse(r.body, nullptr, false);
  return created.is_object() ? created["metadata"].value("uid", "") : std::string();
}

model::Result<std::string> KubeSharingApi::reported_gpu_uuid(const std::string& name) {
  auto r = client_.get(k8s::core_path(model::kReservationNamespace, "pods", name));
  if (r.not_found()) return model::Status::error(model::Code::kNotFound, "the reservation pod is gone");
  if (!r.ok()) return r.status("reading reservation pod " + name);
  Json p = Json::parse(r.body, nullptr, false);
  if (!p.is_object()) return model::Status::error(model::Code::kInvalid, "reservation pod " + name + ": not an object");
  const gpu_sharing::ReservationPod pod = to_reservation(p);
  if (pod.terminating) return model::Status::error(model::Code::kNotFound, "the reservation pod is being deleted");
  return pod.gpu_uuid;
}

model::Status KubeSharingApi::delete_pod(const std::string& ns, const std::string& name, const std::string& uid) {
  auto r = client_.delete_pod(ns, name, uid, 0);
  return r.ok() || r.not_found() ? model::Status::ok() : r.status();
}

model::Status KubeSharingApi::upsert_config_map(const std::string& ns, const std::string& name,
                                                const std::string& owner_name, const std::string& owner_uid,
                                                const std::map<std::string, std::string>& data) {
  Json cm = {{"apiVersion", "v1"},
             {"kind", "ConfigMap"},
             {"metadata",
              {{"name", name},
               {"namespace", ns},
               {"ownerReferences",
                Json::array({{{"apiVersion", "v1"}, {"kind", "Pod"}, {"name", owner_name}, {"uid", owner_uid}}})}}},
             {"data", data}};
  auto r = client_.create_object(k8s::core_path(ns, "configmaps"), cm.dump());
  if (r.ok()) return model::Status::ok();
  if (r.code != 409) return r.status("configmap " + ns + "/" + name);
  Json patch = {{"metadata", {{"ownerReferences", cm["metadata"]["ownerReferences"]}}}, {"data", data}};
  r = client_.merge_patch(k8s::core_path(ns, "configmaps", name), patch.dump());
  return r.status("configmap " + ns + "/" + name);
}

model::Status KubeSharingApi::patch_pod_labels(const std::string& ns, const std::string& name,
                                               const std::map<std::string, std::optional<std::string>>& labels) {
  return client_.patch_pod_metadata(ns, name, labels).status();
}

void KubeSharingApi::warn(const std::string& ns, const std::string& name, const std::string& reason,
                          const std::string& message) {
  (void)client_.create_event(ns, "Pod", "v1", name, "", "Warning", reason, message, "Binding");
}

}  // namespace kai::daemon
