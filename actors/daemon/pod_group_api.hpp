#pragma once
// The write the PodGroup writer (pod_group_writer.hpp) makes, as a narrow port: the daemon implements
// it with the Kubernetes client (kube_pod_group_api.hpp), tests with an in-memory fake. Called from
// the writer's one thread.

#include <map>
#include <optional>
#include <string>

#include "k8s/model/status.hpp"

namespace kai::daemon {

class PodGroupApi {
 public:
  virtual ~PodGroupApi() = default;

  /// Sets (value) or removes (nullopt) annotations of PodGroup `ns/name` with one merge patch.
  /// kNotFound when the PodGroup is gone.
  virtual model::Status patch_pod_group_annotations(
      const std::string& ns, const std::string& name,
      const std::map<std::string, std::optional<std::string>>& annotations) = 0;
};

}  // namespace kai::daemon
