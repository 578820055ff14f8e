#include "actors/daemon/kube_writer_apis.hpp"

#include <nlohmann/json.hpp>

#include "k8s/model/well_known_names.hpp"

namespace kai::daemon {
namespace {

std::string pod_group_path(const std::string& ns, const std::string& name) {
  const std::string collection = "/apis/scheduling.run.ai/v2alpha2/namespaces/" + ns + "/podgroups";
  return name.empty() ? collection : collection + "/" + name;
}

}  // namespace

model::Status KubeWriterApis::bind_pod(const std::string& ns, const std::string& name, const std::string& uid,
                                       const std::string& node) {
  return client_.bind_pod(ns, name, uid, node).status();
}

model::Result<std::string> KubeWriterApis::pod_node(const std::string& ns, const std::string& name,
                                                    const std::string& uid) {
  return client_.pod_node(ns, name, uid);
}

model::Status KubeWriterApis::delete_pod(const std::string& ns, const std::string& name,
                                         const std::string& uid, int64_t grace_seconds) {
  return client_.delete_pod(ns, name, uid, grace_seconds).status();
}

model::Status KubeWriterApis::set_pod_condition(const std::string& ns, const std::string& name,
                                                const std::string& type, const std::string& status,
                                                const std::string& reason, const std::string& message) {
  wait_turn();
  return client_.set_pod_condition(ns, name, type, status, reason, message).status();
}

model::Status KubeWriterApis::create_event(const EventNote& e) {
  wait_turn();
  return client_.create_event(e.ns, e.kind, e.api_version, e.name, e.uid, e.type, e.reason, e.note, e.action)
      .status();
}

model::Status KubeWriterApis::patch_pod_group_annotations(
    const std::string& ns, const std::string& name,
    const std::map<std::string, std::optional<std::string>>& annotations) {
  wait_turn();
  nlohmann::json patch;
  for (const auto& [k, v] : annotations)
    patch["metadata"]["annotations"][k] = v ? nlohmann::json(*v) : nullptr;
  return client_.merge_patch(pod_group_path(ns, name), patch.dump()).status();
}

model::Result<std::string> KubeWriterApis::get_pod_group(const std::string& ns, const std::string& name) {
  wait_turn();
  k8s::ApiResult r = client_.get(pod_group_path(ns, name));
  if (!r.ok()) return r.status("PodGroup " + ns + "/" + name);
  return std::move(r.body);
}

model::Status KubeWriterApis::create_pod_group(const std::string& ns, const std::string& object_json) {
  wait_turn();
  return client_.create_object(pod_group_path(ns, ""), object_json).status();
}

model::Status KubeWriterApis::update_pod_group(const std::string& ns, const std::string& name,
                                               const std::string& object_json) {
  wait_turn();
  // A PUT carries the resourceVersion read, so a retry after a lost answer is refused, not doubled.
  return client_.request("PUT", pod_group_path(ns, name), object_json, "application/json", true).status();
}

model::Status KubeWriterApis::patch_status(const std::string& kind, const std::string& ns, const std::string& name,
                                           const std::string& uid, const std::string& patch_json) {
  wait_turn();
  nlohmann::json patch = nlohmann::json::parse(patch_json, nullptr, false);
  if (!patch.is_object()) return model::Status::error(kind + " " + name + ": the logged status patch is not JSON");
  patch["metadata"]["uid"] = uid;  // the API server refuses the patch if the object was recreated
  const std::string path = kind == "Queue" ? "/apis/scheduling.run.ai/v2/queues/" + name : pod_group_path(ns, name);
  return client_.merge_patch(path + "/status", patch.dump()).status();
}

model::Status KubeWriterApis::annotate_pod(const std::string& ns, const std::string& name, const std::string& uid,
                                           const std::string& group, const std::string& sub_group) {
  wait_turn();
  nlohmann::json patch;
  patch["metadata"]["uid"] = uid;  // the API server refuses the patch if the pod was recreated
  patch["metadata"]["annotations"][model::kPodGroupNameAnnotation] = group;
  if (!sub_group.empty()) patch["metadata"]["labels"][model::kSubGroupLabel] = sub_group;
  return client_.merge_patch("/api/v1/namespaces/" + ns + "/pods/" + name, patch.dump()).status();
}

}  // namespace kai::daemon
