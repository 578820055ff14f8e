#pragma once
// Whether a node is one a pod selects (nodeSelector, required node affinity) and whose taints it
// tolerates: the predicates plugin filters with them, and topology spread's nodeAffinityPolicy /
// nodeTaintsPolicy decide with them which nodes' domains count (inter_pod_constraints.cpp).

#include "k8s/model/objects.hpp"

namespace kai::core {

/// The pod's nodeSelector and required node affinity both accept the node.
bool node_selected_by(const model::Pod& pod, const model::Node& node);

/// The pod tolerates every NoSchedule and NoExecute taint of the node.
bool taints_tolerated(const model::Pod& pod, const model::Node& node);

/// The first NoSchedule / NoExecute taint of the node the pod does not tolerate, or null.
const model::Taint* untolerated_taint(const model::Pod& pod, const model::Node& node);

}  // namespace kai::core
