#pragma once
// kai-sim --log DIR: a session's input read from the daemon's event log (read-only, beside the live
// writer) instead of a snapshot file: the projected objects at a position, the scheduler's records
// there (assumed decisions, job state, the allocation history of time-based fair share) and the
// configuration the log names, so that the session is the one the daemon would run there.

#include <cstdint>
#include <string>

#include "events/schedule_records.hpp"
#include "k8s/model/objects.hpp"
#include "k8s/model/status.hpp"

namespace kai::sim {

struct LogInput {
  model::ClusterObjects objects;
  events::ScheduleRecords records;
  /// The configuration body and session flags the log's last ConfigChange names; empty = none logged.
  std::string config_text;
  std::string flags;
  bool has_config = false;
  uint64_t at_seq = 0;  ///< The position read.
};

/// The state of the log in `dir` after record `at` (UINT64_MAX: its end).
model::Result<LogInput> read_log_input(const std::string& dir, uint64_t at);

}  // namespace kai::sim
