#pragma once
// The ports of the daemon's writers on the Kubernetes client: the binder's (bind_api.hpp), the status
// writer's (status_api.hpp) and the PodGroup writer's (pod_group_api.hpp). Each call is the client's
// typed call; a failure's code is the HTTP status's class (k8s::ApiResult::error_code), its message
// the answer as logs show it (ApiResult::describe). Tests put in-memory fakes behind the same ports.
// The status writer's and the PodGroup writer's calls wait at the gate while the binder has work
// (write_gate.hpp); the binder's never do.

#include "actors/daemon/bind_api.hpp"
#include "actors/daemon/pod_group_api.hpp"
#include "actors/daemon/status_api.hpp"
#include "actors/daemon/write_gate.hpp"
#include "k8s/client/kube_client.hpp"

namespace kai::daemon {

class KubeWriterApis final : public BindApi, public StatusApi, public PodGroupApi {
 public:
  /// `gate`: may be null (nothing waits).
  explicit KubeWriterApis(k8s::KubeClient& client, WriteGate* gate = nullptr) : client_(client), gate_(gate) {}

  model::Status bind_pod(const std::string& ns, const std::string& name, const std::string& uid,
                         const std::string& node) override;
  model::Result<std::string> pod_node(const std::string& ns, const std::string& name,
                                      const std::string& uid) override;
  model::Status delete_pod(const std::string& ns, const std::string& name, const std::string& uid,
                           int64_t grace_seconds) override;

  model::Status set_pod_condition(const std::string& ns, const std::string& name, const std::string& type,
                                  const std::string& status, const std::string& reason,
                                  const std::string& message) override;
  model::Status create_event(const EventNote& event) override;

  /// A JSON merge patch of metadata.annotations on scheduling.run.ai/v2alpha2 PodGroups.
  model::Status patch_pod_group_annotations(
      const std::string& ns, const std::string& name,
      const std::map<std::string, std::optional<std::string>>& annotations) override;
  model::Result<std::string> get_pod_group(const std::string& ns, const std::string& name) override;
  model::Status create_pod_group(const std::string& ns, const std::string& object_json) override;
  model::Status update_pod_group(const std::string& ns, const std::string& name,
                                 const std::string& object_json) override;
  model::Status annotate_pod(const std::string& ns, const std::string& name, const std::string& uid,
                             const std::string& group, const std::string& sub_group) override;
  model::Status patch_status(const std::string& kind, const std::string& ns, const std::string& name,
                             const std::string& uid, const std::string& patch_json) override;

 private:
  /// A deferred call's turn (write_gate.hpp).
  void wait_turn() const {
    if (gate_ != nullptr) gate_->wait_turn();
  }

  k8s::KubeClient& client_;
  WriteGate* gate_;
};

}  // namespace kai::daemon
