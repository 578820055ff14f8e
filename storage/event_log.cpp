// EventLog: open and recovery, the group-commit writer (append, batches, the audit index entries of
// each batch) and the log's health on a full disk. Reads, snapshots and retention are in
// event_log_read.cpp, event_log_snapshots.cpp and event_log_retention.cpp.
#include "storage/event_log.hpp"
#include "storage/rocksdb_info_log.hpp"

#include <rocksdb/compaction_filter.h>
#include <rocksdb/db.h>
#include <rocksdb/memtablerep.h>
#include <rocksdb/options.h>
#include <rocksdb/write_batch.h>

#include <spdlog/spdlog.h>
#include <sys/statvfs.h>

#include <algorithm>
#include <cstdio>

#include "events/event_codec.hpp"
#include "storage/crc32c.hpp"
#include "storage/event_log_internal.hpp"

namespace kai::storage {
namespace {

constexpr const char* kEventsCf = "events";
constexpr const char* kSnapshotsCf = "snapshots";
constexpr const char* kAuditCf = "audit";
constexpr const char* kMetaCf = "meta";

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

std::string audit_key(AuditKey dim, std::string_view name, uint64_t seq) {
  std::string k;
  k.reserve(name.size() + 10);
  k.push_back(static_cast<char>(dim));
  k.append(name);
  k.push_back('\0');
  k.append(seq_key(seq));
  return k;
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
  // A third memtable: with two, a first list of 150,000 pods filled the second while the first was
  // still being flushed, and RocksDB stopped every write until the flush ended ("Stopping writes
  // because we have 2 immutable memtables"), holding up the ingest behind the writer.
  cf_opts.max_write_buffer_number = 3;
  // Audit keys arrive in random order (pod names), and a skip-list insert of a random key cost
  // more than everything else on the ingest path (perf: 40 % in FindSpliceForLevel). The index is
  // only read by tools, so its memtable is an unsorted vector: O(1) appends, sorted when read or
  // flushed. The vector memtable does not take concurrent inserts, which the single writer never does.
  rocksdb::ColumnFamilyOptions audit_opts = cf_opts;
  audit_opts.memtable_factory = std::make_shared<rocksdb::VectorRepFactory>();
  log->audit_filter_ = make_audit_retention_filter(&log->retained_from_);
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
                                                         AppendResult* assigned, Durability durability) {
  if (assigned != nullptr) *assigned = AppendResult{};
  auto req = std::make_unique<Request>();
  req->durability = durability;
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

void EventLog::sync_lazy() {
  if (!unsynced_) return;
  std::lock_guard write_lock(write_mu_);
  rocksdb::Status s = db_->SyncWAL();
  if (!s.ok()) {
    // unsynced_ stays: tried again after another interval, or by the next synced batch, whose
    // appends then see the error.
    spdlog::warn("event log: fsync of the WAL failed: {}", s.ToString());
    unsynced_since_ = std::chrono::steady_clock::now();
    return;
  }
  unsynced_ = false;
}

void EventLog::writer_loop() {
  std::vector<std::unique_ptr<Request>> batch;
  for (;;) {
    {
      std::unique_lock lk(mu_);
      auto work = [&] { return stopping_ || !queue_.empty(); };
      if (unsynced_) {
        // Lazy appends wait for the next batch's fsync, or for this one when nothing comes.
        if (!cv_.wait_until(lk, unsynced_since_ + options_.lazy_sync_within, work)) {
          lk.unlock();
          sync_lazy();
          continue;
        }
      } else {
        cv_.wait(lk, work);
      }
      if (queue_.empty()) {  // stopping and drained
        lk.unlock();
        sync_lazy();
        return;
      }
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
  const bool lazy = std::all_of(batch.begin(), batch.end(), [](const auto& r) { return r->durability == Durability::kLazy; });
  const auto now = std::chrono::steady_clock::now();
  wo.sync = options_.sync == SyncPolicy::kEveryBatch &&
            (!lazy || (unsynced_ && now - unsynced_since_ >= options_.lazy_sync_within));
  rocksdb::Status s = db_->Write(wo, &wb);
  if (s.ok() && options_.sync == SyncPolicy::kEveryBatch) {
    if (wo.sync) {
      unsynced_ = false;
    } else if (!unsynced_) {
      unsynced_ = true;
      unsynced_since_ = now;
    }
  }
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

}  // namespace kai::storage
