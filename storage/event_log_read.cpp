// EventLog: reading the log back: ranges of events with their checksums checked, verify, the
// audit index, meta values, raw records (for tools and tests) and stats.
#include <rocksdb/db.h>

#include <cstdio>
#include <map>

#include "events/event_codec.hpp"
#include "events/state_codec.hpp"
#include "storage/crc32c.hpp"
#include "storage/event_log_internal.hpp"

namespace kai::storage {
namespace {

uint32_t get_le32(std::string_view b) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(static_cast<uint8_t>(b[i])) << (8 * i);
  return v;
}

/// Checks the frame of a stored value and decodes the event in it.
Result<events::Event> decode_value(uint64_t seq, std::string_view key, std::string_view value) {
  if (value.size() < 4) return Status::error("record shorter than its checksum");
  std::string_view body = value.substr(4);
  uint32_t want = get_le32(value);
  uint32_t got = crc32c(key, crc32c(body));
  if (want != got) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "checksum mismatch (stored %08x, computed %08x)", want, got);
    return Status::error(buf);
  }
  auto e = events::decode_event(body);
  if (!e) return Status::error("decode: " + e.message());
  e.value().seq = seq;
  return e;
}

std::string hex(std::string_view s) {
  static const char* d = "0123456789abcdef";
  std::string out;
  for (char c : s) {
    out.push_back(d[static_cast<uint8_t>(c) >> 4]);
    out.push_back(d[static_cast<uint8_t>(c) & 15]);
  }
  return out;
}

}  // namespace

Status EventLog::read(uint64_t from, uint64_t to,
                      const std::function<bool(uint64_t, const Result<events::Event>&)>& f) const {
  rocksdb::ReadOptions ro;
  std::string upper = to == UINT64_MAX ? std::string() : seq_key(to + 1);
  rocksdb::Slice upper_slice(upper);
  if (!upper.empty()) ro.iterate_upper_bound = &upper_slice;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, events_cf_));
  for (it->Seek(seq_key(from)); it->Valid(); it->Next()) {
    std::string_view key = it->key().ToStringView();
    if (key.size() != 8) {
      if (!f(0, Result<events::Event>(Status::error("bad key " + hex(key))))) break;
      continue;
    }
    uint64_t seq = decode_seq(key);
    if (!f(seq, decode_value(seq, key, it->value().ToStringView()))) break;
  }
  return from_rocks(it->status(), "read");
}

Result<VerifyReport> EventLog::verify() const {
  VerifyReport rep;
  rocksdb::ReadOptions ro;
  ro.verify_checksums = true;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, events_cf_));
  uint64_t prev = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    std::string_view key = it->key().ToStringView();
    if (key.size() != 8) {
      rep.bad_keys.push_back(hex(key));
      continue;
    }
    uint64_t seq = decode_seq(key);
    ++rep.records;
    if (rep.first_seq == 0) rep.first_seq = seq;
    if (prev != 0 && seq != prev + 1) rep.gaps.emplace_back(prev, seq);
    prev = seq;
    rep.last_seq = seq;
    auto e = decode_value(seq, key, it->value().ToStringView());
    if (!e) rep.corrupt.push_back({seq, e.message()});
  }
  if (!it->status().ok()) return from_rocks(it->status(), "verify");
  // Records before retained_from were deleted on purpose; a hole right after it was not.
  rep.retained_from = retained_from();
  if (rep.records > 0 && rep.first_seq > rep.retained_from)
    rep.gaps.emplace_back(rep.retained_from - 1, rep.first_seq);
  auto snaps = snapshots();
  if (!snaps) return snaps.status();
  for (const SnapshotInfo& info : *snaps) {
    ++rep.snapshots;
    auto bytes = read_snapshot(info.seq);
    if (!bytes) {
      rep.corrupt_snapshots.push_back({info.seq, bytes.message()});
      continue;
    }
    auto state = events::decode_state(*bytes);
    if (!state) rep.corrupt_snapshots.push_back({info.seq, state.message()});
  }
  return rep;
}

Result<std::vector<uint64_t>> EventLog::audit(AuditKey dimension, std::string_view name, size_t limit) const {
  std::string prefix;
  prefix.push_back(static_cast<char>(dimension));
  prefix.append(name);
  prefix.push_back('\0');
  std::string upper = prefix;
  upper.back() = '\x01';  // names never contain NUL, so this bounds exactly the prefix
  rocksdb::ReadOptions ro;
  rocksdb::Slice upper_slice(upper);
  ro.iterate_upper_bound = &upper_slice;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, audit_cf_));
  std::vector<uint64_t> out;
  const uint64_t floor = retained_from();
  for (it->SeekToLast(); it->Valid() && out.size() < limit; it->Prev()) {
    std::string_view k = it->key().ToStringView();
    if (k.size() != prefix.size() + 8 || k.substr(0, prefix.size()) != prefix) {
      if (k < std::string_view(prefix)) break;
      continue;
    }
    const uint64_t seq = decode_seq(k.substr(prefix.size()));
    // Entries of events retention deleted stay until compaction drops them; they name nothing now.
    if (seq < floor) break;
    out.push_back(seq);
  }
  if (!it->status().ok()) return from_rocks(it->status(), "audit");
  return out;
}

Result<std::string> EventLog::get_meta(std::string_view key) const {
  std::string v;
  rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), meta_cf_, rocksdb::Slice(key.data(), key.size()), &v);
  if (s.IsNotFound()) return std::string();
  if (!s.ok()) return from_rocks(s, "get meta");
  return v;
}

Result<std::string> EventLog::get_raw(uint64_t seq) const {
  std::string v;
  rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), events_cf_, seq_key(seq), &v);
  if (!s.ok()) return from_rocks(s, "get " + std::to_string(seq));
  return v;
}

Status EventLog::put_raw(uint64_t seq, std::string_view value) {
  rocksdb::WriteOptions wo;
  wo.sync = true;
  return from_rocks(db_->Put(wo, events_cf_, seq_key(seq), rocksdb::Slice(value.data(), value.size())),
                    "put " + std::to_string(seq));
}

Result<EventLog::Stats> EventLog::stats() const {
  Stats st;
  std::map<std::string, uint64_t> kinds;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), events_cf_));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    std::string_view key = it->key().ToStringView();
    if (key.size() != 8) continue;
    uint64_t seq = decode_seq(key);
    ++st.records;
    st.bytes += key.size() + it->value().size();
    if (st.first_seq == 0) st.first_seq = seq;
    st.last_seq = seq;
    auto e = decode_value(seq, key, it->value().ToStringView());
    if (e) {
      ++kinds[events::kind_name(e->payload)];
    } else {
      ++st.undecodable;
    }
  }
  if (!it->status().ok()) return from_rocks(it->status(), "stats");
  st.by_kind.assign(kinds.begin(), kinds.end());
  st.retained_from = retained_from();
  auto snaps = snapshots();
  if (!snaps) return snaps.status();
  st.snapshots = std::move(snaps).value();
  return st;
}

}  // namespace kai::storage
