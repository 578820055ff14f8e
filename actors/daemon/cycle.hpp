#pragma once
// One scheduling cycle on a consistent snapshot, without any I/O: the core's session and actions,
// and what the status writer and metrics need from it. The same inputs (objects, configuration, now,
// seed) give the same decisions, which is what replay relies on.

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "actors/scheduler/core/session.hpp"
#include "events/event.hpp"
#include "k8s/model/objects.hpp"

namespace kai::daemon {

/// A pending pod and why it waits (KAI's message), for its PodScheduled condition.
struct PendingPod {
  std::string pod;  ///< "namespace/name"
  std::string uid;
  std::string message;
};

struct QueueFigures {
  std::string name;
  double fair_gpu = 0, fair_cpu = 0, fair_memory = 0;
  double used_gpu = 0, used_cpu = 0, used_memory = 0;
};

struct CycleOutput {
  std::vector<events::Decision> decisions;
  std::vector<events::UnschedulableEvent> unschedulable;
  std::vector<PendingPod> pending;
  std::vector<QueueFigures> queues;
  std::vector<std::pair<std::string, uint64_t>> action_us;
  uint64_t build_us = 0;
  uint64_t total_us = 0;
  std::vector<std::string> warnings;  ///< Bad input found while building the session.
};

/// Runs the configured actions once on `objects` (a cut of the entity actors: nothing is copied).
CycleOutput run_cycle(const model::ObjectRefs& objects, const core::SessionOptions& options,
                      uint64_t cycle_id);

}  // namespace kai::daemon
