#pragma once
// The namespace of the GPU reservation pods and the ServiceAccount they run as. KAI's operator
// creates both; without deploy/ (docs: README.md "kai-scheduler") the daemon does it at start, so that
// the ServiceAccount admission plugin does not refuse the reservation pods later.

#include "k8s/client/kube_client.hpp"
#include "k8s/model/status.hpp"

namespace kai::daemon {

/// Checks that the namespace kai-resource-reservation and its ServiceAccount kai-resource-reservation
/// exist and creates what is missing. Fails, naming the manifests to apply, when one is missing and
/// cannot be created (deploy/'s RBAC only lets the scheduler read them), or cannot be read.
model::Status ensure_reservation_namespace(k8s::KubeClient& client);

}  // namespace kai::daemon
