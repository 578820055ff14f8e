#pragma once
// Rebuilding the projected state from the log: the newest readable snapshot at or before the wanted
// position, then the events after it (so that a restart never reads the whole log: docs/determinism-and-replay.md "Restore"). Used by the
// daemon's start, `kai-log snapshot export` and `kai-log replay`.

#include <cstdint>
#include <string>
#include <vector>

#include "events/projection.hpp"
#include "storage/event_log.hpp"

namespace kai::storage {

struct Restored {
  events::ClusterState state;     ///< The projection of the log up to `at` (or its end).
  uint64_t snapshot_seq = 0;      ///< The snapshot it started from; 0 = from the first event.
  uint64_t tail_events = 0;       ///< Events applied after the snapshot.
  uint64_t skipped_records = 0;   ///< Records that failed their checksum or decoding (not applied).
  uint64_t rejected_objects = 0;  ///< Watch objects the decoders refused (the state kept the old one).
  /// The snapshot was of an older format (events::state_version): objects or fields it did not keep
  /// are missing until the API server is listed again.
  bool upgraded = false;
  /// What a person should know: snapshots passed over as damaged, the first skipped records.
  std::vector<std::string> warnings;
};

/// The state after event `at` (UINT64_MAX: the end of the log). A damaged snapshot is passed over
/// for an older one (a warning); fails only when no snapshot covers events retention deleted, or
/// the database cannot be read.
Result<Restored> restore_state(const EventLog& log, uint64_t at = UINT64_MAX);

}  // namespace kai::storage
