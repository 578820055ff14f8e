#pragma once
// `kai-log replay`: re-runs recorded cycles and reports every decision that differs from the log
// (docs/determinism-and-replay.md "Replay").
//
// It streams the log once and holds neither the log nor its decisions in memory:
//   1. From the first retained event (retention may have deleted the front), it looks for the first
//      cycle to replay: the CycleStart of --from-cycle, or without it the first one whose recorded
//      position can be restored (a readable snapshot at or before it, or an untrimmed log).
//   2. It restores the state at that position with storage::restore_state (the newest snapshot at or
//      before it + the events after it).
//   3. It streams on: each later CycleStart brings the state forward to its recorded position and runs
//      the core on it with the cycle's clock, seed and configuration; the recorded decisions of a
//      cycle follow its CycleStart and are compared when the cycle ends (its CycleEnd, the next
//      CycleStart or the end of the log). A decision logged after that is reported as a difference.
// A cycle's position precedes its CycleStart, so the events in between are held back in a window
// (bounded by ReplayOptions::window_bytes) until the cycle runs; those that fell out of it are read
// again from the log.
// The configuration bodies come from the ConfigChange records seen while streaming from the first
// retained event; a cycle whose body retention deleted (or that never was logged) is reported as not
// replayed.

#include <cstddef>
#include <cstdint>
#include <ostream>

#include "storage/event_log.hpp"

namespace kai::kailog {

/// Options of replay().
struct ReplayOptions {
  /// First cycle to replay; 0 means the first cycle whose position can be restored, and earlier
  /// cycles whose events retention deleted are skipped with a note. Default: 0.
  uint64_t from_cycle = 0;
  /// Bytes of events held between a cycle's recorded position and the CycleStart being read (about
  /// their encoded size); events beyond it are read again from the log when the cycle runs.
  /// Default: 64 MiB.
  size_t window_bytes = 64u << 20;
};

/// Replays `log` as `kai-log replay` does: differences and the summary line to `out`, notes and
/// skipped records to `err`. Returns the exit code: 0 without differences; 1 when a decision
/// differs, a record was unreadable or a cycle's configuration is missing; 2 when the database cannot
/// be read or --from-cycle names a cycle whose position retention deleted with no snapshot covering
/// it (the message names the first cycle that can be replayed).
int replay(const storage::EventLog& log, const ReplayOptions& options, std::ostream& out, std::ostream& err);

}  // namespace kai::kailog
