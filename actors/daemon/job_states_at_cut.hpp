#pragma once
// The job states at each cycle's cut, which /get-snapshot serves (LastCycle). Two tables taken in
// turn, each brought up to date from the records' change log (events/job_state_change_log.hpp):
// copying the records' 150,000 job states at every cycle (and freeing the copy of the cycle before)
// cost ten times a kept cycle at 5,000 nodes. A table a reader still holds is left alone: that turn
// takes a fresh copy.

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "events/schedule_records.hpp"

namespace kai::daemon {

class JobStatesAtCut {
 public:
  using Table = std::map<std::string, events::JobState>;

  /// The records' job states as they are now, in a table no later call changes while a reader
  /// holds it.
  std::shared_ptr<const Table> take(const events::ScheduleRecords& records) {
    Turn& turn = turns_[next_];
    next_ ^= 1;
    if (turn.table && turn.table.use_count() == 1) {
      // The last reader let go (its release pairs with this acquire): the table is this driver's.
      std::atomic_thread_fence(std::memory_order_acquire);
    } else {
      turn.table.reset();
    }
    changed_.clear();
    const events::JobStateChangeLog& log = records.job_state_log;
    if (!turn.table || turn.log_id != log.id() || !log.since(turn.log_end, changed_)) {
      turn.table = std::make_shared<Table>(records.job_states);
    } else {
      std::sort(changed_.begin(), changed_.end());
      changed_.erase(std::unique(changed_.begin(), changed_.end()), changed_.end());
      for (const std::string& uid : changed_) {
        // Erased and copied in, not assigned: clang-tidy reads JobState's implicit assignment
        // (an array member) as declaring a reserved identifier.
        turn.table->erase(uid);
        auto now = records.job_states.find(uid);
        if (now != records.job_states.end()) turn.table->emplace(uid, now->second);
      }
    }
    turn.log_id = log.id();
    turn.log_end = log.end();
    return turn.table;
  }

 private:
  struct Turn {
    std::shared_ptr<Table> table;
    uint64_t log_id = 0;
    uint64_t log_end = 0;
  };
  Turn turns_[2];
  int next_ = 0;
  std::vector<std::string> changed_;
};

}  // namespace kai::daemon
