#include "storage/event_log.hpp"
#include "storage/rocksdb_info_log.hpp"

#include <rocksdb/compaction_filter.h>
#include <rocksdb/db.h>
#include <rocksdb/memtablerep.h>
#include <rocksdb/options.h>
#include <rocksdb/write_batch.h>

#include <sys/statvfs.h>

#include <cstdio>
#include <map>

#include "events/event_codec.hpp"
#include "events/state_codec.hpp"
#include "storage/crc32c.hpp"

namespace kai::storage {
namespace {

constexpr const char* kEventsCf = "events";
constexpr const char* kSnapshotsCf = "snapshots";
constexpr const char* kAuditCf = "audit";
constexpr const char* kMetaCf = "meta";

Status from_rocks(const rocksdb::Status& s, std::string_view what) {
  if (s.ok()) return Status::ok();
  if (s.IsNoSpace()) return Status::error(model::Code::kNoSpace, "disk full: " + std::string(what) + ": " + s.ToString());
  return Status::error(std::string(what) + ": " + s.ToString());
}

/// "256 MiB" for a message a person reads.
std::string human_bytes(uint64_t b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(b);
  size_t u = 0;
  while (v >= 1024 && u + 1 < sizeof units / sizeof *units) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", v, units[u]);
  return buf;
}

uint64_t decode_seq(std::string_view key) {
  uint64_t v = 0;
  for (char c : key) v = (v << 8) | static_cast<uint8_t>(c);
  return v;
}

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

std::string audit_key(AuditKey dim, std::string_view name, uint64_t seq) {
  std::string k;
  k.reserve(name.size() + 10);
  k.push_back(static_cast<char>(dim));
  k.append(name);
  k.push_back('\0');
  k.append(seq_key(seq));
  return k;
}

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

Result<uint64_t> free_disk_bytes(const std::string& path) {
  struct statvfs st {};
  if (::statvfs(path.c_str(), &st) != 0) return Status::error("statvfs " + path + " failed");
  return static_cast<uint64_t>(st.f_bavail) * static_cast<uint64_t>(st.f_frsize);
}

std::string seq_key(uint64_t seq) {
  std::string k(8, '\0');
  for (int i = 7; i >= 0; --i, seq >>= 8) k[static_cast<size_t>(i)] = static_cast<char>(seq & 0xff);
  return k;
}

Result<std::unique_ptr<EventLog>> EventLog::open(const std::string& path, const EventLogOptions& options) {
  std::unique_ptr<EventLog> log(new EventLog());
  log->options_ = options;

  rocksdb::DBOptions db_opts;
  db_opts.create_if_missing = options.create_if_missing;
  db_opts.create_missing_column_families = options.create_if_missing;
  // The log is append-only with one writer; a small background pool keeps flush and compaction
  // off the ingest path without competing for the two cores.
  db_opts.max_background_jobs = 2;
  if (options.env != nullptr) db_opts.env = options.env;
  // No LOG file next to the events: RocksDB aborts on a full disk when it writes to a failed one
  // (storage/rocksdb_info_log.hpp).
  db_opts.info_log = make_rocksdb_info_log();
  rocksdb::ColumnFamilyOptions cf_opts;
  cf_opts.write_buffer_size = options.write_buffer_size;
  // Audit keys arrive in random order (pod names), and a skip-list insert of a random key cost
  // more than everything else on the ingest path (perf: 40 % in FindSpliceForLevel). The index is
  // only read by tools, so its memtable is an unsorted vector: O(1) appends, sorted when read or
  // flushed. The vector memtable does not take concurrent inserts, which the single writer never does.
  rocksdb::ColumnFamilyOptions audit_opts = cf_opts;
  audit_opts.memtable_factory = std::make_shared<rocksdb::VectorRepFactory>();
  log->audit_filter_ = std::make_unique<AuditRetentionFilter>(&log->retained_from_);
  audit_opts.compaction_filter = log->audit_filter_.get();
  db_opts.allow_concurrent_memtable_write = false;
  std::vector<rocksdb::ColumnFamilyDescriptor> cfs = {{rocksdb::kDefaultColumnFamilyName, cf_opts},
                                                      {kEventsCf, cf_opts},
                                                      {kSnapshotsCf, cf_opts},
                                                      {kAuditCf, audit_opts},
                                                      {kMetaCf, cf_opts}};
  rocksdb::DB* raw = nullptr;
  rocksdb::Status s;
  if (options.read_only) {
    s = rocksdb::DB::OpenForReadOnly(db_opts, path, cfs, &log->handles_, &raw);
  } else {
    s = rocksdb::DB::Open(db_opts, path, cfs, &log->handles_, &raw);
  }
  if (!s.ok()) return from_rocks(s, "open " + path);
  log->db_.reset(raw);
  log->path_ = path;
  log->events_cf_ = log->handles_[1];
  log->snapshots_cf_ = log->handles_[2];
  log->audit_cf_ = log->handles_[3];
  log->meta_cf_ = log->handles_[4];

  // Recover: continue after the last key that is a sequence number.
  {
    std::unique_ptr<rocksdb::Iterator> it(log->db_->NewIterator(rocksdb::ReadOptions(), log->events_cf_));
    for (it->SeekToLast(); it->Valid(); it->Prev()) {
      if (it->key().size() == 8) {
        log->last_seq_ = decode_seq(it->key().ToStringView());
        break;
      }
    }
    if (!it->status().ok()) return from_rocks(it->status(), "recover " + path);
  }
  // Retention may have deleted every event up to a snapshot: the sequence still goes on from there.
  {
    std::string v;
    rocksdb::Status rs = log->db_->Get(rocksdb::ReadOptions(), log->meta_cf_, "retained_from", &v);
    if (rs.ok()) {
      log->retained_from_ = std::max<uint64_t>(1, std::strtoull(v.c_str(), nullptr, 10));
    } else if (!rs.IsNotFound()) {
      return from_rocks(rs, "recover " + path);
    }
    auto snaps = log->snapshots();
    if (!snaps) return snaps.status();
    uint64_t floor = log->retained_from_ - 1;
    if (!snaps->empty()) floor = std::max(floor, snaps->back().seq);
    if (log->last_seq_ < floor) log->last_seq_ = floor;
  }
  log->next_seq_ = log->last_seq_ + 1;
  log->next_assigned_ = log->next_seq_;

  if (!options.read_only) {
    std::string v;
    if (log->db_->Get(rocksdb::ReadOptions(), log->meta_cf_, "schema", &v).IsNotFound()) {
      rocksdb::WriteOptions wo;
      wo.sync = true;
      Status st = from_rocks(
          log->db_->Put(wo, log->meta_cf_, "schema", std::to_string(events::kSchemaVersion)), "write meta");
      if (!st) return st;
    }
    log->writer_ = std::thread([l = log.get()] { l->writer_loop(); });
  }
  return log;
}

EventLog::~EventLog() {
  {
    std::lock_guard lk(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (writer_.joinable()) writer_.join();
  // Requests queued after the writer left (none in practice: it drains before exiting).
  for (auto& r : queue_) r->done.set_value(Status::error("event log closed"));
  if (db_) {
    for (auto* h : handles_) db_->DestroyColumnFamilyHandle(h);
    db_->Close().PermitUncheckedError();
  }
}

std::future<Result<AppendResult>> EventLog::append_async(std::vector<events::Event> evs,
                                                         AppendResult* assigned) {
  if (assigned != nullptr) *assigned = AppendResult{};
  auto req = std::make_unique<Request>();
  auto fut = req->done.get_future();
  if (evs.empty()) {
    req->done.set_value(Status::error("append of no events"));
    return fut;
  }
  // Encoding does not depend on the sequence number (it lives in the key), so producers do it in
  // parallel and the single writer only frames and checksums.
  req->encoded.resize(evs.size());
  for (size_t i = 0; i < evs.size(); ++i) {
    req->encoded[i].reserve(64);
    req->encoded[i].append(4, '\0');  // room for the checksum
    events::encode_event(evs[i], req->encoded[i]);
  }
  req->body_crc.resize(evs.size());
  for (size_t i = 0; i < evs.size(); ++i)
    req->body_crc[i] = crc32c(std::string_view(req->encoded[i]).substr(4));
  req->events = std::move(evs);
  {
    std::lock_guard lk(mu_);
    if (options_.read_only || !writer_.joinable()) {
      req->done.set_value(Status::error("event log opened read-only"));
      return fut;
    }
    if (!failed_.empty()) {
      req->done.set_value(Status::error(failed_));
      return fut;
    }
    if (stopping_) {
      req->done.set_value(Status::error("event log closed"));
      return fut;
    }
    // The writer takes requests in queue order and numbers them consecutively from next_seq_, so
    // counting here gives the same numbers.
    if (assigned != nullptr)
      *assigned = AppendResult{next_assigned_, next_assigned_ + req->events.size() - 1};
    next_assigned_ += req->events.size();
    queue_.push_back(std::move(req));
  }
  cv_.notify_one();
  return fut;
}

uint64_t EventLog::last_assigned_seq() const {
  std::lock_guard lk(mu_);
  return next_assigned_ - 1;
}

Result<AppendResult> EventLog::append(std::vector<events::Event> evs) {
  return append_async(std::move(evs)).get();
}

uint64_t EventLog::last_seq() const {
  return last_seq_.load(std::memory_order_acquire);
}

void EventLog::writer_loop() {
  std::vector<std::unique_ptr<Request>> batch;
  for (;;) {
    {
      std::unique_lock lk(mu_);
      cv_.wait(lk, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping and drained
      size_t n = 0;
      while (!queue_.empty() &&
             (batch.empty() || n + queue_.front()->events.size() <= options_.max_batch_events)) {
        n += queue_.front()->events.size();
        batch.push_back(std::move(queue_.front()));
        queue_.pop_front();
      }
    }
    write_batch(batch);
    batch.clear();
  }
}

bool EventLog::free_space(uint64_t* bytes) const {
  *bytes = 0;
  if (options_.min_free_bytes == 0) return false;
  auto free = options_.free_bytes ? options_.free_bytes() : free_disk_bytes(path_);
  if (!free) return false;  // unknown: RocksDB's own "no space" still stops the writes
  *bytes = *free;
  return true;
}

bool EventLog::ready_to_write(std::string* why) {
  uint64_t free = 0;
  if (free_space(&free) && free < options_.min_free_bytes) {
    *why = "disk full: " + human_bytes(free) + " free in " + path_ + ", " + human_bytes(options_.min_free_bytes) +
           " needed (the free-space floor); nothing is written until space returns";
    std::lock_guard lk(mu_);
    disk_full_ = *why;
    return false;
  }
  bool resume = false;
  {
    std::lock_guard lk(mu_);
    resume = needs_resume_;
  }
  if (resume) {
    // RocksDB stopped at its "no space" error; Resume flushes the memtables to new files and starts
    // a new WAL, so nothing is written through the writer that saw the error (see the header).
    rocksdb::Status r = db_->Resume();
    if (!r.ok()) {
      std::lock_guard lk(mu_);
      *why = nospace_ + " (not resumed yet: " + r.ToString() + ")";
      disk_full_ = *why;
      return false;
    }
  }
  std::lock_guard lk(mu_);
  needs_resume_ = false;
  disk_full_.clear();
  return true;
}

void EventLog::note_write_error(const rocksdb::Status& s) {
  if (!s.IsNoSpace()) return;
  std::lock_guard lk(mu_);
  needs_resume_ = true;
  nospace_ = "disk full: event log write failed, no space left on device: " + s.ToString();
  disk_full_ = nospace_;
}

void EventLog::fail_batch(std::vector<std::unique_ptr<Request>>& batch, const std::string& message, model::Code code) {
  std::deque<std::unique_ptr<Request>> behind;
  {
    std::lock_guard lk(mu_);
    behind.swap(queue_);
    // The numbers handed out to these requests are handed out again, from the last written one on.
    next_assigned_ = next_seq_;
  }
  for (auto& r : batch) r->done.set_value(Status::error(code, message));
  for (auto& r : behind) r->done.set_value(Status::error(code, message));
}

void EventLog::write_batch(std::vector<std::unique_ptr<Request>>& batch) {
  {
    std::unique_lock lk(mu_);
    if (!failed_.empty()) {
      const std::string msg = failed_;
      lk.unlock();
      fail_batch(batch, msg, model::Code::kInternal);
      return;
    }
  }
  std::lock_guard write_lock(write_mu_);
  if (std::string why; !ready_to_write(&why)) {
    fail_batch(batch, why, model::Code::kNoSpace);
    return;
  }
  rocksdb::WriteBatch wb;
  std::map<std::string, std::string> meta;  // last value per key wins within the batch
  uint64_t seq = next_seq_;
  std::vector<AppendResult> results;
  results.reserve(batch.size());
  for (auto& r : batch) {
    AppendResult res{seq, seq + r->events.size() - 1};
    for (size_t i = 0; i < r->events.size(); ++i, ++seq) {
      std::string key = seq_key(seq);
      std::string& value = r->encoded[i];
      uint32_t crc = crc32c(key, r->body_crc[i]);  // continues the producer's CRC of the body
      for (int b = 0; b < 4; ++b) value[static_cast<size_t>(b)] = static_cast<char>(crc >> (8 * b));
      wb.Put(events_cf_, key, value).PermitUncheckedError();

      const events::Event& e = r->events[i];
      if (const auto* w = std::get_if<events::WatchEvent>(&e.payload)) {
        if (!w->resource_version.empty()) meta["rv/" + w->kind] = w->resource_version;
      } else if (const auto* l = std::get_if<events::LeadershipChange>(&e.payload)) {
        meta["leader_epoch"] = std::to_string(l->epoch);
      } else if (const auto* c = std::get_if<events::ConfigChange>(&e.payload)) {
        meta["config_hash"] = std::to_string(c->hash);
        // Every body by its hash, kept when retention deletes the record: replay needs it for as
        // long as cycles that name it are in the log.
        meta["config/" + std::to_string(c->hash)] = c->text;
        meta["config_behaviour/" + std::to_string(c->hash)] = std::to_string(c->behaviour_version);
        meta["config_flags/" + std::to_string(c->hash)] = c->flags;
      } else if (const auto* cs = std::get_if<events::CycleStart>(&e.payload)) {
        // Where cycle ids continue after a restart.
        meta["last_cycle"] = std::to_string(cs->cycle_id);
      } else if (options_.audit_index) {
        if (const auto* d = std::get_if<events::DecisionEvent>(&e.payload)) {
          wb.Put(audit_cf_, audit_key(AuditKey::kPod, d->decision.pod, seq), "").PermitUncheckedError();
          if (!d->decision.by.empty())
            wb.Put(audit_cf_, audit_key(AuditKey::kPodGroup, d->decision.by, seq), "").PermitUncheckedError();
          if (!d->decision.node.empty())
            wb.Put(audit_cf_, audit_key(AuditKey::kNode, d->decision.node, seq), "").PermitUncheckedError();
          if (!d->decision.queue.empty())
            wb.Put(audit_cf_, audit_key(AuditKey::kQueue, d->decision.queue, seq), "").PermitUncheckedError();
        } else if (const auto* u = std::get_if<events::UnschedulableEvent>(&e.payload)) {
          wb.Put(audit_cf_, audit_key(AuditKey::kPodGroup, u->pod_group, seq), "").PermitUncheckedError();
          for (const auto& p : u->pods)
            wb.Put(audit_cf_, audit_key(AuditKey::kPod, p.pod, seq), "").PermitUncheckedError();
          if (!u->queue.empty())
            wb.Put(audit_cf_, audit_key(AuditKey::kQueue, u->queue, seq), "").PermitUncheckedError();
        } else if (const auto* b = std::get_if<events::BinderOutcome>(&e.payload)) {
          wb.Put(audit_cf_, audit_key(AuditKey::kPod, b->pod, seq), "").PermitUncheckedError();
        }
      }
    }
    results.push_back(res);
  }
  for (const auto& [k, v] : meta) wb.Put(meta_cf_, k, v).PermitUncheckedError();

  rocksdb::WriteOptions wo;
  wo.sync = options_.sync == SyncPolicy::kEveryBatch;
  rocksdb::Status s = db_->Write(wo, &wb);
  if (!s.ok()) {
    std::string msg;
    if (s.IsNoSpace()) {
      // Degraded, not stopped: the next batch resumes RocksDB once the space is back.
      msg = "disk full: event log write failed, no space left on device: " + s.ToString();
      std::lock_guard lk(mu_);
      needs_resume_ = true;
      nospace_ = msg;
      disk_full_ = msg;
    } else {
      msg = "event log write failed (log is now stopped): " + s.ToString();
      std::lock_guard lk(mu_);
      failed_ = msg;
    }
    fail_batch(batch, msg, s.IsNoSpace() ? model::Code::kNoSpace : model::Code::kInternal);
    return;
  }
  next_seq_ = seq;
  last_seq_.store(seq - 1, std::memory_order_release);
  for (size_t i = 0; i < batch.size(); ++i) batch[i]->done.set_value(results[i]);
}

LogHealth EventLog::health_locked(bool looked, uint64_t free) const {
  LogHealth h;
  h.min_free_bytes = options_.min_free_bytes;
  h.free_bytes = free;
  if (options_.read_only || !writer_.joinable()) {
    h.state = LogHealth::State::kReadOnly;
    h.message = "event log opened read-only";
  } else if (!failed_.empty()) {
    h.state = LogHealth::State::kFailed;
    h.message = failed_;
  } else if (looked && free < options_.min_free_bytes) {
    h.state = LogHealth::State::kDiskFull;
    h.message = "disk full: " + human_bytes(free) + " free in " + path_ + ", " + human_bytes(options_.min_free_bytes) +
                " needed (the free-space floor)";
  } else if (needs_resume_) {
    h.state = LogHealth::State::kDiskFull;
    h.message = disk_full_;
  }
  return h;
}

LogHealth EventLog::health() const {
  uint64_t free = 0;
  const bool looked = free_space(&free);
  std::lock_guard lk(mu_);
  return health_locked(looked, free);
}

LogHealth EventLog::probe() {
  if (!options_.read_only && writer_.joinable()) {
    bool resume = false;
    {
      std::lock_guard lk(mu_);
      resume = needs_resume_ && failed_.empty();
    }
    if (resume) {
      std::lock_guard write_lock(write_mu_);
      std::string why;
      (void)ready_to_write(&why);
    }
  }
  return health();
}

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

namespace kai::storage {

void EventLog::cancel_manual_compaction() {
  if (db_) db_->DisableManualCompaction();
}

uint64_t EventLog::retained_from() const {
  return retained_from_.load(std::memory_order_acquire);
}

Status EventLog::write_snapshot(uint64_t seq, std::string_view bytes) {
  if (options_.read_only) return Status::error("event log opened read-only");
  if (LogHealth h = health(); !h.writable()) return Status::error("snapshot " + std::to_string(seq) + ": " + h.message);
  if (seq == 0 || seq > last_seq()) {
    return Status::error("snapshot at " + std::to_string(seq) + " is past the log's end " +
                         std::to_string(last_seq()));
  }
  rocksdb::WriteBatch wb;
  const uint64_t parts = (bytes.size() + kSnapshotPart - 1) / kSnapshotPart;
  for (uint64_t p = 0; p < parts; ++p) {
    const std::string key = snapshot_part_key(seq, static_cast<uint32_t>(p));
    const std::string_view chunk = bytes.substr(p * kSnapshotPart, kSnapshotPart);
    std::string value;
    value.reserve(chunk.size() + 4);
    put_le(value, crc32c(key, crc32c(chunk)), 4);
    value.append(chunk);
    wb.Put(snapshots_cf_, key, value).PermitUncheckedError();
  }
  std::string manifest;
  put_le(manifest, parts, 4);
  put_le(manifest, bytes.size(), 8);
  put_le(manifest, crc32c(manifest), 4);
  wb.Put(snapshots_cf_, seq_key(seq), manifest).PermitUncheckedError();
  rocksdb::WriteOptions wo;
  // Without the WAL a snapshot costs the event writer nothing; it is durable once flushed below, and
  // a crash before that loses only this snapshot (the previous one and the log still cover it).
  wo.disableWAL = true;
  rocksdb::Status ws = db_->Write(wo, &wb);
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
