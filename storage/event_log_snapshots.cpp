// EventLog: snapshots of the projected state, written in checksummed parts under one manifest,
// listed, and read back whole.
#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include "storage/crc32c.hpp"
#include "storage/event_log_internal.hpp"

namespace kai::storage {
namespace {

void put_le(std::string& out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
}

uint64_t get_le(std::string_view b, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i)
    v |= static_cast<uint64_t>(static_cast<uint8_t>(b[static_cast<size_t>(i)])) << (8 * i);
  return v;
}

/// Snapshots are stored in parts of this size, so that no RocksDB value is huge.
constexpr size_t kSnapshotPart = 4u << 20;

std::string snapshot_part_key(uint64_t seq, uint32_t part) {
  std::string k = seq_key(seq);
  for (int i = 3; i >= 0; --i) k.push_back(static_cast<char>(part >> (8 * i)));
  return k;
}

}  // namespace

Status EventLog::write_snapshot(uint64_t seq, std::string bytes) {
  if (options_.read_only) return Status::error("event log opened read-only");
  if (LogHealth h = health(); !h.writable()) return Status::error("snapshot " + std::to_string(seq) + ": " + h.message);
  if (seq == 0 || seq > last_seq()) {
    return Status::error("snapshot at " + std::to_string(seq) + " is past the log's end " +
                         std::to_string(last_seq()));
  }
  // At 150,000 pods a snapshot is about 80 MB, and it is held in memory up to three times here: the
  // text, the batch, the memtable until the flush. The batch is sized once (grown by doubling it
  // held twice the text at the end) and the text is let go once the batch holds it
  // (bench/README.md "A snapshot held once less").
  const uint64_t parts = (bytes.size() + kSnapshotPart - 1) / kSnapshotPart;
  constexpr size_t kPerRecord = 64;  // a batch record's tag, column family, lengths, key and checksum
  rocksdb::Status ws;
  {
    rocksdb::WriteBatch wb(bytes.size() + (parts + 2) * kPerRecord);
    std::string value;
    for (uint64_t p = 0; p < parts; ++p) {
      const std::string key = snapshot_part_key(seq, static_cast<uint32_t>(p));
      const std::string_view chunk = std::string_view(bytes).substr(p * kSnapshotPart, kSnapshotPart);
      value.clear();
      put_le(value, crc32c(key, crc32c(chunk)), 4);
      value.append(chunk);
      wb.Put(snapshots_cf_, key, value).PermitUncheckedError();
    }
    std::string manifest;
    put_le(manifest, parts, 4);
    put_le(manifest, bytes.size(), 8);
    put_le(manifest, crc32c(manifest), 4);
    wb.Put(snapshots_cf_, seq_key(seq), manifest).PermitUncheckedError();
    std::string().swap(bytes);
    std::string().swap(value);
    rocksdb::WriteOptions wo;
    // Without the WAL a snapshot costs the event writer nothing; it is durable once flushed below,
    // and a crash before that loses only this snapshot (the previous one and the log still cover it).
    wo.disableWAL = true;
    ws = db_->Write(wo, &wb);
  }  // the batch goes before the flush: the memtable holds the snapshot now
  note_write_error(ws);
  if (Status st = from_rocks(ws, "write snapshot " + std::to_string(seq)); !st) return st;
  rocksdb::FlushOptions fo;
  fo.wait = true;
  fo.allow_write_stall = true;
  rocksdb::Status fs = db_->Flush(fo, snapshots_cf_);
  note_write_error(fs);
  return from_rocks(fs, "flush snapshot " + std::to_string(seq));
}

Result<std::vector<SnapshotInfo>> EventLog::snapshots() const {
  std::vector<SnapshotInfo> out;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), snapshots_cf_));
  for (it->SeekToFirst(); it->Valid();) {
    const std::string_view key = it->key().ToStringView();
    const std::string_view value = it->value().ToStringView();
    if (key.size() != 8) {  // a part whose manifest is gone (a damaged snapshot): go on
      it->Next();
      continue;
    }
    // A manifest of the wrong size is listed all the same, so that verify and restore report it.
    const uint64_t seq = decode_seq(key);
    out.push_back({seq, value.size() == 16 ? get_le(value.substr(4), 8) : 0});
    // Skip the parts (megabytes each) instead of reading them: the next manifest is past them.
    if (seq == UINT64_MAX) break;
    it->Seek(seq_key(seq + 1));
  }
  if (!it->status().ok()) return from_rocks(it->status(), "list snapshots");
  return out;
}

Result<std::string> EventLog::read_snapshot(uint64_t seq) const {
  const std::string where = "snapshot " + std::to_string(seq) + ": ";
  std::string manifest;
  rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), snapshots_cf_, seq_key(seq), &manifest);
  if (s.IsNotFound()) return Status::error(where + "not found");
  if (!s.ok()) return from_rocks(s, where + "read");
  if (manifest.size() != 16 ||
      get_le(std::string_view(manifest).substr(12), 4) != crc32c(manifest.substr(0, 12))) {
    return Status::error(where + "damaged manifest");
  }
  const uint64_t parts = get_le(manifest, 4);
  const uint64_t total = get_le(std::string_view(manifest).substr(4), 8);
  if (total > parts * kSnapshotPart || parts > total / kSnapshotPart + 1) {
    return Status::error(where + "damaged manifest (size)");
  }
  std::string out;
  out.reserve(total);
  for (uint64_t p = 0; p < parts; ++p) {
    const std::string key = snapshot_part_key(seq, static_cast<uint32_t>(p));
    std::string value;
    s = db_->Get(rocksdb::ReadOptions(), snapshots_cf_, key, &value);
    if (s.IsNotFound()) return Status::error(where + "part " + std::to_string(p) + " missing");
    if (!s.ok()) return from_rocks(s, where + "read");
    if (value.size() < 4) return Status::error(where + "part " + std::to_string(p) + " too short");
    const std::string_view chunk = std::string_view(value).substr(4);
    if (get_le(value, 4) != crc32c(key, crc32c(chunk))) {
      return Status::error(where + "part " + std::to_string(p) + " checksum mismatch");
    }
    out.append(chunk);
  }
  if (out.size() != total) return Status::error(where + "size differs from its manifest");
  return out;
}

}  // namespace kai::storage
