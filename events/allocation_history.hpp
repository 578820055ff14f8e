#pragma once
// The allocation history time-based fair share reads (docs/time-based-fair-share.md): each queue's
// allocation and the cluster's capacity as step functions, folded from the cycles' AllocationChange
// records (events/event.hpp) into ScheduleRecords, so that the daemon, kai-sim and replay compute
// the same usage from the same log.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace kai::events {

/// One step of an allocation history: from `at_ms` on (until the next step) the queue held, or the
/// cluster had, these quantities (GPUs, CPU millicores, memory bytes).
struct AllocationStep {
  int64_t at_ms = 0;
  double gpu = 0;
  double cpu = 0;
  double memory = 0;
  bool operator==(const AllocationStep&) const = default;
  /// Whether both hold the same quantities (whenever they start).
  bool same_amounts(const AllocationStep& o) const { return gpu == o.gpu && cpu == o.cpu && memory == o.memory; }
};

/// Each queue's allocation and the cluster's capacity, steps in time order. Before a queue's first
/// step it held nothing; samples before the capacity's first step do not exist (the history had not
/// begun).
struct AllocationHistory {
  std::map<std::string, std::vector<AllocationStep>> queues;
  std::vector<AllocationStep> capacity;
  bool operator==(const AllocationHistory&) const = default;
  bool empty() const { return queues.empty() && capacity.empty(); }
};

}  // namespace kai::events
