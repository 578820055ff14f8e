// Disk faults: root ignores chmod, so writes are failed through a RocksDB FileSystem wrapper that
// answers NoSpace, as a full disk does. A full disk is a degraded mode, not the end of the log
// (docs/degraded-modes.md): every append fails with an error that names the cause while the disk is
// full, nothing acknowledged is lost, the process does not abort inside RocksDB, and appends work
// again once space returns, without a reopen.
#include <gtest/gtest.h>
#include <rocksdb/env.h>
#include <rocksdb/file_system.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>

#include "storage/event_log.hpp"
#include "tests/events/test_events.hpp"
#include "tests/storage/temp_dir.hpp"

namespace kai::storage {
namespace {

/// Fails appends and syncs of writable files while its flags are set, as a full disk does.
class FullDiskFs : public rocksdb::FileSystemWrapper {
 public:
  explicit FullDiskFs(std::shared_ptr<rocksdb::FileSystem> t) : FileSystemWrapper(std::move(t)) {}
  const char* Name() const override { return "FullDiskFs"; }
  /// Append, Sync and Fsync fail.
  std::atomic<bool> full{false};
  /// Only Sync and Fsync fail (the data reached the page cache, the fsync did not).
  std::atomic<bool> sync_fails{false};
  /// Only files whose name contains this fail ("" = every file), e.g. ".sst" or ".log".
  std::string only;
  /// Sync and Fsync calls on the selected files.
  mutable std::atomic<int> syncs{0};

  class File : public rocksdb::FSWritableFileOwnerWrapper {
   public:
    File(std::unique_ptr<rocksdb::FSWritableFile> f, const FullDiskFs& fs, bool selected)
        : FSWritableFileOwnerWrapper(std::move(f)), fs_(fs), selected_(selected) {}
    rocksdb::IOStatus Append(const rocksdb::Slice& d, const rocksdb::IOOptions& o,
                             rocksdb::IODebugContext* dbg) override {
      if (write_fails()) return rocksdb::IOStatus::NoSpace("injected: disk full");
      return FSWritableFileOwnerWrapper::Append(d, o, dbg);
    }
    rocksdb::IOStatus Append(const rocksdb::Slice& d, const rocksdb::IOOptions& o,
                             const rocksdb::DataVerificationInfo& v, rocksdb::IODebugContext* dbg) override {
      if (write_fails()) return rocksdb::IOStatus::NoSpace("injected: disk full");
      return FSWritableFileOwnerWrapper::Append(d, o, v, dbg);
    }
    rocksdb::IOStatus Sync(const rocksdb::IOOptions& o, rocksdb::IODebugContext* dbg) override {
      if (selected_) ++fs_.syncs;
      if (sync_fails()) return rocksdb::IOStatus::NoSpace("injected: disk full");
      return FSWritableFileOwnerWrapper::Sync(o, dbg);
    }
    rocksdb::IOStatus Fsync(const rocksdb::IOOptions& o, rocksdb::IODebugContext* dbg) override {
      if (selected_) ++fs_.syncs;
      if (sync_fails()) return rocksdb::IOStatus::NoSpace("injected: disk full");
      return FSWritableFileOwnerWrapper::Fsync(o, dbg);
    }
    rocksdb::IOStatus RangeSync(uint64_t off, uint64_t n, const rocksdb::IOOptions& o,
                                rocksdb::IODebugContext* dbg) override {
      if (sync_fails()) return rocksdb::IOStatus::NoSpace("injected: disk full");
      return FSWritableFileOwnerWrapper::RangeSync(off, n, o, dbg);
    }

   private:
    bool write_fails() const { return selected_ && fs_.full; }
    bool sync_fails() const { return selected_ && (fs_.full || fs_.sync_fails); }
    const FullDiskFs& fs_;
    const bool selected_;
  };

  rocksdb::IOStatus NewWritableFile(const std::string& f, const rocksdb::FileOptions& fo,
                                    std::unique_ptr<rocksdb::FSWritableFile>* r,
                                    rocksdb::IODebugContext* dbg) override {
    return wrapped(f, r, [&](auto* inner) { return FileSystemWrapper::NewWritableFile(f, fo, inner, dbg); });
  }
  rocksdb::IOStatus ReopenWritableFile(const std::string& f, const rocksdb::FileOptions& fo,
                                       std::unique_ptr<rocksdb::FSWritableFile>* r,
                                       rocksdb::IODebugContext* dbg) override {
    return wrapped(f, r,
                   [&](auto* inner) { return FileSystemWrapper::ReopenWritableFile(f, fo, inner, dbg); });
  }

 private:
  bool selects(const std::string& file) const { return only.empty() || file.find(only) != std::string::npos; }
  /// Opens file `f` with `open_inner` and hands it out as a File that this file system may fail.
  template <typename OpenInner>
  rocksdb::IOStatus wrapped(const std::string& f, std::unique_ptr<rocksdb::FSWritableFile>* r,
                            OpenInner open_inner) {
    std::unique_ptr<rocksdb::FSWritableFile> inner;
    auto s = open_inner(&inner);
    if (s.ok()) *r = std::make_unique<File>(std::move(inner), *this, selects(f));
    return s;
  }
};

bool names_full_disk(const std::string& message) {
  return message.find("disk full") != std::string::npos && message.find("No space left on device") != std::string::npos;
}

/// Appends `e` until the log takes it: once space is back, RocksDB's own recovery (its SstFileManager
/// looks every 5 s) may still hold the log for a few seconds, and each refused append says so.
Result<AppendResult> append_once_space_is_back(EventLog& log, const events::Event& e, int* refused = nullptr) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  for (;;) {
    auto r = log.append({e});
    if (r || std::chrono::steady_clock::now() > until) return r;
    EXPECT_NE(r.message().find("disk full"), std::string::npos) << r.message();
    if (refused != nullptr) ++*refused;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

class DiskFault : public ::testing::Test {
 protected:
  DiskFault() : fs_(std::make_shared<FullDiskFs>(rocksdb::FileSystem::Default())), env_(rocksdb::NewCompositeEnv(fs_)) {}

  /// The log on `env` (the fixture's full-disk one by default).
  Result<std::unique_ptr<EventLog>> open(rocksdb::Env* env = nullptr, bool read_only = false,
                                         EventLogOptions o = {}) {
    o.env = env != nullptr ? env : env_.get();
    o.read_only = read_only;
    return EventLog::open(dir_.str(), o);
  }

  /// The log on `env` with its first event appended and acknowledged in `acked`; an error when
  /// either failed.
  Result<std::unique_ptr<EventLog>> open_with_one_event(std::vector<uint64_t>& acked,
                                                        rocksdb::Env* env = nullptr) {
    auto log = open(env);
    if (log && !append_acked(**log, events::testing::decision_event(1, 1), acked)) {
      return model::Status::error("the first append failed");
    }
    return log;
  }

  /// Appends `e` to `log`, failing the test when it is refused; its sequence number joins `acked`.
  static bool append_acked(EventLog& log, const events::Event& e, std::vector<uint64_t>& acked) {
    auto r = log.append({e});
    EXPECT_TRUE(r) << r.message();
    if (r) acked.push_back(r->last_seq);
    return static_cast<bool>(r);
  }

  /// A log on `env` fills the disk: appends fail naming the cause, with code kNoSpace; once space is
  /// back the same instance takes appends again, numbered on from the last written one, and nothing
  /// acknowledged is lost.
  void fill_then_free(rocksdb::Env* env) {
    std::vector<uint64_t> acked;
    {
      auto log = open_with_one_event(acked, env);
      ASSERT_TRUE(log) << log.message();
      fs_->full = true;
      for (int i = 0; i < 3; ++i) {
        auto failed = (*log)->append({events::testing::decision_event(1, 2)});
        ASSERT_FALSE(failed);
        EXPECT_TRUE(names_full_disk(failed.message())) << failed.message();
        EXPECT_EQ(failed.status().code(), model::Code::kNoSpace);
      }
      EXPECT_EQ((*log)->health().state, LogHealth::State::kDiskFull) << (*log)->health().message;
      fs_->full = false;
      auto again = append_once_space_is_back(**log, events::testing::decision_event(1, 3));
      ASSERT_TRUE(again) << again.message();
      EXPECT_EQ(again->first_seq, acked.back() + 1);
      acked.push_back(again->last_seq);
      EXPECT_EQ((*log)->health().state, LogHealth::State::kWritable) << (*log)->health().message;
    }
    expect_all_there(acked);
  }

  /// Every acknowledged sequence number is in the log (reopened without the fault), and it verifies.
  void expect_all_there(const std::vector<uint64_t>& acked) {
    auto log = EventLog::open(dir_.str());
    ASSERT_TRUE(log) << log.message();
    auto v = (*log)->verify();
    ASSERT_TRUE(v) << v.message();
    // Events only: the snapshots these tests write are not decodable states.
    EXPECT_TRUE(v->gaps.empty() && v->corrupt.empty() && v->bad_keys.empty());
    for (uint64_t seq : acked) {
      auto raw = (*log)->get_raw(seq);
      EXPECT_TRUE(raw) << "acknowledged event " << seq << " is gone: " << raw.message();
    }
  }

  testing::TempDir dir_;
  std::shared_ptr<FullDiskFs> fs_;
  std::unique_ptr<rocksdb::Env> env_;
};

TEST_F(DiskFault, FullDiskFailsAppendsWithAClearErrorAndRecoversWhenSpaceReturns) { fill_then_free(env_.get()); }

/// An Env whose informational logger, when RocksDB asks for one, writes its LOG file through the
/// full-disk file system, as the default Env does on a real disk (NewCompositeEnv's logger bypasses it).
class LoggingThroughFs : public rocksdb::EnvWrapper {
 public:
  explicit LoggingThroughFs(rocksdb::Env* target) : EnvWrapper(target) {}
  const char* Name() const override { return "LoggingThroughFs"; }
  rocksdb::Status NewLogger(const std::string& fname, std::shared_ptr<rocksdb::Logger>* result) override {
    return rocksdb::NewEnvLogger(fname, this, result);
  }
};

// The abort seen on a full disk (Debian's 7.8.3: `Assertion 'sync_without_flush_called_' failed`):
// RocksDB's error handler writes to its LOG file, whose writer has already failed. Reproduced here
// with a LOG file on the full disk: before storage/rocksdb_info_log.hpp the process died on the
// first failed append; now RocksDB logs to the process log and the event log recovers.
TEST_F(DiskFault, RocksDbsOwnLogOnTheFullDiskDoesNotAbortTheProcess) {
  LoggingThroughFs env(env_.get());
  fill_then_free(&env);
}

TEST_F(DiskFault, FailedSyncIsADiskFullErrorAndRecovers) {
  std::vector<uint64_t> acked;
  {
    auto log = open_with_one_event(acked);
    ASSERT_TRUE(log) << log.message();
    fs_->sync_fails = true;
    auto failed = (*log)->append({events::testing::decision_event(1, 2)});
    ASSERT_FALSE(failed);
    EXPECT_TRUE(names_full_disk(failed.message())) << failed.message();
    auto failed2 = (*log)->append({events::testing::decision_event(1, 3)});
    ASSERT_FALSE(failed2);
    fs_->sync_fails = false;
    for (int i = 0; i < 3; ++i) {
      auto again = append_once_space_is_back(**log, events::testing::decision_event(1, 4));
      ASSERT_TRUE(again) << again.message();
      acked.push_back(again->last_seq);
    }
  }
  expect_all_there(acked);
}

TEST_F(DiskFault, ConcurrentAppendsWhileFullAllFailThenAllSucceed) {
  std::vector<uint64_t> acked;
  {
    auto log = open();
    ASSERT_TRUE(log) << log.message();
    fs_->full = true;
    std::vector<std::future<Result<AppendResult>>> futures;
    for (int i = 0; i < 50; ++i) futures.push_back((*log)->append_async({events::testing::decision_event(1, i)}));
    for (auto& f : futures) {
      auto r = f.get();
      EXPECT_FALSE(r);
    }
    fs_->full = false;
    futures.clear();
    auto first = append_once_space_is_back(**log, events::testing::decision_event(2, 99));
    ASSERT_TRUE(first) << first.message();
    acked.push_back(first->last_seq);
    std::vector<AppendResult> assigned(50);
    for (int i = 0; i < 50; ++i)
      futures.push_back((*log)->append_async({events::testing::decision_event(2, i)}, &assigned[static_cast<size_t>(i)]));
    for (size_t i = 0; i < futures.size(); ++i) {
      auto r = futures[i].get();
      ASSERT_TRUE(r) << r.message();
      // The numbers handed out at once are the ones written: a failed batch gave its numbers back.
      EXPECT_EQ(r->first_seq, assigned[i].first_seq);
      acked.push_back(r->last_seq);
    }
    EXPECT_EQ(acked.front(), 1u);
  }
  expect_all_there(acked);
}

TEST_F(DiskFault, SnapshotOnAFullDiskFailsAndTheLogRecovers) {
  std::vector<uint64_t> acked;
  {
    auto log = open_with_one_event(acked);
    ASSERT_TRUE(log) << log.message();
    fs_->full = true;
    auto snap = (*log)->write_snapshot(acked.back(), std::string(1000, 'x'));
    EXPECT_FALSE(snap);
    EXPECT_NE(snap.message().find("disk full"), std::string::npos) << snap.message();
    auto failed = (*log)->append({events::testing::decision_event(1, 2)});
    EXPECT_FALSE(failed);
    fs_->full = false;
    auto again = append_once_space_is_back(**log, events::testing::decision_event(1, 3));
    ASSERT_TRUE(again) << again.message();
    acked.push_back(again->last_seq);
    auto snap2 = (*log)->write_snapshot(again->last_seq, std::string(1000, 'y'));
    EXPECT_TRUE(snap2) << snap2.message();
  }
  expect_all_there(acked);
}

TEST_F(DiskFault, OpeningOnAFullDiskFailsCleanlyAndReadOnlyWorks) {
  std::vector<uint64_t> acked;
  {
    auto log = open();
    ASSERT_TRUE(log) << log.message();
    for (int i = 0; i < 3; ++i) {
      ASSERT_TRUE(append_acked(**log, events::testing::decision_event(1, static_cast<uint64_t>(i)), acked));
    }
  }
  fs_->full = true;
  {
    auto log = open();
    if (log) {
      auto r = (*log)->append({events::testing::decision_event(1, 9)});
      EXPECT_FALSE(r);
    } else {
      EXPECT_TRUE(names_full_disk(log.message())) << log.message();
    }
  }
  {
    auto log = open(nullptr, /*read_only=*/true);
    ASSERT_TRUE(log) << log.message();
    EXPECT_EQ((*log)->last_seq(), acked.back());
  }
  fs_->full = false;
  expect_all_there(acked);
}

TEST_F(DiskFault, BelowTheFloorNothingIsWrittenAndAppendsGoOnWhenSpaceReturns) {
  std::atomic<uint64_t> free{1u << 30};
  std::vector<uint64_t> acked;
  {
    EventLogOptions o;
    o.min_free_bytes = 256u << 20;
    o.free_bytes = [&free]() -> Result<uint64_t> { return free.load(); };
    auto log = EventLog::open(dir_.str(), o);
    ASSERT_TRUE(log) << log.message();
    ASSERT_TRUE(append_acked(**log, events::testing::decision_event(1, 1), acked));
    EXPECT_TRUE((*log)->health().writable());
    free = 10u << 20;
    const LogHealth h = (*log)->health();
    EXPECT_EQ(h.state, LogHealth::State::kDiskFull);
    EXPECT_EQ(h.free_bytes, 10u << 20);
    EXPECT_EQ(h.min_free_bytes, 256u << 20);
    EXPECT_NE(h.message.find("10.0 MiB free"), std::string::npos) << h.message;
    EXPECT_NE(h.message.find("256.0 MiB needed"), std::string::npos) << h.message;
    for (int i = 0; i < 3; ++i) {
      auto refused = (*log)->append({events::testing::decision_event(1, 2)});
      ASSERT_FALSE(refused);
      EXPECT_NE(refused.message().find("disk full: 10.0 MiB free"), std::string::npos) << refused.message();
      EXPECT_EQ(refused.status().code(), model::Code::kNoSpace);
    }
    EXPECT_EQ((*log)->last_seq(), acked.back());
    EXPECT_EQ((*log)->last_assigned_seq(), acked.back());
    auto snap = (*log)->write_snapshot(acked.back(), "x");
    EXPECT_FALSE(snap);
    free = 300u << 20;
    EXPECT_TRUE((*log)->probe().writable());
    auto again = (*log)->append({events::testing::decision_event(1, 3)});
    ASSERT_TRUE(again) << again.message();
    EXPECT_EQ(again->first_seq, acked.back() + 1);
    acked.push_back(again->last_seq);
  }
  expect_all_there(acked);
}

TEST(FreeDiskBytes, ReadsTheFileSystem) {
  auto free = free_disk_bytes("/");
  ASSERT_TRUE(free) << free.message();
  EXPECT_GT(*free, 0u);
  EXPECT_FALSE(free_disk_bytes("/no/such/directory/here"));
}

// Lazy appends (storage/event_log.hpp Durability::kLazy: watch events, binder outcomes) are acknowledged
// without an fsync of the WAL, and made durable by the next synced append or by the writer within the
// window; a synced append (a decision) is fsynced before it is acknowledged.
TEST_F(DiskFault, LazyAppendsAreSyncedWithinTheirWindowAndSyncedAppendsAtOnce) {
  fs_->only = ".log";
  EventLogOptions o;
  o.lazy_sync_within = std::chrono::milliseconds(1500);
  auto log = open(nullptr, false, o);
  ASSERT_TRUE(log.is_ok()) << log.message();
  const int before = fs_->syncs.load();
  const auto start = std::chrono::steady_clock::now();
  for (uint64_t i = 1; i <= 20; ++i) {
    auto r = (*log)->append_async({events::testing::decision_event(1, i)}, nullptr, Durability::kLazy).get();
    ASSERT_TRUE(r.is_ok()) << r.message();
  }
  if (std::chrono::steady_clock::now() - start < o.lazy_sync_within) {
    EXPECT_EQ(fs_->syncs.load(), before) << "a lazy append waited for an fsync";
  }
  const auto until = start + std::chrono::seconds(10);
  while (fs_->syncs.load() == before && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_GT(fs_->syncs.load(), before) << "the lazy appends were never fsynced";
  EXPECT_GE(std::chrono::steady_clock::now() - start, o.lazy_sync_within - std::chrono::milliseconds(100))
      << "fsynced before the window: the writer did not let them wait";
  const int lazily_synced = fs_->syncs.load();
  auto r = (*log)->append({events::testing::decision_event(2, 1)});
  ASSERT_TRUE(r.is_ok()) << r.message();
  EXPECT_GT(fs_->syncs.load(), lazily_synced) << "a synced append was acknowledged before its fsync";
  EXPECT_EQ((*log)->last_seq(), 21u);
}

}  // namespace
}  // namespace kai::storage
