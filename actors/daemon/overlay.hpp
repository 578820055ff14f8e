#pragma once
// Decisions handed to the binder but not yet visible in the watched state: the next cycles must see
// a bound pod on its node (and its GPU groups) and an evicted pod releasing, or they would decide the
// same thing again. An entry goes when the watch confirms it, when the binder reports a failure (the
// allocation is freed for the next cycle), or when it is older than a timeout.

#include <chrono>
#include <deque>
#include <functional>
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
  /// The watched pod "namespace/name", or null.
  using FindPod = std::function<const model::Pod*(const std::string& key)>;

  /// Drops entries the watched state confirms (bound / gone) and entries older than `max_age`.
  void settle(const FindPod& find_pod, Clock::time_point now, std::chrono::seconds max_age);
  /// Applies the pending decisions to a cut: each pod a pending decision changes is copied into
  /// `patched` and its address in `refs` replaced, so the shared objects stay untouched.
  /// `refs.pods` must be in key order (a ClusterCut's are).
  void apply(model::ObjectRefs& refs, std::deque<model::Pod>& patched, int64_t now_unix) const;
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
