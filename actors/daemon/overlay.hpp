#pragma once
// Decisions handed to the binder but not yet visible in the watched state: the next cycles must see
// a bound pod on its node (and its GPU groups) and an evicted pod releasing, or they would decide the
// same thing again. An entry goes when the watch confirms it, when the binder reports a failure (the
// allocation is freed for the next cycle), or when it is older than a timeout.

#include <chrono>
#include <map>
#include <set>
#include <string>

#include "events/decision.hpp"
#include "events/projection.hpp"
#include "k8s/model/objects.hpp"

namespace kai::daemon {

class InFlight {
 public:
  using Clock = std::chrono::steady_clock;

  void add(const events::Decision& d, Clock::time_point now);
  /// The binder failed or gave up: forget the decision so the next cycle decides again.
  void fail(const std::string& pod);
  /// Drops entries the watched state confirms (bound / gone) and entries older than `max_age`.
  void settle(const events::ClusterState& state, Clock::time_point now, std::chrono::seconds max_age);
  /// Applies the pending decisions to a snapshot.
  void apply(model::ClusterObjects& objects, int64_t now_unix) const;
  bool pending(const std::string& pod) const { return entries_.count(pod) > 0; }
  /// GPU groups of pending binds, by node (their reservation pods must not be cleaned up).
  std::map<std::string, std::set<std::string>> groups_by_node() const;
  size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    events::Decision decision;
    Clock::time_point since;
  };
  std::map<std::string, Entry> entries_;  // by "namespace/name"
};

}  // namespace kai::daemon
