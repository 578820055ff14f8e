#pragma once
// EventLog: the ordered, durable log of every Event, on RocksDB (docs/event-log-format.md, docs/event-ordering.md).
//
// Column families and keys:
//
//   "events"    key  = seq as 8 bytes big-endian (so RocksDB's byte order is log order)
//               value= +-------------------+---------------------------------------------+
//                      | crc32c  u32 LE    | encoded event (events/event_codec.hpp:       |
//                      |                   |  version u8, type u8, timestamp, payload)    |
//                      +-------------------+---------------------------------------------+
//                      crc32c covers (encoded event || the 8 key bytes), so a value copied under
//                      the wrong key is caught as well as a flipped bit.
//   "snapshots" the projected state after event `seq` (events/state_codec.hpp), cut in parts:
//               key  = seq (8 bytes BE)                -> manifest: parts u32 LE, bytes u64 LE,
//                                                         crc32c u32 LE of the 12 bytes before it
//               key  = seq (8 bytes BE) | part (4 BE)  -> crc32c u32 LE (of bytes || key) | bytes
//               One WriteBatch holds a snapshot's manifest and parts, so a snapshot is whole or
//               absent. It bypasses the WAL (a snapshot is 100+ MB at 150k pods and must not stall
//               the event writer) and is flushed to an SST before write_snapshot returns.
//   "audit"     key  = tag u8 | name bytes | 0x00 | seq (8 bytes BE); value empty.
//                      tag 'p' pod "ns/name", 'g' pod group "ns/name", 'q' queue, 'n' node.
//                      Decisions: pod, `by` group, node, and the pod's queue (an eviction's victim's);
//                      unschedulable: group and queue; binder outcomes: pod.
//                      Written in the same batch as the event, so a query is a prefix range scan.
//   "meta"      key  = text; "rv/<Kind>" -> last resourceVersion seen for that kind,
//                      "leader_epoch" -> decimal epoch, "schema" -> decimal schema version at creation,
//                      "retained_from" -> decimal first sequence retention kept (absent: 1).
//                      "config_hash" -> decimal hash of the last ConfigChange (the configuration in force),
//                      "config/<hash>" -> the body of every ConfigChange (kept when retention deletes it),
//                      "config_behaviour/<hash>" -> the behaviour version that logged it (decimal),
//                      "config_flags/<hash>" -> its session flags (core/session_flags.hpp),
//                      "last_cycle" -> decimal id of the last CycleStart written.
//   "default"   unused (RocksDB requires it).
//
// Writes: producers call append() from any thread; one writer thread takes everything queued (up to
// max_batch_events), assigns sequence numbers, writes ONE WriteBatch (events + audit + meta) and,
// with SyncPolicy::kEveryBatch, one fsync (WriteOptions.sync) for the whole batch: group commit.
// append() returns only after that write, so an acknowledged event is durable under the policy.
// A failed write fails its batch and every request queued behind it (their sequence numbers are
// handed out again), so no producer acts on an event that was not persisted.
//
// Full disk (docs/degraded-modes.md): a degraded mode, not the end of the log. Before each batch the
// writer looks at the free space of the log's file system (statvfs); below `min_free_bytes` the batch
// is not written and fails with a "disk full" error, so RocksDB never meets ENOSPC in the common case.
// When it does (no floor, or something else filled the disk), RocksDB answers "no space" and enters
// its background-error state. The abort seen in the field, `assert(sync_without_flush_called_)` in
// Debian's 7.8.3, came from RocksDB's own LOG file on the same disk: its error handler writes to that
// file's writer after it failed (reproduced on a full tmpfs and in
// tests/storage/disk_fault_test.cpp). RocksDB therefore logs to the process log
// (storage/rocksdb_info_log.hpp), and after a "no space" answer the writer writes
// nothing until DB::Resume() succeeds (RocksDB's own recovery from its SstFileManager may be running:
// Resume then answers Busy and the batch fails as "disk full" once more). Resume flushes the
// memtables and starts a new WAL; nothing acknowledged is lost. Any other write error stops the log
// for good (health() kFailed).
//
// Open / recover: the next sequence is one past the last key of "events" (or past retained_from
// and the newest snapshot, when retention emptied "events"); RocksDB's WAL replay gives back every
// synced batch whole or not at all.
//
// Retention (apply_retention): snapshots beyond the newest `keep_snapshots` are deleted; events
// older than the age limit, or the oldest while the log exceeds the size limit, are deleted with one
// DeleteRange, but never one newer than the oldest kept snapshot, so every kept snapshot plus the
// log after it rebuilds the state. The audit index drops entries of deleted events in compaction
// (a compaction filter), so retention never rewrites the index in the foreground.

#include <atomic>
#include <boost/core/noncopyable.hpp>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "events/event.hpp"
#include "k8s/model/status.hpp"

namespace rocksdb {
class DB;
class Env;
class ColumnFamilyHandle;
class CompactionFilter;
class Status;
}  // namespace rocksdb

namespace kai::storage {

using model::Result;
using model::Status;

/// When a batch is made durable.
enum class SyncPolicy : uint8_t {
  kEveryBatch,  ///< fsync the WAL once per batch before acknowledging (survives power loss).
  kNone,        ///< Acknowledge after the WAL write reaches the OS (survives a process crash only).
};

/// What an append needs before it is acknowledged (under SyncPolicy::kEveryBatch).
enum class Durability : uint8_t {
  /// Its batch is fsynced before the append is acknowledged (decisions: nothing acts on an unsynced one).
  kSynced,
  /// Acknowledged once in the WAL; made durable by the next synced batch, or within
  /// EventLogOptions::lazy_sync_within at the latest. For what the daemon can read again after a
  /// power loss (watch events: a restart lists again) or finds out again (binder outcomes: the pod
  /// shows bound or not on the watch). The WAL is sequential, so a synced batch makes every earlier
  /// append durable too: nothing logged after a lazy append survives without it.
  kLazy,
};

/// Options of EventLog::open.
struct EventLogOptions {
  /// Durability of acknowledged appends. Default: SyncPolicy::kEveryBatch.
  SyncPolicy sync = SyncPolicy::kEveryBatch;
  /// Upper bound on the events of one group-committed batch (one request is never split).
  /// Default: 8192.
  size_t max_batch_events = 8192;
  /// Create the database when the directory is empty. Default: true.
  bool create_if_missing = true;
  /// Open without a writer thread; append() then fails. Used by kai-log. Default: false.
  bool read_only = false;
  /// Write the audit index ("audit" column family) on append. Default: true.
  bool audit_index = true;
  /// RocksDB memtable size per column family, bytes. Default: 16 MiB. The events' active memtable
  /// stays resident between flushes: at 64 MiB the daemon's resident size after a first start at
  /// 150,000 pods was 64 MiB higher, for no faster start (bench/README.md "The daemon's resident size").
  size_t write_buffer_size = 16u << 20;
  /// RocksDB environment, for fault injection in tests (not owned; must outlive the log).
  /// Default: nullptr (rocksdb::Env::Default()).
  rocksdb::Env* env = nullptr;
  /// Free bytes the log's file system must keep: while fewer are free, batches are not written and
  /// their appends fail with a "disk full" error until space returns. 0 = no floor. Default: 0 (the
  /// daemon passes --min-free-disk).
  uint64_t min_free_bytes = 0;
  /// The free bytes of the log's file system; tests inject a full disk with it. Default: unset
  /// (statvfs of the log directory: f_bavail * f_frsize, what an unprivileged writer may use).
  std::function<Result<uint64_t>()> free_bytes = {};
  /// Lazy appends (Durability::kLazy) are fsynced within this time: by the next batch written after it,
  /// or by the writer when nothing else comes. Default: 100 ms.
  std::chrono::milliseconds lazy_sync_within{100};
};

/// Whether the log can take appends now, and why not.
struct LogHealth {
  enum class State : uint8_t {
    kWritable,  ///< Appends are written.
    kDiskFull,  ///< Below the free-space floor, or RocksDB reported no space: appends fail until space returns.
    kFailed,    ///< Another write error: appends fail until the log is opened again.
    kReadOnly,  ///< Opened read-only.
  };
  State state = State::kWritable;
  uint64_t free_bytes = 0;      ///< Free bytes when last looked at (0 with no floor: not looked at).
  uint64_t min_free_bytes = 0;  ///< The floor.
  std::string message;          ///< Why appends fail; "" when writable.
  bool writable() const { return state == State::kWritable; }
};

/// Free bytes of the file system holding `path` (statvfs: f_bavail * f_frsize).
Result<uint64_t> free_disk_bytes(const std::string& path);

/// Sequence numbers given to one append() call.
struct AppendResult {
  uint64_t first_seq = 0;
  uint64_t last_seq = 0;
};

/// A record that failed its checksum or did not decode.
struct CorruptRecord {
  uint64_t seq = 0;
  std::string message;
};

/// The result of EventLog::verify().
struct VerifyReport {
  uint64_t records = 0;
  uint64_t first_seq = 0;  ///< 0 when empty.
  uint64_t last_seq = 0;
  std::vector<std::pair<uint64_t, uint64_t>> gaps;  ///< (last present, next present) with a hole between.
  std::vector<CorruptRecord> corrupt;
  std::vector<std::string> bad_keys;             ///< Keys that are not 8-byte sequence numbers (hex).
  uint64_t retained_from = 1;                    ///< Records before it were deleted by retention, not lost.
  uint64_t snapshots = 0;                        ///< Snapshots checked (checksums and decoding).
  std::vector<CorruptRecord> corrupt_snapshots;  ///< seq = the snapshot's.
  bool ok() const { return gaps.empty() && corrupt.empty() && bad_keys.empty() && corrupt_snapshots.empty(); }
};

/// A stored snapshot.
struct SnapshotInfo {
  uint64_t seq = 0;    ///< The last event it covers.
  uint64_t bytes = 0;  ///< Encoded size.
};

/// What retention keeps. A zero limit is no limit.
struct RetentionPolicy {
  /// Events older than this (by their timestamp) may go. Default: 7 days.
  std::chrono::seconds max_age{std::chrono::hours(24 * 7)};
  /// The oldest events go while the events are larger than this (RocksDB's estimate). Default: 20 GiB.
  uint64_t max_bytes = 20ull << 30;
  /// Snapshots kept, newest first; at least 1. Default: 2 (the previous one covers a damaged newest).
  size_t keep_snapshots = 2;
};

/// What one apply_retention() call removed.
struct RetentionReport {
  uint64_t retained_from = 1;  ///< First sequence kept afterwards.
  uint64_t events_deleted = 0;
  size_t snapshots_deleted = 0;
};

/// Audit index dimensions (the tag byte of an "audit" key).
enum class AuditKey : char { kPod = 'p', kPodGroup = 'g', kQueue = 'q', kNode = 'n' };

/// The durable event log. Thread-safe; one instance per directory (RocksDB locks it).
class EventLog : private boost::noncopyable {
 public:
  /// Opens or creates the log at `path`. Errors (locked directory, corrupt manifest, unreadable
  /// directory) come back as a Status, never an exception or an abort.
  static Result<std::unique_ptr<EventLog>> open(const std::string& path, const EventLogOptions& options = {});
  ~EventLog();

  /// Appends `events` as one unit, in order, and waits until they are written under the sync policy.
  /// Their `seq` fields are ignored: the log assigns them.
  Result<AppendResult> append(std::vector<events::Event> events);
  /// As append(), without waiting: the future is ready once the batch holding the events is written.
  /// `assigned`, when given, receives the sequence numbers at once (0, 0 when the append is refused):
  /// the log writes requests in the order they were queued, so these are the numbers the future will
  /// confirm, and a consumer can stamp state with them before the write completes.
  std::future<Result<AppendResult>> append_async(std::vector<events::Event> events,
                                                 AppendResult* assigned = nullptr,
                                                 Durability durability = Durability::kSynced);

  /// Whether appends can be written now: the free space (looked at now) and the last write error.
  /// Writes nothing; a log that ran out of space resumes at its next batch or probe().
  LogHealth health() const;
  /// As health(), and when RocksDB reported no space and the space is back, resumes RocksDB
  /// (DB::Resume) now rather than at the next batch, for a consumer that waits for the log to be
  /// writable before it appends anything (the daemon's scheduler, every period).
  LogHealth probe();

  /// The last sequence number handed out by append_async (written or about to be).
  uint64_t last_assigned_seq() const;

  /// Sequence number of the last written event; 0 when empty.
  uint64_t last_seq() const;

  /// Calls `f(seq, event or error)` for each record with from <= seq <= to, in order, until f returns
  /// false. A record that fails its checksum or decoding is passed as an error, not skipped.
  Status read(uint64_t from, uint64_t to,
              const std::function<bool(uint64_t seq, const Result<events::Event>&)>& f) const;

  /// Checks every record: key shape, checksum, decoding, and holes in the sequence.
  Result<VerifyReport> verify() const;

  /// Sequence numbers of events that touched `name` in `dimension`, newest first, at most `limit`.
  Result<std::vector<uint64_t>> audit(AuditKey dimension, std::string_view name,
                                      size_t limit = SIZE_MAX) const;

  /// Reads a "meta" value; an empty string when the key is absent.
  Result<std::string> get_meta(std::string_view key) const;

  /// Stores the encoded state after event `seq` (<= last_seq()) and returns once it is on disk.
  /// Called from any thread; never blocks appends for longer than RocksDB's memtable insert. Takes
  /// the bytes, to free them as soon as RocksDB holds a copy.
  Status write_snapshot(uint64_t seq, std::string bytes);
  /// The stored snapshots, oldest first (from the manifests; parts are checked by read_snapshot).
  Result<std::vector<SnapshotInfo>> snapshots() const;
  /// The bytes of the snapshot at `seq`, every part's checksum and the manifest checked.
  Result<std::string> read_snapshot(uint64_t seq) const;
  /// Deletes old snapshots and events as `policy` says (see the header comment). `now_us`: the
  /// wall clock, Unix microseconds. Safe while appends run.
  Result<RetentionReport> apply_retention(const RetentionPolicy& policy, int64_t now_us);
  /// Stops retention's space reclaim (a manual compaction) now and from here on: for a quick close.
  void cancel_manual_compaction();
  /// The first sequence retention kept: 1 until retention deleted something.
  uint64_t retained_from() const;

  /// Raw stored bytes of one record (checksum included), for tools and corruption tests.
  Result<std::string> get_raw(uint64_t seq) const;
  /// Overwrites the stored bytes of one record without checking them: a repair / fault-injection hook.
  Status put_raw(uint64_t seq, std::string_view value);

  /// Record counts per event kind, sequence range and stored bytes (a full scan), for `kai-log stats`.
  struct Stats {
    uint64_t records = 0;
    uint64_t bytes = 0;
    uint64_t first_seq = 0;
    uint64_t last_seq = 0;
    std::vector<std::pair<std::string, uint64_t>> by_kind;
    uint64_t undecodable = 0;
    uint64_t retained_from = 1;
    std::vector<SnapshotInfo> snapshots;
  };
  Result<Stats> stats() const;

 private:
  struct Request {
    std::vector<std::string> encoded;  ///< Encoded by the producer, so the writer only frames them.
    std::vector<uint32_t> body_crc;    ///< CRC-32C of each encoded body; the writer adds the key.
    std::vector<events::Event> events;
    std::promise<Result<AppendResult>> done;
    Durability durability = Durability::kSynced;
  };

  EventLog() = default;
  void writer_loop();
  /// fsyncs the WAL when lazy appends are not durable yet (writer thread).
  void sync_lazy();
  void write_batch(std::vector<std::unique_ptr<Request>>& batch);
  /// Fails `batch` and everything queued behind it with `message`, and hands their sequence numbers
  /// out again (writer thread).
  /// Fails `batch` and every request queued behind it with `message` (code kNoSpace for a full disk).
  void fail_batch(std::vector<std::unique_ptr<Request>>& batch, const std::string& message, model::Code code);
  /// Whether a batch may be written now: free space above the floor, and RocksDB resumed after a
  /// "no space" error. Otherwise `why` says why not. Called with write_mu_ held.
  bool ready_to_write(std::string* why);
  /// The free bytes (0 and false when unknown or there is no floor).
  bool free_space(uint64_t* bytes) const;
  /// Records a RocksDB error of a write outside the writer (snapshot, retention): "no space" makes
  /// the next batch resume RocksDB first.
  void note_write_error(const rocksdb::Status& s);
  LogHealth health_locked(bool looked, uint64_t free) const;

  EventLogOptions options_;
  std::string path_;
  std::unique_ptr<rocksdb::DB> db_;
  std::vector<rocksdb::ColumnFamilyHandle*> handles_;  // default, events, snapshots, audit, meta
  rocksdb::ColumnFamilyHandle* events_cf_ = nullptr;
  rocksdb::ColumnFamilyHandle* snapshots_cf_ = nullptr;
  rocksdb::ColumnFamilyHandle* audit_cf_ = nullptr;
  rocksdb::ColumnFamilyHandle* meta_cf_ = nullptr;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::unique_ptr<Request>> queue_;  // guarded by mu_
  bool stopping_ = false;                       // guarded by mu_
  std::string failed_;                          // guarded by mu_: sticky write error
  /// RocksDB answered "no space": it needs DB::Resume() before the next write (guarded by mu_).
  bool needs_resume_ = false;
  std::string disk_full_;                       // guarded by mu_: why the last batch was refused
  std::string nospace_;                         // guarded by mu_: RocksDB's "no space" error
  /// Held around every RocksDB write of the writer and around Resume().
  std::mutex write_mu_;
  uint64_t next_seq_ = 1;                       // writer thread only (after open)
  bool unsynced_ = false;                              // writer thread: lazy appends not fsynced yet
  std::chrono::steady_clock::time_point unsynced_since_;  // writer thread: the first of them
  uint64_t next_assigned_ = 1;                  // guarded by mu_: the next seq append_async hands out
  std::atomic<uint64_t> last_seq_{0};
  /// Read by the audit compaction filter on RocksDB's threads.
  std::atomic<uint64_t> retained_from_{1};
  std::unique_ptr<rocksdb::CompactionFilter> audit_filter_;
  std::mutex retention_mu_;  ///< One apply_retention() at a time.
  std::thread writer_;
};

/// Big-endian 8-byte key of `seq`.
std::string seq_key(uint64_t seq);

}  // namespace kai::storage
