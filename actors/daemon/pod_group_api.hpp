#pragma once
// The calls the PodGroup writer (pod_group_writer.hpp) makes, as a narrow port: the daemon implements
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

  /// PodGroup `ns/name` as the API server holds it (JSON); kNotFound when there is none.
  virtual model::Result<std::string> get_pod_group(const std::string& ns, const std::string& name) = 0;

  /// Creates the PodGroup `object_json` in `ns`; kConflict when one of its name exists.
  virtual model::Status create_pod_group(const std::string& ns, const std::string& object_json) = 0;

  /// Replaces PodGroup `ns/name` with `object_json`, whose metadata.resourceVersion is the one read:
  /// kConflict when the object changed since.
  virtual model::Status update_pod_group(const std::string& ns, const std::string& name,
                                         const std::string& object_json) = 0;

  /// Sets the pod's `pod-group-name` annotation to `group` and, when `sub_group` is not empty, its
  /// kai.scheduler/subgroup-name label, with one merge patch guarded by the pod's `uid` (a pod
  /// recreated under the name is kConflict or kNotFound).
  virtual model::Status annotate_pod(const std::string& ns, const std::string& name, const std::string& uid,
                                     const std::string& group, const std::string& sub_group) = 0;

  /// Merge-patches the status subresource of `kind` ("PodGroup", or "Queue" with `ns` empty) `name`
  /// with `patch_json` ({"status": {...}}), guarded by the object's `uid` (kConflict when it was
  /// recreated); kNotFound when it is gone.
  virtual model::Status patch_status(const std::string& kind, const std::string& ns, const std::string& name,
                                     const std::string& uid, const std::string& patch_json) = 0;
};

}  // namespace kai::daemon
