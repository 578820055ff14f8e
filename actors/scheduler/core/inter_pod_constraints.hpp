#pragma once
// The placement constraints that depend on where other pods are (docs/pod-constraints.md): required
// pod affinity and anti-affinity (the pod's own terms and the existing pods' anti-affinity terms),
// host ports, DoNotSchedule topology spread, and the podaffinity plugin's preferred-term score.
//
// Existing pods are indexed once per session by label (key=value -> tasks, filled by the session
// build for the keys needed() finds); each distinct term a pending pod asks about is counted per
// topology domain from that index on first use and kept current by the statement (on_task), so a
// placement never scans pods x nodes, and pods of one gang placed in the same session see each other.

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <boost/unordered/unordered_flat_map.hpp>

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

/// Namespace name -> its labels, from the Namespace objects of the session's input.
using NamespaceLabels = std::unordered_map<std::string, const model::StringMap*>;

/// One pod (anti-)affinity term resolved against the pod that states it: the namespaces it covers and
/// its selector with matchLabelKeys / mismatchLabelKeys merged in.
struct ResolvedTerm {
  std::string topology_key;
  std::optional<model::LabelSelector> selector;  ///< Absent: matches no pod.
  std::vector<std::string> namespaces;           ///< Sorted.
  std::optional<model::LabelSelector> namespace_selector;
  int32_t weight = 0;  ///< Preferred terms; required affinity of existing pods scores 1 (hardPodAffinityWeight).
  /// The labels namespaceSelector reads; a namespace it does not hold has only kubernetes.io/metadata.name.
  const NamespaceLabels* namespace_labels = nullptr;

  static ResolvedTerm of(const model::PodAffinityTerm& term, const model::Pod& owner, int32_t weight,
                         const NamespaceLabels* namespace_labels = nullptr);
  bool matches(const model::Pod& pod) const;
  /// Identity of the term (same key, same pods matched).
  std::string key() const;
};

/// Items (terms) filed under a label every pod they match must carry (a matchLabels entry, or each
/// value of an In requirement), so that a pod meets only the terms it may match; terms without such
/// a label are met by every pod.
class LabelAnchoredIndex {
 public:
  void add(const std::optional<model::LabelSelector>& selector, size_t item);
  /// Calls `f(item)` for each item a pod with `labels` may match, each once.
  template <class F>
  void for_candidates(const model::StringMap& labels, F&& f) const {
    for (size_t item : any_) f(item);
    if (by_label_.empty()) return;
    for (const auto& [k, v] : labels) {
      auto key = by_label_.find(k);
      if (key == by_label_.end()) continue;
      auto value = key->second.find(v);
      if (value == key->second.end()) continue;
      for (size_t item : value->second) f(item);
    }
  }
  /// Raised by every add: an answer computed at the same generation still holds.
  size_t generation() const { return generation_; }

 private:
  size_t generation_ = 0;
  std::unordered_map<std::string, std::unordered_map<std::string, std::vector<size_t>>> by_label_;
  std::vector<size_t> any_;
};

/// For one label key some term selects on: value -> the candidates carrying it (tasks below
/// `indexed`, and every foreign pod once `foreign_indexed`).
struct TaskLabelIndex {
  size_t indexed = 0;
  bool foreign_indexed = false;
  /// Value -> its candidates in `postings`, which keeps each list in place as others are added
  /// (callers hold references while asking for more). The values are views into the pods' labels.
  boost::unordered_flat_map<std::string_view, uint32_t> slot_of;
  std::deque<std::vector<uint32_t>> postings;
  void add(std::string_view value, uint32_t candidate);
  /// The session build files each task as it adds it, in task order, while the pod's labels are in
  /// the cache: a later pass over 150,000 pods' label maps cost a tenth of the actions.
  void add_task(const model::StringMap& labels, const std::string& key, uint32_t task_id);
};
using TaskLabelIndexes = std::unordered_map<std::string, TaskLabelIndex>;

class InterPodConstraints {
 public:
  /// Indexes the session's placed tasks and the pods other schedulers placed on its nodes (from
  /// `objects`, the session's input); `labels` are the label indexes the build filled (needed()'s
  /// keys). `ssn` and `objects` must outlive this object.
  InterPodConstraints(const Session& ssn, const model::ObjectRefs& objects, TaskLabelIndexes labels = {});
  ~InterPodConstraints();

  /// Whether this session needs the index at all: some pod of `objects` has inter-pod constraints.
  /// With `keys`, adds an empty index for each label key the pods' terms select on.
  static bool needed(const model::ObjectRefs& objects, TaskLabelIndexes* keys = nullptr);
  /// Whether `pod` has inter-pod constraints (so that a session with it needs the index).
  static bool constrains(const model::Pod& pod);

  /// The statement moved `task` off (-1) or onto (+1) its node; called around every state change.
  void on_task(uint32_t task_id, int sign);

  /// Whether `task` is subject to anything here (its own constraints, or existing pods' terms that
  /// match it); false lets callers skip the checks.
  bool concerns(const TaskInfo& task);
  /// Why `node` cannot take `task` now (a fixed text: asked of every node a constrained task may
  /// go to, it allocates nothing), null if it can.
  const char* rejection(const TaskInfo& task, const NodeInfo& node);
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
  /// The task's view when something here concerns it (concerns()), else null.
  const TaskView* concerned_view(const TaskInfo& task);
  /// The task's own terms, resolved once per session: their counts are kept current by on_task.
  void resolve_own_terms(const model::Pod& pod, TaskView& v);
  /// The spread constraints' counts per domain at the current version.
  void sum_spreads(const model::Pod& pod, TaskView& v) const;
  bool placed(const TaskInfo& task) const;
  /// A candidate of the label index: a task id, or kForeign | index into foreign_.
  static constexpr uint32_t kForeign = 0x80000000u;
  void count_candidate(TermCounts& counts, uint32_t id) const;
  /// The tasks whose pod carries `key`=`value` (every task, placed or not; indexed per key on first use).
  const std::vector<uint32_t>& tasks_with_label(const std::string& key, const std::string& value);
  void add_existing_terms(const model::Pod& pod, uint32_t node, int sign);
  /// Whether some existing pod's term among `groups` matches `pod`.
  bool may_match(const LabelAnchoredIndex& groups, const model::Pod& pod) const;

  /// The domains of a topology key: each node's as a dense id (kNoDomain where the node lacks the
  /// label), made once per key, so that a check is an integer lookup rather than a string hash.
  static constexpr int32_t kNoDomain = -1;
  struct Domains {
    std::vector<int32_t> of_node;  ///< By node id.
  };
  /// Pods counted per domain id.
  using DomainCounts = boost::unordered_flat_map<int32_t, int32_t>;
  const Domains& domains_of(const std::string& key);

  const Session& ssn_;
  NamespaceLabels namespace_labels_;
  std::unordered_map<std::string, Domains> domains_by_key_;
  uint64_t version_ = 0;  ///< Raised by every on_task: spread sums older than it are recomputed.
  /// Pods of other schedulers on the session's nodes, with their node ids: they are never moved.
  std::vector<std::pair<const model::Pod*, uint32_t>> foreign_;
  /// Per label key that some term selects on (filled by the build, or here on first use).
  TaskLabelIndexes tasks_by_label_;
  std::unordered_map<std::string, std::unique_ptr<TermCounts>> counts_;
  std::vector<TermCounts*> counts_list_;
  LabelAnchoredIndex counts_index_;  ///< Into counts_list_: the counts a placed pod may change.
  std::unique_ptr<ExistingTerms> existing_;
  /// The ExistingTerms groups of each pod with terms, in the order add_existing_terms files them.
  std::unordered_map<const model::Pod*, std::vector<size_t>> groups_of_pod_;
  /// Host ports in use per node id: (protocol, host IP, port) of placed tasks.
  std::vector<std::vector<const model::HostPort*>> ports_by_node_;
  /// By task id, made on first use. Open addressing on the id: asked of every node a constrained
  /// task may go to, a node-based map's lookup was a tenth of the checks.
  boost::unordered_flat_map<uint32_t, std::unique_ptr<TaskView>> views_;
  /// Per task id, what the anchored indexes answered for its pod at their generation then: the
  /// statement reports a task many times (every placement tried and rolled back), and its labels do
  /// not change.
  struct TaskCandidates {
    size_t counts_generation = SIZE_MAX;
    std::vector<uint32_t> counts;  ///< Into counts_list_.
    size_t anti_generation = SIZE_MAX;
    bool matched_by_anti = false;
    size_t scored_generation = SIZE_MAX;
    bool matched_by_scored = false;
  };
  std::unordered_map<uint32_t, TaskCandidates> candidates_;  ///< Only the tasks asked about.
  TaskCandidates& candidates_of(uint32_t task_id);
};

}  // namespace kai::core
