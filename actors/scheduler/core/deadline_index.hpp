#pragma once
// The cycle's next deadline (cycle.cpp step 6) kept with a session between cycles: each job's
// deadlines still to come (a stale gang's grace ends, a running job's min-runtime ends, a pending
// group's preemption delay ends), in one order. A kept session marks the jobs whose deadlines may
// have moved (derived again, their times taken, their tasks moved by the last cycle's actions or
// this one's), and only those are read again; the rest keep theirs, and the next deadline is the
// first one after now. At 5,000 nodes that spares a walk over 150,000 jobs per cycle.
//
// A deadline not yet to come when it was read is kept; one already past is dropped for good, so a
// clock that goes back, or other runtimes, read every job again.

#include <algorithm>
#include <boost/unordered/unordered_flat_map.hpp>
#include <cstdint>
#include <optional>
#include <set>
#include <utility>
#include <vector>

namespace kai::core {

class DeadlineIndex {
 public:
  /// Every job is read at the next `next`: after a build or a relayout.
  void reset() {
    primed_ = false;
    marked_.clear();
  }
  /// The jobs numbered anew by a relayout: job j is now `new_of_old[j]`, or gone when it is negative.
  /// The jobs derived anew are to be marked by the caller.
  void renumber(const std::vector<int32_t>& new_of_old) {
    auto new_id = [&](uint32_t j) { return j < new_of_old.size() ? new_of_old[j] : -1; };
    std::erase_if(marked_, [&](uint32_t j) { return new_id(j) < 0; });
    for (uint32_t& j : marked_) j = static_cast<uint32_t>(new_id(j));
    if (!primed_) return;
    boost::unordered_flat_map<uint32_t, std::vector<int64_t>> by_job;
    by_job.reserve(by_job_.size());
    order_.clear();
    for (auto& [j, times] : by_job_) {
      const int32_t n = new_id(j);
      if (n < 0) continue;
      for (int64_t t : times) order_.insert({t, static_cast<uint32_t>(n)});
      by_job.emplace(static_cast<uint32_t>(n), std::move(times));
    }
    by_job_ = std::move(by_job);
  }
  /// Job `job`'s deadlines may have moved.
  void mark(uint32_t job) {
    if (primed_) marked_.push_back(job);
  }

  /// The first deadline (Unix seconds) at or after `first_second` of jobs 0..job_count-1, where
  /// `deadlines(j, out)` appends job j's, given the runtimes they were computed with.
  template <class Deadlines>
  std::optional<int64_t> next(uint32_t job_count, int64_t first_second, const std::vector<double>& runtimes,
                              Deadlines&& deadlines) {
    if (!primed_ || first_second < last_first_second_ || runtimes != runtimes_) {
      order_.clear();
      by_job_.clear();
      runtimes_ = runtimes;
      for (uint32_t j = 0; j < job_count; ++j) read(j, first_second, deadlines);
      primed_ = true;
    } else {
      std::sort(marked_.begin(), marked_.end());
      marked_.erase(std::unique(marked_.begin(), marked_.end()), marked_.end());
      for (uint32_t j : marked_) {
        if (auto it = by_job_.find(j); it != by_job_.end()) {
          for (int64_t t : it->second) order_.erase({t, j});
          by_job_.erase(it);
        }
        if (j < job_count) read(j, first_second, deadlines);
      }
    }
    marked_.clear();
    last_first_second_ = first_second;
    auto it = order_.lower_bound({first_second, 0});
    if (it == order_.end()) return std::nullopt;
    return it->first;
  }

 private:
  template <class Deadlines>
  void read(uint32_t j, int64_t first_second, Deadlines& deadlines) {
    scratch_.clear();
    deadlines(j, scratch_);
    std::vector<int64_t> kept;
    for (int64_t t : scratch_) {
      if (t >= first_second && order_.insert({t, j}).second) kept.push_back(t);
    }
    if (!kept.empty()) by_job_.emplace(j, std::move(kept));
  }

  bool primed_ = false;
  int64_t last_first_second_ = 0;
  std::vector<double> runtimes_;
  std::vector<uint32_t> marked_;
  std::set<std::pair<int64_t, uint32_t>> order_;
  boost::unordered_flat_map<uint32_t, std::vector<int64_t>> by_job_;
  std::vector<int64_t> scratch_;
};

}  // namespace kai::core
