// EventLog: retention. Old snapshots and events are deleted by age and size (never past the oldest
// kept snapshot), and the audit index drops the entries of deleted events in compaction.
#include <rocksdb/compaction_filter.h>
#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include "events/event_codec.hpp"
#include "storage/event_log_internal.hpp"

namespace kai::storage {
namespace {

/// Drops audit entries whose event retention deleted (the entry's key ends with the event's seq).
class AuditRetentionFilter : public rocksdb::CompactionFilter {
 public:
  explicit AuditRetentionFilter(const std::atomic<uint64_t>* retained_from) : retained_from_(retained_from) {}
  bool Filter(int /*level*/, const rocksdb::Slice& key, const rocksdb::Slice& /*value*/,
              std::string* /*new_value*/, bool* /*value_changed*/) const override {
    if (key.size() < 9) return false;
    return decode_seq(std::string_view(key.data() + key.size() - 8, 8)) <
           retained_from_->load(std::memory_order_relaxed);
  }
  const char* Name() const override { return "kai.AuditRetentionFilter"; }

 private:
  const std::atomic<uint64_t>* retained_from_;
};

}  // namespace

std::unique_ptr<rocksdb::CompactionFilter> make_audit_retention_filter(const std::atomic<uint64_t>* retained_from) {
  return std::make_unique<AuditRetentionFilter>(retained_from);
}

void EventLog::cancel_manual_compaction() {
  if (db_) db_->DisableManualCompaction();
}

uint64_t EventLog::retained_from() const {
  return retained_from_.load(std::memory_order_acquire);
}

Result<RetentionReport> EventLog::apply_retention(const RetentionPolicy& policy, int64_t now_us) {
  if (options_.read_only) return Status::error("event log opened read-only");
  std::lock_guard lock(retention_mu_);
  RetentionReport report;
  auto listed = snapshots();
  if (!listed) return listed.status();
  std::vector<SnapshotInfo> snaps = std::move(listed).value();
  const size_t keep = std::max<size_t>(1, policy.keep_snapshots);
  rocksdb::WriteOptions wo;
  wo.sync = true;
  if (snaps.size() > keep) {
    const uint64_t first_kept = snaps[snaps.size() - keep].seq;
    Status st =
        from_rocks(db_->DeleteRange(wo, snapshots_cf_, seq_key(snaps.front().seq), seq_key(first_kept)),
                   "delete snapshots");
    if (!st) return st;
    report.snapshots_deleted = snaps.size() - keep;
    snaps.erase(snaps.begin(), snaps.end() - static_cast<std::ptrdiff_t>(keep));
  }
  const uint64_t from = retained_from();
  report.retained_from = from;
  // Nothing older than the oldest kept snapshot may go: it and the log after it rebuild the state.
  if (snaps.empty() || snaps.front().seq < from) return report;
  const uint64_t floor = snaps.front().seq;
  uint64_t cut = from - 1;  // delete [from, cut]

  // Age: the oldest events, up to the first one young enough (wall-clock stamps are nearly ordered,
  // so the scan stops at the first young or unreadable one).
  if (policy.max_age.count() > 0) {
    const int64_t oldest_kept_us =
        now_us - std::chrono::duration_cast<std::chrono::microseconds>(policy.max_age).count();
    rocksdb::ReadOptions ro;
    const std::string upper = seq_key(floor + 1);
    rocksdb::Slice upper_slice(upper);
    ro.iterate_upper_bound = &upper_slice;
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, events_cf_));
    for (it->Seek(seq_key(from)); it->Valid(); it->Next()) {
      if (it->key().size() != 8 || it->value().size() < 4) break;
      auto ts = events::peek_timestamp(it->value().ToStringView().substr(4));
      if (!ts || *ts >= oldest_kept_us) break;
      cut = decode_seq(it->key().ToStringView());
    }
    if (!it->status().ok()) return from_rocks(it->status(), "retention scan");
  }

  // Size, as stored (compressed SST files): the smallest cut that leaves at most max_bytes after it.
  // The memtable is flushed first because RocksDB's estimate of a memtable range is a guess; the
  // files' estimate is exact to a data block. That costs one memtable write per retention pass.
  if (policy.max_bytes > 0) {
    rocksdb::FlushOptions fo;
    fo.wait = true;
    fo.allow_write_stall = true;
    const rocksdb::Status flushed = db_->Flush(fo, events_cf_);
    note_write_error(flushed);
    if (Status st = from_rocks(flushed, "retention flush"); !st) return st;
    const uint64_t last = last_seq();
    auto size_after = [&](uint64_t seq) {  // bytes of events (seq, last]
      const std::string a = seq_key(seq + 1), b = seq_key(last + 1);
      rocksdb::Range range(a, b);
      uint64_t size = 0;
      rocksdb::SizeApproximationOptions so;
      so.include_memtables = false;
      so.include_files = true;
      db_->GetApproximateSizes(so, events_cf_, &range, 1, &size).PermitUncheckedError();
      return size;
    };
    if (size_after(cut) > policy.max_bytes) {
      uint64_t lo = cut + 1, hi = floor;  // sizes shrink as the cut grows
      while (lo < hi) {
        const uint64_t mid = lo + (hi - lo) / 2;
        if (size_after(mid) > policy.max_bytes) {
          lo = mid + 1;
        } else {
          hi = mid;
        }
      }
      cut = std::max(cut, lo);
    }
  }

  if (cut < from) return report;
  rocksdb::WriteBatch wb;
  wb.DeleteRange(events_cf_, seq_key(from), seq_key(cut + 1)).PermitUncheckedError();
  wb.Put(meta_cf_, "retained_from", std::to_string(cut + 1)).PermitUncheckedError();
  const rocksdb::Status written = db_->Write(wo, &wb);
  note_write_error(written);
  if (Status st = from_rocks(written, "retention"); !st) return st;
  retained_from_.store(cut + 1, std::memory_order_release);
  report.retained_from = cut + 1;
  report.events_deleted = cut + 1 - from;
  // Reclaim the space in the background; ingest goes on (RocksDB compacts without blocking writes).
  rocksdb::CompactRangeOptions co;
  co.exclusive_manual_compaction = false;
  const std::string end_key = seq_key(cut + 1);
  rocksdb::Slice end_slice(end_key);
  db_->CompactRange(co, events_cf_, nullptr, &end_slice).PermitUncheckedError();
  return report;
}

}  // namespace kai::storage
