#include "storage/restore.hpp"

#include "events/state_codec.hpp"

namespace kai::storage {
namespace {

/// Warnings kept per restore: a log with many bad records should not bury the first ones.
constexpr size_t kMaxWarnings = 20;

void warn(Restored& r, std::string message) {
  if (r.warnings.size() < kMaxWarnings) r.warnings.push_back(std::move(message));
}

}  // namespace

Result<Restored> restore_state(const EventLog& log, uint64_t at) {
  Restored out;
  const uint64_t end = std::min(at, log.last_seq());
  auto snaps = log.snapshots();
  if (!snaps) return snaps.status();
  for (auto it = snaps->rbegin(); it != snaps->rend(); ++it) {
    if (it->seq > end) continue;
    auto bytes = log.read_snapshot(it->seq);
    if (!bytes) {
      warn(out, bytes.message() + "; trying an older one");
      continue;
    }
    auto state = events::decode_state(*bytes);
    if (!state) {
      warn(out, "snapshot " + std::to_string(it->seq) + ": " + state.message() + "; trying an older one");
      continue;
    }
    out.state = std::move(state).value();
    out.snapshot_seq = it->seq;
    out.upgraded = events::state_version(*bytes) < events::kStateSnapshotVersion;
    break;
  }
  if (out.snapshot_seq == 0 && log.retained_from() > 1) {
    return Status::error("events before " + std::to_string(log.retained_from()) +
                         " were deleted by retention and no readable snapshot at or before " +
                         std::to_string(end) + " covers them");
  }
  if (end <= out.snapshot_seq) return out;
  Status st = log.read(out.snapshot_seq + 1, end, [&](uint64_t seq, const Result<events::Event>& e) {
    if (!e) {
      ++out.skipped_records;
      warn(out, "record " + std::to_string(seq) + " skipped: " + e.message());
      return true;
    }
    ++out.tail_events;
    if (!events::apply(out.state, *e)) ++out.rejected_objects;
    return true;
  });
  if (!st) return st;
  out.state.seq = std::max(out.state.seq, end);
  return out;
}

}  // namespace kai::storage
