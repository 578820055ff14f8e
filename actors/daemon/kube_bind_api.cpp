#include "actors/daemon/kube_bind_api.hpp"

namespace kai::daemon {

model::Status KubeBindApi::bind_pod(const std::string& ns, const std::string& name, const std::string& uid,
                                    const std::string& node) {
  return client_.bind_pod(ns, name, uid, node).status();
}

model::Result<std::string> KubeBindApi::pod_node(const std::string& ns, const std::string& name,
                                                 const std::string& uid) {
  return client_.pod_node(ns, name, uid);
}

model::Status KubeBindApi::delete_pod(const std::string& ns, const std::string& name, const std::string& uid,
                                      int64_t grace_seconds) {
  return client_.delete_pod(ns, name, uid, grace_seconds).status();
}

}  // namespace kai::daemon
