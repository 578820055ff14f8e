#pragma once
// A transaction over the session (KAI's statement): allocate / pipeline / evict change the
// session at once (virtually), checkpoint / rollback undo back to a mark, discard undoes everything,
// commit turns the operations into decisions in order.

#include <cstdint>
#include <string>
#include <vector>

#include "actors/scheduler/core/session.hpp"

namespace kai::core {

class Statement {
 public:
  explicit Statement(Session& ssn) : ssn_(ssn) {}
  ~Statement();  // discards what was neither committed nor discarded
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  /// Places `task` on `node` (status Allocated). For shared-GPU tasks `gpu_groups` and `portion` say
  /// which devices and how much of each.
  void allocate(uint32_t task, uint32_t node, std::vector<std::string> gpu_groups = {}, int64_t portion = 0);
  /// Places `task` on resources of `node` that are still being released (status Pipelined).
  void pipeline(uint32_t task, uint32_t node, std::vector<std::string> gpu_groups = {}, int64_t portion = 0);
  /// Evicts a running task (status Releasing). `by` is the pod group that needs the room.
  void evict(uint32_t task, std::string reason, std::string by);
  /// Turns every Allocated task of `job` placed by this statement into Pipelined.
  void convert_allocated_to_pipelined(uint32_t job);

  using Checkpoint = size_t;
  Checkpoint checkpoint() const { return ops_.size(); }
  void rollback(Checkpoint cp);
  void discard() { rollback(0); }
  /// Records the operations as decisions of `action` (in order) and empties the statement.
  void commit(const std::string& action, const std::string& by);

  bool empty() const { return ops_.empty(); }

 private:
  struct TaskState {
    PodStatus status;
    int32_t node;
    std::vector<std::string> gpu_groups;
    int64_t placed_portion;
  };
  struct Op {
    uint32_t task;
    TaskState before;
    std::string reason;
    std::string by;
  };
  void apply(uint32_t task, const TaskState& next, std::string reason = {}, std::string by = {});
  void set_state(uint32_t task, const TaskState& state);

  Session& ssn_;
  std::vector<Op> ops_;
};

}  // namespace kai::core
