#pragma once
// What the status pass (status_objects.cpp) remembers of a session between cycles, so that a kept
// session's cycle computes the statuses of the PodGroups that may have changed rather than of every
// one (docs/performance-targets.md "Kept sessions"). Held by the session (Session::status_memo),
// dropped with it; a refresh tells it of the jobs it derives again and of the PodGroup objects it
// replaces, a relayout of the jobs' new ids and of the PodGroups that went and came
// (session_refresh.cpp).
//
// A job is *settled* when the pass found its PodGroup's status in sync, no write of it awaited, no
// task of it pending or gated and no scheduling condition on its PodGroup. Its resourcesStatus is
// computed from its pods and PodGroup alone, and its conditions stay as they are while it has no
// pending task, which the actions never make (status_objects.cpp next_conditions): only a change of
// its pods or PodGroup (a refresh derives the job again) or a write of it awaited can give it
// something to write, and the pass skips it until one does.

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "k8s/model/objects.hpp"

namespace kai::core {

/// One queue's three resource lists summed over PodGroups, with how many of them list each
/// resource: a resource is in the sum exactly when some PodGroup lists it, as a sum made afresh
/// has it, however many were taken out since. Also a change of such sums (a group's lists taken
/// out and others put in), whose counts may be 0 or below.
class ResourceSums {
 public:
  void add(const model::ResourcesStatus& r, int sign) {
    add_list(lists_[0], r.allocated, sign);
    add_list(lists_[1], r.allocated_non_preemptible, sign);
    add_list(lists_[2], r.requested, sign);
  }
  void add(const ResourceSums& other) {
    for (int l = 0; l < 3; ++l) {
      for (const auto& [name, e] : other.lists_[l]) {
        auto it = lists_[l].find(name);
        if (it == lists_[l].end()) it = lists_[l].emplace(name, Entry{}).first;
        it->second.milli += e.milli;
        it->second.listed += e.listed;
        if (it->second.listed == 0 && it->second.milli == 0) lists_[l].erase(it);
      }
    }
  }
  model::ResourcesStatus value() const {
    model::ResourcesStatus r;
    read_list(lists_[0], r.allocated);
    read_list(lists_[1], r.allocated_non_preemptible);
    read_list(lists_[2], r.requested);
    return r;
  }

 private:
  struct Entry {
    int64_t milli = 0;
    int64_t listed = 0;  ///< PodGroups that list the resource
  };
  using List = std::map<std::string, Entry, std::less<>>;
  static void add_list(List& to, const model::ResourceList& from, int sign) {
    for (const auto& [name, milli] : from) {
      auto it = to.find(name);
      if (it == to.end()) it = to.emplace(name, Entry{}).first;
      it->second.milli += sign * milli;
      it->second.listed += sign;
      // A sum over PodGroups lists a resource no group lists only with 0; a change of one group's
      // lists (-1 then +1) keeps its difference even when the count comes back to 0.
      if (it->second.listed == 0 && it->second.milli == 0) to.erase(it);
    }
  }
  static void read_list(const List& from, model::ResourceList& to) {
    for (const auto& [name, e] : from) {
      if (e.listed > 0) to.emplace_hint(to.end(), name, e.milli);
    }
  }
  List lists_[3];
};

struct StatusMemo {
  /// Whether the pass ran on the session since it was built or laid out anew (the fields below
  /// are then filled).
  bool primed = false;
  /// By job id: settled (see above).
  std::vector<char> settled;
  /// By queue name: every PodGroup object's watched lists, summed over the objects the session
  /// reads (the pass adds what its computed lists change).
  std::map<std::string, ResourceSums, std::less<>> watched;
  /// The queue tree of the last pass: each Queue object's name and parent, in the objects' order;
  /// the objects' positions by name (the first of a name), the children by parent, sorted; each
  /// queue's lists summed up the tree. `totals_current` while the sums' inputs are what they were
  /// then: the same watched lists, and no group's computed lists differing from its watched ones.
  std::vector<std::pair<std::string, std::string>> tree;
  std::map<std::string, uint32_t> queue_at;
  std::map<std::string, std::vector<std::string>> children;
  std::map<std::string, model::ResourcesStatus> totals;
  bool totals_current = false;

  /// A refresh replaced a job's PodGroup object `before` by `now`.
  void replace_pod_group(const model::PodGroup& before, const model::PodGroup& now) {
    watched[before.queue].add(before.resources_status, -1);
    watched[now.queue].add(now.resources_status, +1);
    totals_current = false;
  }
  /// A refresh derived job `j` again.
  void unsettle(uint32_t j) {
    if (j < settled.size()) settled[j] = 0;
  }
};

}  // namespace kai::core
