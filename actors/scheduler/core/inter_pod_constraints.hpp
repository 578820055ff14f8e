#pragma once
// The placement constraints that depend on where other pods are (docs/pod-constraints.md): required
// pod affinity and anti-affinity (the pod's own terms and the existing pods' anti-affinity terms),
// host ports, DoNotSchedule topology spread, and the podaffinity plugin's preferred-term score.
//
// Existing pods are indexed once per session by label (key=value -> tasks); each distinct term a
// pending pod asks about is counted per topology domain from that index on first use and kept
// current by the statement (on_task), so a placement never scans pods x nodes, and pods of one gang
// placed in the same session see each other.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "actors/scheduler/core/cluster_info.hpp"
#include "k8s/model/objects.hpp"

namespace kai::core {

class Session;

/// The label every namespace carries with its own name (set by the API server); the only namespace
/// label known without Namespace objects.
inline constexpr std::string_view kNamespaceNameLabel = "kubernetes.io/metadata.name";

/// Whether `selector` selects `labels` (metav1.LabelSelector semantics; an unknown operator matches nothing).
bool label_selector_matches(const model::LabelSelector& selector, const model::StringMap& labels);

/// Whether a pod uses anything this module checks (affinity, anti-affinity, spread, host ports).
bool has_inter_pod_constraints(const model::Pod& pod);

/// Why a pod's inter-pod terms cannot be evaluated (a namespaceSelector on a label other than
/// kubernetes.io/metadata.name), nullopt when they can.
std::optional<std::string> inter_pod_term_error(const model::Pod& pod);

/// One pod (anti-)affinity term resolved against the pod that states it: the namespaces it covers and
/// its selector with matchLabelKeys / mismatchLabelKeys merged in.
struct ResolvedTerm {
  std::string topology_key;
  std::optional<model::LabelSelector> selector;  ///< Absent: matches no pod.
  std::vector<std::string> namespaces;           ///< Sorted.
  std::optional<model::LabelSelector> namespace_selector;
  int32_t weight = 0;  ///< Preferred terms; required affinity of existing pods scores 1 (hardPodAffinityWeight).

  static ResolvedTerm of(const model::PodAffinityTerm& term, const model::Pod& owner, int32_t weight);
  bool matches(const model::Pod& pod) const;
  /// Identity of the term (same key, same pods matched).
  std::string key() const;
};

class InterPodConstraints {
 public:
  /// Indexes the session's placed tasks and the pods other schedulers placed on its nodes (from
  /// `objects`, the session's input). `ssn` and `objects` must outlive this object.
  InterPodConstraints(const Session& ssn, const model::ObjectRefs& objects);
  ~InterPodConstraints();

  /// Whether this session needs the index at all: some pod of `objects` has inter-pod constraints.
  static bool needed(const model::ObjectRefs& objects);

  /// The statement moved `task` off (-1) or onto (+1) its node; called around every state change.
  void on_task(uint32_t task_id, int sign);

  /// Whether `task` is subject to anything here (its own constraints, or existing pods' terms that
  /// match it); false lets callers skip the checks.
  bool concerns(const TaskInfo& task);
  /// Why `node` cannot take `task` now, nullopt if it can.
  std::optional<std::string> rejection(const TaskInfo& task, const NodeInfo& node);
  /// Whether the podaffinity plugin's score can differ between nodes for `task`.
  bool scores(const TaskInfo& task);
  /// The raw preferred-term score of `task` on `node` (weights x matching pods in the node's domains).
  int64_t preferred_score(const TaskInfo& task, const NodeInfo& node);

 private:
  struct TermCounts;
  struct ExistingTerms;
  struct TaskView;
  TermCounts& counts_for(std::vector<ResolvedTerm> terms, bool per_node);
  const TaskView& view_of(const TaskInfo& task);
  bool placed(const TaskInfo& task) const;
  /// A candidate of the label index: a task id, or kForeign | index into foreign_.
  static constexpr uint32_t kForeign = 0x80000000u;
  void count_candidate(TermCounts& counts, uint32_t id) const;
  /// The tasks whose pod carries `key`=`value` (every task, placed or not; indexed per key on first use).
  const std::vector<uint32_t>& tasks_with_label(const std::string& key, const std::string& value);
  void add_existing_terms(const model::Pod& pod, uint32_t node, int sign);

  const Session& ssn_;
  uint64_t version_ = 0;  ///< Raised by every on_task: task views older than it are recomputed.
  /// Pods of other schedulers on the session's nodes, with their node ids: they are never moved.
  std::vector<std::pair<const model::Pod*, uint32_t>> foreign_;
  /// Per label key that some term selects on: value -> candidates (tasks over the first `indexed`,
  /// and every foreign pod).
  struct LabelIndex {
    size_t indexed = 0;
    bool foreign_indexed = false;
    std::unordered_map<std::string_view, std::vector<uint32_t>> tasks;
  };
  std::unordered_map<std::string, LabelIndex> tasks_by_label_;
  std::unordered_map<std::string, std::unique_ptr<TermCounts>> counts_;
  std::vector<TermCounts*> counts_list_;
  std::unique_ptr<ExistingTerms> existing_;
  /// Host ports in use per node id: (protocol, host IP, port) of placed tasks.
  std::vector<std::vector<const model::HostPort*>> ports_by_node_;
  std::unordered_map<uint32_t, std::unique_ptr<TaskView>> views_;
};

}  // namespace kai::core
