#include "actors/scheduler/core/statement.hpp"

#include <unordered_set>

#include "k8s/model/time.hpp"
#include "k8s/model/well_known_names.hpp"

namespace kai::core {

Statement::~Statement() {
  discard();
}

void Statement::set_state(uint32_t task_id, const TaskState& state) {
  ssn_.set_task_state(task_id, state.status, state.node, state.gpu_groups, state.placed_portion);
}

void Statement::apply(uint32_t task_id, const TaskState& next, std::string reason, std::string by) {
  const TaskInfo& task = ssn_.tasks[task_id];
  ops_.push_back(Op{task_id, TaskState{task.status, task.node, task.gpu_groups, task.placed_portion},
                    std::move(reason), std::move(by)});
  set_state(task_id, next);
}

void Statement::allocate(uint32_t task, uint32_t node, std::vector<std::string> gpu_groups, int64_t portion) {
  apply(task, TaskState{PodStatus::kAllocated, static_cast<int32_t>(node), std::move(gpu_groups), portion});
}

void Statement::pipeline(uint32_t task, uint32_t node, std::vector<std::string> gpu_groups, int64_t portion) {
  apply(task, TaskState{PodStatus::kPipelined, static_cast<int32_t>(node), std::move(gpu_groups), portion});
}

void Statement::evict(uint32_t task, std::string reason, std::string by) {
  const TaskInfo& t = ssn_.tasks[task];
  apply(task, TaskState{PodStatus::kReleasing, t.node, t.gpu_groups, t.placed_portion}, std::move(reason),
        std::move(by));
}

void Statement::convert_allocated_to_pipelined(uint32_t job) {
  // Only operations of this statement are converted: the task list is scanned in operation order so
  // that the conversions are themselves undoable operations.
  const size_t n = ops_.size();
  for (size_t i = 0; i < n; ++i) {
    const uint32_t task_id = ops_[i].task;
    const TaskInfo& t = ssn_.tasks[task_id];
    if (t.job != job || t.status != PodStatus::kAllocated) continue;
    apply(task_id, TaskState{PodStatus::kPipelined, t.node, t.gpu_groups, t.placed_portion});
  }
}

void Statement::rollback(Checkpoint cp) {
  while (ops_.size() > cp) {
    Op op = std::move(ops_.back());
    ops_.pop_back();
    set_state(op.task, op.before);
  }
}

void Statement::commit(const std::string& action, const std::string& by) {
  // A task touched several times (allocated, then converted to pipelined) yields one decision with its
  // final state, at the position of its first operation.
  std::vector<uint32_t> order;
  std::vector<const Op*> first_op;
  std::unordered_set<uint32_t> seen;
  for (const auto& op : ops_) {
    if (seen.insert(op.task).second) {
      order.push_back(op.task);
      first_op.push_back(&op);
    }
  }
  for (size_t i = 0; i < order.size(); ++i) {
    TaskInfo& t = ssn_.tasks[order[i]];
    events::Decision d;
    d.action = action;
    d.pod = t.key;
    d.pod_uid = t.uid;
    d.node = t.node != kNoNode ? ssn_.nodes[t.node].name : std::string();
    d.gpu_groups = t.gpu_groups;
    d.gpu_fraction = t.gpu.is_shared() ? static_cast<double>(t.placed_portion) / 1000.0 : 0.0;
    d.by = first_op[i]->by.empty() ? by : first_op[i]->by;
    d.reason = first_op[i]->reason;
    d.queue = ssn_.jobs[t.job].queue_name;  // the task's own group: an evicted victim's queue
    switch (t.status) {
      case PodStatus::kAllocated:
        d.kind = events::DecisionKind::kBind;
        t.status = PodStatus::kBinding;  // KAI shows allocated tasks as Binding once committed
        break;
      case PodStatus::kPipelined:
        d.kind = events::DecisionKind::kPipeline;
        break;
      case PodStatus::kReleasing: {
        d.kind = events::DecisionKind::kEvict;
        // The victim's group remembers it (KAI's commitEvict): its preemption delay runs again from
        // now (preemption_delay.hpp), and the time is written back as its PodGroup's annotation.
        JobInfo& victim = ssn_.jobs[t.job];
        victim.last_eviction = ssn_.record_time();
        ssn_.annotation_updates[t.job][model::kLastEvictionAnnotation] =
            model::format_rfc3339(*victim.last_eviction);
        break;
      }
      default:
        continue;  // back to where it started: nothing to decide
    }
    ssn_.record(std::move(d));
  }
  ops_.clear();
}

}  // namespace kai::core
