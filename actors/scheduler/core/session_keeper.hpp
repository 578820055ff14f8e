#pragma once
// A session kept between the cycles of one caller (the daemon), so that a cycle whose cut differs
// from the last one only in some pods and PodGroups does not build the session again
// (docs/performance-targets.md "Kept sessions"). Kept means: the last cycle's changes are undone
// (every task back to its built state through the same transitions a rollback uses, the ghosts,
// reasons, decisions and plugin hooks dropped), then the jobs of the changed pods and PodGroups
// are derived again in place, with the same code the build runs. When pods or PodGroups were added
// or removed, or changed in what the pod grouper reads, the pods are grouped again and the jobs laid
// out as a build lays them: the unchanged jobs moved, the others derived (session_relayout.cpp).
// The result is the session a build from the new cut gives (property tests in
// tests/core/session_keeper_test.cpp); a cut that changes anything else (a node, a queue, an owner,
// a pod of another scheduler) is built afresh. Not thread-safe: one caller, one thread.
//
// Objects are compared by address. That is sound only while the objects of the kept session are
// alive, so that no other object can take their address: the caller hands over an owner of them
// with the session (`keep`), and the keeper drops it once the next cycle's session is in hand.

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "actors/scheduler/core/cycle.hpp"
#include "actors/scheduler/core/session.hpp"
#include "k8s/model/objects.hpp"

namespace kai::core {

class SessionKeeper {
 public:
  /// Keeps a cycle's session for the next cycle, with what it read: the refs and patched pods of its
  /// CycleResult, and `owner`, which keeps the rest of those objects alive.
  void keep(std::unique_ptr<Session> session, model::ObjectRefs refs, std::shared_ptr<std::deque<model::Pod>> patched,
            std::shared_ptr<const void> owner);

  /// The kept session brought to `refs` and `options`, or null when it cannot be (the caller
  /// builds one). Either way the keeper holds nothing afterwards.
  std::unique_ptr<Session> take(const model::ObjectRefs& refs, const SessionOptions& options);

  /// Cycles that took a kept session, and that had to build one (for tests, the bench and metrics).
  uint64_t kept() const { return kept_; }
  uint64_t built() const { return built_; }
  /// Of the kept ones, those whose pods were grouped again (Session::relayout).
  uint64_t regrouped() const { return regrouped_; }
  /// Why the last take built afresh ("" after a kept one).
  const std::string& last_rebuild_reason() const { return last_reason_; }
  /// Whether the last take refreshed the kept session in place (no relayout, no build).
  bool last_take_in_place() const { return in_place_; }
  /// The job state kept between the cycles (cycle.hpp step 2), whose PodGroups `keep` holds.
  JobStateMemo& job_state() { return job_state_; }

 private:
  /// What changed in place between the kept session's objects and the next cut's.
  struct Changes {
    std::vector<uint32_t> pods;        ///< Positions of changed pods.
    std::vector<uint32_t> pod_groups;  ///< Positions of changed PodGroups.
    std::vector<std::pair<const model::Node*, const model::Node*>> nodes;  ///< (old, new) objects.
    /// Pods or PodGroups were added, removed or changed in what the grouping reads (`pods` and
    /// `pod_groups` are then incomplete and not read).
    bool regroup = false;
  };
  std::unique_ptr<Session> miss(std::string reason);
  /// What the session was built from, compared with the next cut, or a reason it differs.
  std::string differs(const model::ObjectRefs& refs, const SessionOptions& options, Changes& changes) const;

  std::unique_ptr<Session> session_;
  model::ObjectRefs refs_;
  std::shared_ptr<std::deque<model::Pod>> patched_;
  std::shared_ptr<const void> owner_;
  uint64_t kept_ = 0;
  uint64_t built_ = 0;
  uint64_t regrouped_ = 0;
  std::string last_reason_;
  bool in_place_ = false;
  JobStateMemo job_state_;
};

}  // namespace kai::core
