#pragma once
// The session's jobs by uid (Session::has_job, Session::take_times_and_usage). Keyed by the uid's
// hash, each entry checked against the job's own uid, so that the index views no string a relayout
// moves: a relayout renumbers it instead of indexing 150,000 uids again (session_refresh.cpp).

#include <boost/unordered/unordered_flat_map.hpp>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kai::core {

class JobsByUid {
 public:
  /// Adds job `job`, whose uid is `uid_of(job)` (none when empty). `uid_of` gives any job's uid.
  template <class UidOf>
  void add(uint32_t job, const UidOf& uid_of) {
    const std::string& uid = uid_of(job);
    if (uid.empty()) return;
    auto [it, added] = first_.emplace(hash(uid), job);
    if (added) return;
    if (uid_of(it->second) == uid) {
      unique_ = false;
      return;
    }
    for (uint32_t k : colliding_) {
      if (uid_of(k) == uid) {
        unique_ = false;
        return;
      }
    }
    colliding_.push_back(job);  // another uid with the same hash: almost never
  }

  /// The first job added with uid `uid`.
  template <class UidOf>
  std::optional<uint32_t> find(std::string_view uid, const UidOf& uid_of) const {
    if (auto it = first_.find(hash(uid)); it != first_.end() && uid_of(it->second) == uid) return it->second;
    for (uint32_t k : colliding_) {
      if (uid_of(k) == uid) return k;
    }
    return std::nullopt;
  }

  /// No two jobs added share a uid.
  bool unique() const { return unique_; }

  /// The jobs numbered anew: job j is now `new_of_old[j]`, or gone when it is negative. False, and
  /// the index left as it was, when two jobs shared a uid: the one that stays may not be indexed.
  bool renumber(const std::vector<int32_t>& new_of_old) {
    if (!unique_) return false;
    boost::unordered::erase_if(first_, [&](const auto& entry) { return new_of_old[entry.second] < 0; });
    for (auto& entry : first_) entry.second = static_cast<uint32_t>(new_of_old[entry.second]);
    std::erase_if(colliding_, [&](uint32_t j) { return new_of_old[j] < 0; });
    for (uint32_t& j : colliding_) j = static_cast<uint32_t>(new_of_old[j]);
    return true;
  }

 private:
  static uint64_t hash(std::string_view uid) { return std::hash<std::string_view>{}(uid); }
  boost::unordered_flat_map<uint64_t, uint32_t> first_;
  std::vector<uint32_t> colliding_;
  bool unique_ = true;
};

}  // namespace kai::core
