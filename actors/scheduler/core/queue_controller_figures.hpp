#pragma once
// A Queue as KAI's queue-controller metrics report it (docs/status.md "Metrics"), on its own so that
// the metrics endpoint names it without the session's headers.

#include <string>

namespace kai::core {

struct QueueControllerFigures {
  std::string name;
  std::string display_name;
  double deserved_gpus = 0;       ///< spec.resources.gpu.quota (-1: unlimited)
  double quota_cpu_cores = 0;     ///< spec.resources.cpu.quota / 1000 (-1: unlimited)
  double quota_memory_bytes = 0;  ///< spec.resources.memory.quota x 10^6 (-1: unlimited)
  double allocated_gpus = 0;      ///< From the status's allocated list.
  double allocated_cpu_cores = 0;
  double allocated_memory_bytes = 0;
};

}  // namespace kai::core
