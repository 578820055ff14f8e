#pragma once
// Applies a finished session to the snapshot it was built from, as the cluster would evolve
// (KAI's integration tests do this between rounds): allocated pods are bound and running on their node
// with their GPU-group labels, evicted and releasing pods are gone, pipelined pods stay pending, and the
// PodGroup annotations the session wrote are set.

#include "actors/scheduler/core/session.hpp"
#include "k8s/model/objects.hpp"

namespace kai::core {

/// `objects` must be the snapshot `ssn` was built from; the session must not be used afterwards.
void apply_session(model::ClusterObjects& objects, const Session& ssn);

}  // namespace kai::core
