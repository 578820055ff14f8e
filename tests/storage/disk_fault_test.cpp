// Disk faults (issue 6): root ignores chmod, so writes are failed through a RocksDB FileSystem
// wrapper. A failed write must be a clear error to every producer, and the log must refuse further
// appends (no decision may be acted on without a persisted event).
#include <gtest/gtest.h>
#include <rocksdb/env.h>
#include <rocksdb/file_system.h>

#include <atomic>

#include "storage/event_log.hpp"
#include "tests/events/test_events.hpp"
#include "tests/storage/temp_dir.hpp"

namespace kai::storage {
namespace {

/// Fails every append and sync of any writable file while `full` is set, as a full disk would.
class FullDiskFs : public rocksdb::FileSystemWrapper {
 public:
  explicit FullDiskFs(std::shared_ptr<rocksdb::FileSystem> t) : FileSystemWrapper(std::move(t)) {}
  const char* Name() const override { return "FullDiskFs"; }
  std::atomic<bool> full{false};

  class File : public rocksdb::FSWritableFileOwnerWrapper {
   public:
    File(std::unique_ptr<rocksdb::FSWritableFile> f, const std::atomic<bool>& full)
        : FSWritableFileOwnerWrapper(std::move(f)), full_(full) {}
    rocksdb::IOStatus Append(const rocksdb::Slice& d, const rocksdb::IOOptions& o,
                             rocksdb::IODebugContext* dbg) override {
      if (full_) return rocksdb::IOStatus::NoSpace("injected: disk full");
      return FSWritableFileOwnerWrapper::Append(d, o, dbg);
    }
    rocksdb::IOStatus Append(const rocksdb::Slice& d, const rocksdb::IOOptions& o,
                             const rocksdb::DataVerificationInfo& v, rocksdb::IODebugContext* dbg) override {
      if (full_) return rocksdb::IOStatus::NoSpace("injected: disk full");
      return FSWritableFileOwnerWrapper::Append(d, o, v, dbg);
    }
    rocksdb::IOStatus Sync(const rocksdb::IOOptions& o, rocksdb::IODebugContext* dbg) override {
      if (full_) return rocksdb::IOStatus::NoSpace("injected: disk full");
      return FSWritableFileOwnerWrapper::Sync(o, dbg);
    }
    rocksdb::IOStatus Fsync(const rocksdb::IOOptions& o, rocksdb::IODebugContext* dbg) override {
      if (full_) return rocksdb::IOStatus::NoSpace("injected: disk full");
      return FSWritableFileOwnerWrapper::Fsync(o, dbg);
    }

   private:
    const std::atomic<bool>& full_;
  };

  rocksdb::IOStatus NewWritableFile(const std::string& f, const rocksdb::FileOptions& fo,
                                    std::unique_ptr<rocksdb::FSWritableFile>* r,
                                    rocksdb::IODebugContext* dbg) override {
    std::unique_ptr<rocksdb::FSWritableFile> inner;
    auto s = FileSystemWrapper::NewWritableFile(f, fo, &inner, dbg);
    if (s.ok()) *r = std::make_unique<File>(std::move(inner), full);
    return s;
  }
};

TEST(DiskFault, FullDiskStopsTheLogWithAClearError) {
  testing::TempDir dir;
  auto fs = std::make_shared<FullDiskFs>(rocksdb::FileSystem::Default());
  std::unique_ptr<rocksdb::Env> env = rocksdb::NewCompositeEnv(fs);
  uint64_t acked = 0;
  {
    EventLogOptions o;
    o.env = env.get();
    auto log = EventLog::open(dir.str(), o);
    ASSERT_TRUE(log) << log.message();
    auto r = (*log)->append({events::testing::decision_event(1, 1)});
    ASSERT_TRUE(r) << r.message();
    acked = r->last_seq;
    fs->full = true;
    auto failed = (*log)->append({events::testing::decision_event(1, 2)});
    ASSERT_FALSE(failed);
    EXPECT_NE(failed.message().find("disk full"), std::string::npos) << failed.message();
    fs->full = false;
    // Sticky: the disk came back, but this instance still refuses, so nothing acts on a lost write.
    auto again = (*log)->append({events::testing::decision_event(1, 3)});
    ASSERT_FALSE(again);
    EXPECT_NE(again.message().find("stopped"), std::string::npos) << again.message();
  }
  // A new instance (a restarted daemon) recovers everything that was acknowledged.
  auto log = EventLog::open(dir.str());
  ASSERT_TRUE(log) << log.message();
  auto v = (*log)->verify();
  ASSERT_TRUE(v);
  EXPECT_TRUE(v->ok());
  EXPECT_GE((*log)->last_seq(), acked);
  auto r = (*log)->append({events::testing::decision_event(1, 4)});
  ASSERT_TRUE(r) << r.message();
  EXPECT_EQ(r->first_seq, (*log)->last_seq());
}

}  // namespace
}  // namespace kai::storage
