#pragma once
// The pacing of the PodGroup and Queue status writes (docs/status.md "Written from the log").

#include <chrono>

namespace kai::daemon {

/// How status writes are paced (docs/status.md "Pacing"): a status reports, so it may wait for the
/// changes around it to settle and go out as one call.
struct StatusPacing {
  /// A status write waits this long after it was first asked, so that a pending group bound a moment
  /// later is written once, with both its requests and its allocation.
  std::chrono::milliseconds settle{1000};
  /// At least this long between two writes of the same PodGroup's / Queue's status: a queue whose
  /// allocation changes every cycle while a burst binds is written every few seconds, not every cycle.
  std::chrono::milliseconds pod_group_interval{2000};
  std::chrono::milliseconds queue_interval{5000};
};

}  // namespace kai::daemon
