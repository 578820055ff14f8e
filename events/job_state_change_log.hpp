#pragma once
// Which groups' job states changed lately (ScheduleRecords::job_state_log). A cycle that kept what
// it resolved from the job states last time (actors/scheduler/core/job_state_memo.hpp) reads again
// only those groups rather than every one (150,000 at 5,000 nodes). Not part of the records' value:
// never compared nor encoded. A copy or a move is another log, which a reader of the first one does
// not trust: it reads every group once more.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace kai::events {

class JobStateChangeLog {
 public:
  JobStateChangeLog() = default;
  JobStateChangeLog(const JobStateChangeLog&) {}
  JobStateChangeLog(JobStateChangeLog&&) noexcept {}
  JobStateChangeLog& operator=(const JobStateChangeLog& other) {
    if (this != &other) restart();
    return *this;
  }
  JobStateChangeLog& operator=(JobStateChangeLog&& other) noexcept {
    if (this != &other) restart();
    return *this;
  }
  ~JobStateChangeLog() = default;
  bool operator==(const JobStateChangeLog&) const { return true; }

  /// Which log this is: another after a copy, a move or an assignment.
  uint64_t id() const { return id_; }
  /// How many changes were noted: a reader's position.
  uint64_t end() const { return first_ + uids_.size(); }

  /// Notes that the job state of group `uid` changed (set, or forgotten).
  void note(const std::string& uid) {
    if (uids_.size() >= kKept) {
      // The older half goes: a reader that far behind reads every group.
      const size_t dropped = uids_.size() / 2;
      uids_.erase(uids_.begin(), uids_.begin() + static_cast<std::ptrdiff_t>(dropped));
      first_ += dropped;
    }
    uids_.push_back(uid);
  }

  /// Appends to `out` the groups changed from position `from` (an earlier end()) on; false when
  /// those are no longer all kept.
  bool since(uint64_t from, std::vector<std::string>& out) const {
    if (from < first_ || from > end()) return false;
    out.insert(out.end(), uids_.begin() + static_cast<std::ptrdiff_t>(from - first_), uids_.end());
    return true;
  }

  /// At most this many changes are kept.
  static constexpr size_t kKept = size_t{1} << 16;

 private:
  static uint64_t next_id() {
    static std::atomic<uint64_t> next{1};
    return next.fetch_add(1, std::memory_order_relaxed);
  }
  void restart() {
    id_ = next_id();
    first_ = 0;
    uids_.clear();
  }

  uint64_t id_ = next_id();
  uint64_t first_ = 0;
  std::vector<std::string> uids_;
};

}  // namespace kai::events
