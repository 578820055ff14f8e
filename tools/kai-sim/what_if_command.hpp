#pragma once
// kai-sim --what-if's command: reads the workload file and what the cluster's source says about
// running pods (the snapshot's text, or the event log's pod history), asks what_if.hpp and prints
// the answer. Separate from main.cpp, which reads the cluster and the session's options for both
// kai-sim's modes.

#include <cstdint>
#include <string>
#include <string_view>

#include "actors/scheduler/core/session.hpp"
#include "events/schedule_records.hpp"
#include "k8s/model/objects.hpp"
#include "tools/kai-sim/what_if.hpp"

namespace kai::sim {

struct WhatIfRequest {
  std::string workload_path;
  std::string snapshot_text;  ///< With --snapshot: its text (the pods' start and deadline).
  std::string log_dir;        ///< With --log: the log (the pods' start, deadline and run history).
  uint64_t log_at = UINT64_MAX;
  bool json = false;
};

/// The question: the workload in `workload_text` checked against `cluster` (what_if_workload.hpp),
/// and the running pods' expected completions from the request's snapshot text or log. Fails with
/// a message for the user (the workload's or the log's).
model::Result<WhatIfInput> what_if_input(const WhatIfRequest& request, std::string_view workload_text,
                                         model::ClusterObjects cluster, events::ScheduleRecords records,
                                         const core::SessionOptions& options);

/// Prints the answer on stdout and returns 0, or prints "<file>: <why>" on stderr and returns 2.
int run_what_if(const WhatIfRequest& request, model::ClusterObjects cluster, events::ScheduleRecords records,
                const core::SessionOptions& options);

}  // namespace kai::sim
