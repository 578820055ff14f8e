#pragma once
// API discovery of the owner kinds the pod grouper reads: which of them the API server serves, at
// which version and path, so that a reflector per kind brings their objects into the log. Asked at
// start and again whenever a CustomResourceDefinition changes (an operator installed later).

#include <string>
#include <vector>

#include "k8s/client/kube_client.hpp"
#include "k8s/model/status.hpp"

namespace kai::k8s {

struct OwnerResource {
  std::string group_kind;   ///< "JobSet.jobset.x-k8s.io": the watch kind it is logged as
  std::string api_version;  ///< "jobset.x-k8s.io/v1alpha2" (the group's preferred version)
  std::string list_path;    ///< "/apis/jobset.x-k8s.io/v1alpha2/jobsets"
  bool operator==(const OwnerResource&) const = default;
};

/// The served owner kinds of model::grouped_owner_kinds(), in name order. An API group that cannot be
/// read is left out with the error in `warnings`; only /apis itself failing fails the call.
model::Result<std::vector<OwnerResource>> discover_owner_kinds(KubeClient& client, std::vector<std::string>& warnings);

}  // namespace kai::k8s
