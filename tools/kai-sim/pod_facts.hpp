#pragma once
// The pod fields what-if reads that the model leaves out (k8s/model/objects.hpp keeps only what the
// scheduler reads): when a pod started (status.startTime) and how long it may run
// (spec.activeDeadlineSeconds), with what identifies it and its progress. Read from the text the
// objects came from: a snapshot file, or a watch event's object as the event log keeps it.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace kai::sim {

struct PodFacts {
  std::string key;        ///< "namespace/name"
  std::string uid;
  std::string owner_uid;  ///< The first ownerReference's uid; empty without one.
  std::string node_name;  ///< spec.nodeName
  std::string phase;      ///< status.phase
  std::optional<int64_t> start_time;               ///< status.startTime, Unix seconds.
  std::optional<int64_t> active_deadline_seconds;  ///< spec.activeDeadlineSeconds
};

/// Calls `f` for each pod in `text`: JSON or YAML, one object, an array, a List or several YAML
/// documents. With `all_pods` every object counts as a pod (a watch event of kind Pod, whose
/// relisted items carry no kind); otherwise only objects of kind Pod. Text that does not parse
/// gives no pods: the decoders that read the same text report it.
void for_each_pod(std::string_view text, bool all_pods, const std::function<void(const PodFacts&)>& f);

}  // namespace kai::sim
