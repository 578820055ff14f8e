#pragma once
// Helpers shared by the files that implement EventLog (event_log*.cpp): RocksDB errors as Status,
// sequence keys read back, and the audit index's compaction filter. Internal to kai_storage.

#include <rocksdb/status.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "storage/event_log.hpp"

namespace rocksdb {
class CompactionFilter;
}  // namespace rocksdb

namespace kai::storage {

/// A RocksDB status as a Status (kNoSpace for a full disk), `what` saying what failed.
inline Status from_rocks(const rocksdb::Status& s, std::string_view what) {
  if (s.ok()) return Status::ok();
  if (s.IsNoSpace()) return Status::error(model::Code::kNoSpace, "disk full: " + std::string(what) + ": " + s.ToString());
  return Status::error(std::string(what) + ": " + s.ToString());
}

/// The sequence number of an 8-byte big-endian key (seq_key's inverse).
inline uint64_t decode_seq(std::string_view key) {
  uint64_t v = 0;
  for (char c : key) v = (v << 8) | static_cast<uint8_t>(c);
  return v;
}

/// The audit column family's compaction filter: drops entries of events retention deleted.
std::unique_ptr<rocksdb::CompactionFilter> make_audit_retention_filter(const std::atomic<uint64_t>* retained_from);

}  // namespace kai::storage
