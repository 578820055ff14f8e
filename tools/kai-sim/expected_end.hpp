#pragma once
// When each running pod is expected to finish (docs/what-if.md "Expected completions"): its start
// (status.startTime, else its creation) plus spec.activeDeadlineSeconds, after which the kubelet
// ends it; else, with an event log, plus the median run time of its owner's earlier pods there.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "k8s/model/objects.hpp"
#include "tools/kai-sim/pod_facts.hpp"

namespace kai::sim {

enum class EndBasis : uint8_t { kNone, kActiveDeadline, kOwnerHistory };
const char* to_string(EndBasis b);

struct ExpectedEnd {
  std::string pod;            ///< "namespace/name"
  std::optional<int64_t> at;  ///< Unix seconds; none when nothing says when it ends.
  EndBasis basis = EndBasis::kNone;
};

/// Every pod on a node that has not finished, in key order. `facts`: the pods' start and deadline by
/// key (pod_facts.hpp); `median_run_seconds`: run times by owner uid (run_history.hpp), may be empty.
std::vector<ExpectedEnd> expected_ends(const model::ClusterObjects& cluster,
                                       const std::map<std::string, PodFacts>& facts,
                                       const std::map<std::string, int64_t>& median_run_seconds);

}  // namespace kai::sim
