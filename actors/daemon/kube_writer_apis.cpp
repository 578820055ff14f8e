#include "actors/daemon/kube_writer_apis.hpp"

#include <nlohmann/json.hpp>

namespace kai::daemon {

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
  return client_.set_pod_condition(ns, name, type, status, reason, message).status();
}

model::Status KubeWriterApis::create_event(const EventNote& e) {
  return client_.create_event(e.ns, e.kind, e.api_version, e.name, e.uid, e.type, e.reason, e.note, e.action)
      .status();
}

model::Status KubeWriterApis::patch_pod_group_annotations(
    const std::string& ns, const std::string& name,
    const std::map<std::string, std::optional<std::string>>& annotations) {
  nlohmann::json patch;
  for (const auto& [k, v] : annotations)
    patch["metadata"]["annotations"][k] = v ? nlohmann::json(*v) : nullptr;
  const std::string path = "/apis/scheduling.run.ai/v2alpha2/namespaces/" + ns + "/podgroups/" + name;
  return client_.merge_patch(path, patch.dump()).status();
}

}  // namespace kai::daemon
