#pragma once
// `kai-log usage` (docs/time-based-fair-share.md "Reading it back"): each queue's time-based fair
// share usage over time, as the logged cycles computed it from the allocation history in the log.

#include <cstdint>
#include <ostream>
#include <string>

#include "storage/event_log.hpp"

namespace kai::kailog {

struct UsageReportOptions {
  std::string queue;       ///< Only this queue; empty = every queue.
  int64_t since_ms = 0;    ///< Only fetch steps at or after this time (Unix milliseconds).
};

/// Writes one JSON line per queue and fetch step at which a logged cycle ran: the evaluation time,
/// the queue's usage (a share of the cluster's capacity per resource) and what it held then. Starts
/// from the snapshot below the first record when retention trimmed the log. Returns the exit code.
int report_usage(const storage::EventLog& log, const UsageReportOptions& options, std::ostream& out,
                 std::ostream& err);

}  // namespace kai::kailog
