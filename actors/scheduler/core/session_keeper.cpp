#include "actors/scheduler/core/session_keeper.hpp"

#include <utility>

#include "actors/scheduler/core/grouping_memo.hpp"
#include "actors/scheduler/core/inter_pod_constraints.hpp"

namespace kai::core {
namespace {

/// What the build reads of the options besides the clock, the seed, the job state and the usage
/// (which a refresh takes anew).
bool same_build_options(const SessionOptions& a, const SessionOptions& b) {
  return a.config.actions == b.config.actions && a.config.plugins == b.config.plugins &&
         a.config.usage_db.has_value() == b.config.usage_db.has_value() && a.scheduler_name == b.scheduler_name &&
         a.default_queue == b.default_queue && a.max_consolidation_preemptees == b.max_consolidation_preemptees &&
         a.stale_grace_period_seconds == b.stale_grace_period_seconds &&
         a.pod_group_objects == b.pod_group_objects &&
         a.grouper.search_legacy_pod_groups == b.grouper.search_legacy_pod_groups &&
         a.grouper.knative_gang_schedule == b.grouper.knative_gang_schedule;
}

/// Everything the pod grouper reads of a pod (grouping.cpp, pod_grouper.cpp, workload_groupers.cpp,
/// segment_groupers.cpp) is the same: the pod stays in its group, at its place.
bool same_for_grouping(const model::Pod& a, const model::Pod& b) {
  return a.meta.namespace_ == b.meta.namespace_ && a.meta.name == b.meta.name && a.meta.uid == b.meta.uid &&
         a.meta.creation_timestamp == b.meta.creation_timestamp && a.scheduler_name == b.scheduler_name &&
         a.priority_class_name == b.priority_class_name && a.meta.labels == b.meta.labels &&
         a.meta.annotations == b.meta.annotations && a.meta.owner_references == b.meta.owner_references;
}

/// What the grouping reads of a PodGroup: that it exists under its name (its owners for Knative,
/// whose grouping is never kept).
bool same_for_grouping(const model::PodGroup& a, const model::PodGroup& b) {
  return a.meta.namespace_ == b.meta.namespace_ && a.meta.name == b.meta.name && a.meta.uid == b.meta.uid &&
         a.meta.owner_references == b.meta.owner_references;
}

/// Everything of a node but its resourceVersion is the same (the model keeps no heartbeat time):
/// the session reads it all, through its NodeInfo's object, which a refresh points at the new one.
bool same_for_session(const model::Node& a, const model::Node& b) {
  return a.meta.name == b.meta.name && a.meta.uid == b.meta.uid && a.meta.labels == b.meta.labels &&
         a.meta.annotations == b.meta.annotations && a.meta.deletion_timestamp == b.meta.deletion_timestamp &&
         a.meta.creation_timestamp == b.meta.creation_timestamp && a.unschedulable == b.unschedulable &&
         a.taints == b.taints && a.capacity == b.capacity && a.allocatable == b.allocatable &&
         a.conditions == b.conditions && a.errors == b.errors;
}

/// What the build reads of a queue (session_builder.cpp build_queues) is the same: a status written
/// by the queue controller, the usual change, keeps the session.
bool same_for_session(const model::Queue& a, const model::Queue& b) {
  return a.meta.name == b.meta.name && a.meta.creation_timestamp == b.meta.creation_timestamp &&
         a.parent_queue == b.parent_queue && a.gpu == b.gpu && a.cpu == b.cpu && a.memory == b.memory &&
         a.priority == b.priority && a.preempt_min_runtime_seconds == b.preempt_min_runtime_seconds &&
         a.reclaim_min_runtime_seconds == b.reclaim_min_runtime_seconds && a.errors == b.errors;
}

}  // namespace

void SessionKeeper::keep(std::unique_ptr<Session> session, model::ObjectRefs refs,
                         std::shared_ptr<std::deque<model::Pod>> patched, std::shared_ptr<const void> owner) {
  job_state_.hold(refs.pod_groups);
  session_ = std::move(session);
  refs_ = std::move(refs);
  patched_ = std::move(patched);
  owner_ = std::move(owner);
}

std::unique_ptr<Session> SessionKeeper::miss(std::string reason) {
  in_place_ = false;
  session_.reset();
  refs_ = {};
  patched_.reset();
  owner_.reset();
  ++built_;
  last_reason_ = std::move(reason);
  return nullptr;
}

std::string SessionKeeper::differs(const model::ObjectRefs& refs, const SessionOptions& options,
                                   Changes& changes) const {
  if (!same_build_options(session_->options(), options)) return "the configuration changed";
  if (refs.nodes.size() != refs_.nodes.size()) return "nodes were added or removed";
  for (size_t i = 0; i < refs.nodes.size(); ++i) {
    if (refs.nodes[i] == refs_.nodes[i]) continue;
    if (!same_for_session(*refs.nodes[i], *refs_.nodes[i])) return "a node changed";
    changes.nodes.emplace_back(refs_.nodes[i], refs.nodes[i]);
  }
  if (refs.queues.size() != refs_.queues.size()) return "queues were added or removed";
  for (size_t i = 0; i < refs.queues.size(); ++i) {
    if (refs.queues[i] != refs_.queues[i] && !same_for_session(*refs.queues[i], *refs_.queues[i]))
      return "a queue changed";
  }
  if (refs.priority_classes != refs_.priority_classes) return "a priority class changed";
  if (refs.bind_requests != refs_.bind_requests) return "a bind request changed";
  if (refs.owners != refs_.owners || refs.served_owner_kinds != refs_.served_owner_kinds) return "an owner changed";
  if (refs.topologies != refs_.topologies) return "a topology changed";
  if (refs.namespaces != refs_.namespaces) return "a namespace changed";
  // Pods or PodGroups added, removed or changed in what the grouping reads: the session groups the
  // pods again (Session::relayout), and the positions below are not needed.
  changes.regroup = refs.pods.size() != refs_.pods.size() || refs.pod_groups.size() != refs_.pod_groups.size();
  for (uint32_t i = 0; i < refs.pods.size() && !changes.regroup; ++i) {
    if (refs.pods[i] == refs_.pods[i]) continue;
    if (!same_for_grouping(*refs.pods[i], *refs_.pods[i])) {
      changes.regroup = true;
      break;
    }
    if (InterPodConstraints::constrains(*refs.pods[i])) return "a pod has inter-pod constraints";
    changes.pods.push_back(i);
  }
  for (uint32_t k = 0; k < refs.pod_groups.size() && !changes.regroup; ++k) {
    if (refs.pod_groups[k] == refs_.pod_groups[k]) continue;
    if (!same_for_grouping(*refs.pod_groups[k], *refs_.pod_groups[k])) {
      changes.regroup = true;
      break;
    }
    changes.pod_groups.push_back(k);
  }
  return {};
}

std::unique_ptr<Session> SessionKeeper::take(const model::ObjectRefs& refs, const SessionOptions& options) {
  if (!session_) return miss("no session kept");
  Changes changes;
  if (std::string why = differs(refs, options, changes); !why.empty()) return miss(why);
  if (!session_->refresh(refs, options, changes.pods, changes.pod_groups, changes.nodes,
                         changes.regroup ? &refs_ : nullptr, &refs_)) {
    const std::string why = session_->refresh_refusal();
    return miss(changes.regroup ? "pods or PodGroups were added, removed or regrouped, and the jobs cannot be laid out anew: " + why
                                : "a changed job cannot be derived in place: " + why);
  }
  if (changes.regroup) ++regrouped_;
  in_place_ = !changes.regroup;
  // The pods replaced in place are grouped as before, but the grouping memo's entries name the old
  // objects, which may be freed once the memo holds newer ones: a continued grouping
  // (regrouping.hpp) would not see them go.
  if (in_place_ && options.grouping_memo != nullptr) {
    for (uint32_t p : changes.pods) options.grouping_memo->forget(refs_.pods[p]);
  }
  std::unique_ptr<Session> ssn = std::move(session_);
  // The session reads the new objects only: the old ones may go.
  refs_ = {};
  patched_.reset();
  owner_.reset();
  ++kept_;
  last_reason_.clear();
  return ssn;
}

}  // namespace kai::core
