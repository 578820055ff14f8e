#pragma once
// What the daemon's event log says about how long pods run: for each owner (the first
// ownerReference), the median time its pods took from bind to Succeeded or Failed, from the
// timestamps of the pod watch events the log kept; and each pod's start and deadline as the
// log's last object showed them (the projected objects keep neither: pod_facts.hpp).

#include <cstdint>
#include <map>
#include <string>

#include "k8s/model/status.hpp"
#include "tools/kai-sim/pod_facts.hpp"

namespace kai::sim {

struct RunHistory {
  /// Owner uid -> the median run time, seconds, of its pods that ran to Succeeded or Failed.
  std::map<std::string, int64_t> median_run_seconds;
  /// "namespace/name" -> the pod as the last watch event up to the position showed it.
  std::map<std::string, PodFacts> pods;
};

/// The history in the log at `dir` up to record `at` (UINT64_MAX: its end), read-only. A pod's run
/// starts at the first event showing it on a node and ends at the first showing it finished.
model::Result<RunHistory> read_run_history(const std::string& dir, uint64_t at);

}  // namespace kai::sim
