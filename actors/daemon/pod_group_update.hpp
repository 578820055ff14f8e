#pragma once
// How the PodGroup writer (pod_group_writer.hpp) updates a PodGroup that exists, as KAI's pod
// grouper does (docs/pod-grouping.md "Objects written"): the queue and the scheduler's own spec fields
// stay, labels and annotations are merged (none removed), the ownerReferences and the rest of the
// spec are replaced. A pure function of the live object and the logged desired one.

#include <optional>
#include <string>

#include "k8s/model/status.hpp"

namespace kai::daemon {

/// The object to PUT so that `live_json` says what `desired_json` says: nullopt when it already
/// does (core::says_the_same). The body is the live object (its resourceVersion, status and any
/// field the scheduler does not know) with the changes laid over. An error names what does not decode.
model::Result<std::optional<std::string>> pod_group_update(const std::string& live_json,
                                                           const std::string& desired_json);

}  // namespace kai::daemon
