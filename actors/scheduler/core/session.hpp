#pragma once
// A scheduling session: the dense snapshot of one cycle plus the plugin hooks the actions call
// (KAI's session). Actions change it only through a Statement.

#include <boost/unordered/unordered_flat_map.hpp>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "actors/scheduler/core/cluster_info.hpp"
#include "actors/scheduler/core/deadline_index.hpp"
#include "actors/scheduler/core/grouping.hpp"
#include "actors/scheduler/core/jobs_by_uid.hpp"
#include "actors/scheduler/core/node_free_index.hpp"
#include "actors/scheduler/core/pod_group_objects_flag.hpp"
#include "actors/scheduler/core/queue_usage.hpp"
#include "actors/scheduler/core/scheduler_config.hpp"
#include "actors/scheduler/core/topology_tree.hpp"
#include "events/decision.hpp"
#include "k8s/model/objects.hpp"

namespace kai::core {

/// A group's job state as a cycle resolved it (cycle.hpp): what KAI reads from the PodGroup's
/// annotations.
struct JobTimes {
  std::optional<int64_t> last_start;
  std::optional<int64_t> stale_since;
  std::optional<int64_t> last_eviction;
  bool operator==(const JobTimes&) const = default;
};

/// Hashes a uid held or viewed alike, so that a table of held uids is searched with a view.
struct UidHash {
  using is_transparent = void;
  size_t operator()(std::string_view uid) const noexcept { return std::hash<std::string_view>{}(uid); }
};

/// Job state by group UID (SessionOptions::job_times), kept between cycles (job_state_memo.hpp),
/// so it holds its keys. Open addressing: at 150,000 groups a table of nodes cost more than the
/// lookups.
using JobTimesByUid = boost::unordered_flat_map<std::string, JobTimes, UidHash, std::equal_to<>>;

struct SessionOptions {
  SchedulerConfig config = SchedulerConfig::defaults();
  /// Unix seconds used as "now". Default: 0 (callers pass the wall clock or --now).
  int64_t now = 0;
  /// The same clock in milliseconds when the caller knows it finer (the daemon); 0 = now * 1000.
  /// Periods are checked against it, so a grace or a min-runtime is never cut short by rounding.
  /// Default: 0.
  int64_t now_ms = 0;
  /// Seeds new GPU-group IDs. Default: 1.
  uint64_t seed = 1;
  /// Scheduler name whose pods are scheduled. Default: kai-scheduler.
  std::string scheduler_name = "kai-scheduler";
  /// Queue for bare pods without the queue label. Default: default-queue.
  std::string default_queue = "default-queue";
  /// Victim jobs one consolidation may move (--max-consolidation-preemptees); 0 disables it. Default: 16.
  int32_t max_consolidation_preemptees = 16;
  /// How long a gang may stay below minMember before its pods are evicted
  /// (--default-staleness-grace-period); negative = never. Default: 60 s.
  int64_t stale_grace_period_seconds = 60;
  /// Which groups get PodGroup objects and pod annotations written (--pod-group-objects). Default: all.
  PodGroupObjects pod_group_objects = PodGroupObjects::kAll;
  /// The pod grouper's --search-legacy-pg and --knative-gang-schedule. Default: both on, as KAI.
  GrouperFlags grouper;
  /// The pod grouper's decisions kept from the caller's last session (grouping_memo.hpp); not owned.
  /// Default: null (every pod grouped afresh, as kai-sim and replay do).
  GroupingMemo* grouping_memo = nullptr;
  /// Job state by group UID, resolved by the cycle from the log (cycle.hpp). A group it holds
  /// takes these values; others read the PodGroup annotations, then their pods' PodScheduled time.
  /// Not owned. Default: null (annotations only, as kai-sim's first round).
  const JobTimesByUid* job_times = nullptr;
  /// The uids whose `job_times` entry may differ from the table's at generation
  /// `job_times_generation - 1`; null: any may. A kept session that took the times of that
  /// generation takes those groups' only (Session::refresh). Not owned. Default: null.
  const std::vector<std::string>* job_times_changed = nullptr;
  /// Which state of `job_times` this is (JobStateMemo::generation); 0: not counted. Default: 0.
  uint64_t job_times_generation = 0;
  /// Each queue's historical usage by name (time-based fair share, docs/time-based-fair-share.md):
  /// the proportion plugin lowers the over-quota share of queues that used more. Not owned.
  /// Default: null (every usage 0).
  const std::map<std::string, UsageShare>* queue_usage = nullptr;
};

/// A candidate device for a shared-GPU task: an existing group, or a whole device (new group).
struct GpuCandidate {
  int32_t group_index = -1;  ///< Into NodeInfo::shared_gpus; -1 = a whole idle or releasing device.
  double used_portion = 0;   ///< Used portion of the device (0 for a whole device), for gpupack/spread.
};

/// Three-way comparison result: < 0 means `a` goes first, > 0 `b` first, 0 undecided.
using JobOrderFn = std::function<int(const JobInfo& a, const JobInfo& b)>;
using TaskOrderFn = std::function<int(const TaskInfo& a, const TaskInfo& b)>;
using PodSetOrderFn = std::function<int(const JobInfo& job, const PodSetInfo& a, const PodSetInfo& b)>;
/// Compares queues `a` and `b` for the pending jobs `job_a` / `job_b` (the best of each subtree), whose
/// next allocation attempts request `req_a` / `req_b`.
using QueueOrderFn =
    std::function<int(const QueueInfo& a, const JobInfo& job_a, const QueueQuantities& req_a,
                      const QueueInfo& b, const JobInfo& job_b, const QueueQuantities& req_b)>;
/// Called once per task before scoring, with all nodes (binpack computes its min / max here).
using NodePreOrderFn = std::function<void(const TaskInfo& task)>;
/// Adds each plugin's score for `task` on every node in `nodes` to `scores`.
using NodeOrderFn =
    std::function<void(const TaskInfo& task, std::span<const uint32_t> nodes, std::span<double> scores)>;
using GpuOrderFn = std::function<double(const TaskInfo& task, const NodeInfo& node, const GpuCandidate& c)>;
/// A node filter that depends only on the pod's spec and the node's static properties.
using StaticPredicateFn =
    std::function<std::optional<std::string>(const TaskInfo& task, const NodeInfo& node)>;
/// A job-level capacity check on the tasks about to be allocated (proportion's capacity policy).
using JobCapacityFn =
    std::function<std::optional<FitReason>(const JobInfo& job, std::span<const uint32_t> tasks)>;
/// A task-on-node capacity check (quota converted for that node), nullopt = ok.
using TaskCapacityFn = std::function<std::optional<std::string>(const TaskInfo& task, const NodeInfo& node)>;
/// Statement event handlers keep plugin state (queue usage) in sync.
using AllocateEventFn = std::function<void(const TaskInfo& task, int sign)>;
/// Whether `victim` may lose pods to `preemptor` in `action` now (minruntime); elastic victims pass
/// `core` = false when only their pods beyond minAvailable are asked for.
using VictimFilterFn = std::function<bool(const std::string& action, const JobInfo& preemptor,
                                          const JobInfo& victim, bool core)>;
/// Validates a reclaim scenario: `victims` (task ids) are to be evicted so that `reclaimer` gets `request`.
/// `still_placed` says the victims are not evicted yet (a probe before the search).
using ReclaimValidatorFn = std::function<bool(const JobInfo& reclaimer, const QueueQuantities& request,
                                              std::span<const uint32_t> victims, bool still_placed)>;
/// Whether a job may reclaim at all (proportion's CanReclaimResources).
using CanReclaimFn = std::function<bool(const JobInfo& job, const QueueQuantities& request)>;
/// Words for an eviction: KAI's message for the pod `victim` evicted in `action` for `preemptor`.
using EvictionMessageFn =
    std::function<std::string(const std::string& action, const JobInfo& preemptor, const TaskInfo& victim)>;

class Statement;
class Plugin;
class SessionBuilder;
class GpuGroupUsers;
struct GroupsWritten;
struct EvictionCache;
class InterPodConstraints;
struct StatusMemo;

class Session {
 public:
  /// Builds the session from a snapshot. Never fails: bad objects become unschedulable reasons.
  Session(const model::ClusterObjects& objects, SessionOptions options);
  /// The same from the objects' addresses: nothing is copied (the objects must outlive the session).
  Session(const model::ObjectRefs& objects, SessionOptions options);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  const SessionOptions& options() const { return options_; }
  int64_t now() const { return options_.now; }
  /// "now" in milliseconds (SessionOptions::now_ms).
  int64_t now_ms() const { return options_.now_ms != 0 ? options_.now_ms : options_.now * 1000; }
  /// The Unix second to record as the start of a period (last start, stale since): now rounded up,
  /// so that a period counted from it is never shorter than its length.
  int64_t record_time() const { return (now_ms() + 999) / 1000; }

  // --- state (read freely; change only through Statement) ---
  std::vector<NodeInfo> nodes;
  std::vector<TaskInfo> tasks;
  std::vector<JobInfo> jobs;
  std::vector<QueueInfo> queues;
  /// The pod grouper's groups the jobs were built from, one per job and in the same order.
  std::vector<PodGroupAssignment> groups;
  /// Pods of other schedulers and pods that are not scheduled (for output only).
  std::vector<events::Decision> decisions;
  /// Cluster totals over Ready nodes (proportion), GPU devices / millicores / bytes.
  QueueQuantities cluster_total;
  /// Smallest per-device GPU memory over nodes with more than 100 MiB, default 100 (docs/kai-compatibility.md "GPU sharing").
  int64_t min_node_gpu_memory_mib = 100;
  std::vector<std::string> warnings;  ///< Input problems that are not tied to one pod group.
  /// The Topology objects' domains over the nodes (topology_tree.hpp), in the objects' order.
  std::vector<TopologyTree> topologies;
  /// The topology plugin is configured: jobs place through their topology scopes.
  bool topology_plugin = false;
  /// PodGroup annotations the session wants written (KAI writes them at session close), by job id:
  /// name -> value, or nullopt to remove it.
  std::map<uint32_t, std::map<std::string, std::optional<std::string>>> annotation_updates;

  // --- plugin hooks, filled by plugins in on_session_open ---
  std::vector<JobOrderFn> job_order_fns;
  std::vector<TaskOrderFn> task_order_fns;
  std::vector<PodSetOrderFn> pod_set_order_fns;
  QueueOrderFn queue_order_fn;
  std::vector<NodePreOrderFn> node_pre_order_fns;
  std::vector<NodeOrderFn> node_order_fns;
  std::vector<GpuOrderFn> gpu_order_fns;
  std::vector<StaticPredicateFn> static_predicate_fns;
  std::vector<JobCapacityFn> job_capacity_fns;
  std::vector<TaskCapacityFn> task_capacity_fns;
  std::vector<AllocateEventFn> allocate_event_fns;
  std::vector<VictimFilterFn> victim_filter_fns;
  std::vector<ReclaimValidatorFn> reclaim_validator_fns;
  std::vector<CanReclaimFn> can_reclaim_fns;
  EvictionMessageFn reclaim_message_fn;

  /// The nodes by name, for the indexes below.
  NodeNameRanks node_name_ranks;
  /// GPU nodes by (free GPUs, name); the statement keeps it current (update_node_indexes).
  NodeFreeIndex gpu_free_index;
  /// The GPU nodes with a shared device that has room left, same order.
  NodeFreeIndex shared_room_index;
  /// Nodes with CPU and without GPUs by (idle plus releasing CPU, name); the same for nodes with GPUs.
  NodeFreeIndex cpu_free_on_cpu_nodes;
  NodeFreeIndex cpu_free_on_gpu_nodes;
  /// Re-reads node `n` into every index above.
  void update_node_indexes(uint32_t n);
  /// GPU tasks may be placed by walking the GPU indexes instead of scoring every node. Set when the
  /// configured node-order plugins rank such tasks in index order (GPU binpack, see actions/allocate.cpp); tests
  /// turn it off to check that both ways decide the same.
  bool gpu_fast_path = false;
  /// The same for CPU-only tasks and the CPU indexes (CPU binpack, each ordering plugin at most once).
  bool cpu_fast_path = false;
  /// What the configured plugins declare about node ordering (PluginCapabilities; the fast paths need
  /// to know): idle nodes first, the nominated node first, shared-GPU groups first, nodes without GPUs
  /// first for CPU-only tasks.
  bool prefers_idle_nodes = false;
  bool prefers_cpu_nodes_for_cpu_tasks = false;
  bool honours_nominated_node = false;
  bool prefers_shared_groups = false;
  /// Pod (anti-)affinity, host ports and topology spread (inter_pod_constraints.hpp); null when no
  /// pod of the session uses them, so that such sessions pay nothing.
  std::unique_ptr<InterPodConstraints> inter_pod;
  /// The predicates plugin filters with `inter_pod`; the podaffinity plugin scores with it.
  bool inter_pod_predicates = false;
  bool pod_affinity_scoring = false;
  /// What the eviction actions read of every job (their census and victim order), kept while nothing is
  /// committed (actions/eviction_common.cpp).
  std::shared_ptr<EvictionCache> eviction_cache;

  // --- ordering helpers over the hooks ---
  bool job_less(const JobInfo& a, const JobInfo& b) const;
  bool task_less(const TaskInfo& a, const TaskInfo& b) const;
  bool pod_set_less(const JobInfo& job, const PodSetInfo& a, const PodSetInfo& b) const;

  // --- node fitting ---
  /// Nodes that pass the static predicates for `task` (cached per constraint signature).
  const std::vector<uint32_t>& statically_fitting_nodes(const TaskInfo& task);
  /// The same as a mask by node id (1 = passes).
  const std::vector<char>& static_fit_mask(const TaskInfo& task);
  /// Why `node` rejects `task` on static grounds, nullopt if it accepts.
  std::optional<std::string> static_rejection(const TaskInfo& task, const NodeInfo& node) const;

  /// Counts of tasks of a job by status class.
  int32_t active_allocated_count(const JobInfo& job) const;
  int32_t active_used_count(const JobInfo& job) const;
  int32_t pod_set_active_allocated(const PodSetInfo& ps) const;
  bool has_pending_tasks(const JobInfo& job) const;
  /// The tasks an allocation attempt asks for (docs/kai-compatibility.md "Allocate"): for each unsatisfied pod set (at least one, in
  /// pod-set order) the pending tasks that reach minAvailable, or one more pending task when satisfied.
  std::vector<uint32_t> tasks_to_allocate(const JobInfo& job) const;
  /// Sum of the requests of `task_ids` in queue units (GPU devices incl. fractions, millicores, bytes).
  QueueQuantities queue_request_of(std::span<const uint32_t> task_ids) const;

  /// Appends a ghost copy of `task` (see TaskInfo::ghost) and returns its id.
  uint32_t add_ghost(uint32_t task);
  /// The pipelined ghost of an evicted task that consolidation moved elsewhere, or null.
  const TaskInfo* moved_to(uint32_t task) const;

  /// A new GPU-group id: a UUID drawn from the seeded generator (deterministic per seed).
  std::string new_gpu_group_id();

  /// Commits decisions in order (called by Statement::commit).
  void record(events::Decision d);

  /// Moves `task` to a new status, node and GPU placement, keeping every sum that follows tasks
  /// current: its node, queue and job, the plugins' handlers, the inter-pod index and the GPU
  /// indexes. The only way actions change a task (through Statement); the first change of each
  /// task in a cycle is journalled, so that a kept session can return to its built state
  /// (session_keeper.hpp).
  void set_task_state(uint32_t task, PodStatus status, int32_t node, const std::vector<std::string>& gpu_groups,
                      int64_t placed_portion);

  /// What a placed task counts in its queue's allocation (GPU devices incl. its portions, millicores, bytes).
  QueueQuantities allocated_quantities(const TaskInfo& task) const;

  /// Queue usage bookkeeping shared by the statement and the proportion plugin.
  void account_task_in_queue(const TaskInfo& task, int sign);

  /// Interned id of a scalar resource name (MIG profile, extended resource).
  uint32_t scalar_id(const std::string& name);
  const std::string& scalar_name(uint32_t id) const { return scalar_names_[id]; }

  std::unordered_map<std::string, uint32_t> node_index;
  std::unordered_map<std::string, uint32_t> queue_index;

  /// A kept session's repeated outcome (docs/performance-targets.md "Repeated outcomes"): when the
  /// last cycle moved no task and wrote no annotation, the refresh found nothing the actions read
  /// changed (session_refresh.cpp), no group is backing off now or was then (`backing_off`), and no
  /// deadline of the last cycle has come, the actions would decide nothing again, for the same
  /// reasons. Then this puts those reasons back and returns true: run_cycle skips the actions.
  /// Otherwise false, and the actions run.
  bool repeat_last_outcome(bool backing_off);
  /// What the cycle that ran on this session leaves for the next one's repeat_last_outcome: its next
  /// deadline (CycleResult::next_deadline) and whether a group was backing off.
  void note_outcome(std::optional<int64_t> next_deadline, bool backing_off);
  /// The jobs the cycle gave reasons (fit errors, or reasons beyond their input's), ascending, as
  /// note_outcome found them: the report reads them, and the next cycle's undo clears only them.
  const std::vector<uint32_t>& jobs_with_reasons() const { return outcome_.with_reasons; }

  /// Whether a job has uid `uid`, which the cycle asks of the groups with recorded job state.
  /// Indexed at the first question after a build, kept through refreshes (which change no group's
  /// uid) and renumbered by relayouts: a kept cycle does not index 150,000 uids again (session.cpp).
  bool has_job(std::string_view uid) const;

  /// The positions in `objects.pods` (the cut the session was built, laid out or refreshed from) of
  /// the pods in the GPU reservation namespace, which the cycle's clean-up reads (cycle.cpp). Indexed
  /// at the first question after a build or a relayout and kept through refreshes, which move no pod
  /// and change no pod's namespace.
  const std::vector<uint32_t>& reservation_pod_positions(const model::ObjectRefs& objects) const;
  /// The GPU groups the pods of `objects` (the same cut) use on their nodes, which the clean-up reads
  /// too: counted at the first question after a build, then kept through refreshes and relayouts,
  /// which count the pods they replace, drop and add (gpu_group_users.hpp).
  const GpuGroupUsers& gpu_group_users(const model::ObjectRefs& objects) const;

  /// What the PodGroup writes' pass remembers of this session between cycles (pod_group_objects.hpp):
  /// the groups that needed nothing, unmarked as their jobs are derived again, renumbered by relayouts.
  GroupsWritten& groups_written() const;

  /// What the status pass remembers of this session between cycles (status_memo.hpp); empty (not
  /// primed) until the first pass after a build or a relayout.
  StatusMemo& status_memo() const;
  /// The jobs' deadlines kept between cycles (deadline_index.hpp), with the jobs this cycle's
  /// actions moved a task of or set the times of marked.
  DeadlineIndex& deadline_index() const;

 private:
  friend class SessionBuilder;
  friend class SessionKeeper;
  /// The jobs by uid; null until asked, and after a relayout that found a uid held twice.
  mutable std::unique_ptr<JobsByUid> jobs_by_uid_;
  const JobsByUid& jobs_by_uid() const;
  /// Job `j`'s uid: its PodGroup's, else its group's (session_builder_jobs.cpp).
  const std::string& job_uid(uint32_t j) const {
    return groups[j].pod_group != nullptr ? groups[j].pod_group->meta.uid : groups[j].uid;
  }
  /// `job_uid` as the function JobsByUid asks for.
  auto uid_of_job() const {
    return [this](uint32_t j) -> const std::string& { return job_uid(j); };
  }
  std::optional<uint32_t> job_of_uid(std::string_view uid) const {
    return jobs_by_uid().find(uid, uid_of_job());
  }
  /// What the last relayout did to the jobs (session_relayout.cpp): each old job's new id (negative:
  /// gone or derived anew), and the jobs derived anew.
  struct Relaid {
    std::vector<int32_t> new_of_old;
    std::vector<uint32_t> derived;
  };
  Relaid relaid_;
  /// Brings what is kept by job id (the jobs by uid, the deadlines, the jobs whose times were set)
  /// to the relayout's numbering.
  void renumber_jobs();
  /// Brings the status pass's memo (status_memo.hpp) to a relayout from the PodGroups `before` to
  /// `now`: the settled jobs renumbered, the queues' watched sums following the PodGroups that went
  /// and came. Drops it when it was not primed.
  /// Brings the marks of the PodGroup writes' pass (pod_group_objects.hpp) to a relayout's numbering.
  void renumber_groups_written();
  void follow_pod_groups_in_status_memo(const std::vector<const model::PodGroup*>& before,
                                        const std::vector<const model::PodGroup*>& now);
  /// The generation of job times (SessionOptions::job_times_generation) the jobs hold.
  uint64_t times_generation_ = 0;
  /// The jobs whose times the last cycle's actions set, until a refresh takes them back.
  std::vector<uint32_t> times_set_;
  mutable std::unique_ptr<StatusMemo> status_memo_;
  /// Unprimed after a build or a relayout; a refresh marks the jobs it derives or gives times.
  mutable DeadlineIndex deadline_index_;
  mutable std::optional<std::vector<uint32_t>> reservation_pods_;
  mutable std::unique_ptr<GpuGroupUsers> gpu_group_users_;
  mutable std::unique_ptr<GroupsWritten> groups_written_;
  void forget_jobs_by_uid();
  void build_node_indexes();
  void open_plugins();
  /// Takes back what the last cycle's actions and plugins changed: every task to its built state
  /// (ghosts removed), the jobs' reasons, the decisions, the hooks. See session_keeper.hpp.
  void undo_cycle();
  /// Brings the session to `objects` and `options` when only the pods at `changed_pods` and the
  /// PodGroups at `changed_pod_groups` (positions in `objects`) changed since the build, and not in
  /// what the pod grouper reads, and `replaced_nodes` (old, new) are new objects of the same nodes.
  /// False when it cannot (the session must then be dropped). With `regroup_from`, the objects the
  /// session was built or last refreshed from, pods and PodGroups may also have been added, removed
  /// or regrouped: the pods are grouped again and the jobs laid out anew (relayout), and the changed
  /// positions are not read. `previous`, those objects too, lets a changed pod of another scheduler
  /// be followed (without it such a change refuses).
  bool refresh(const model::ObjectRefs& objects, const SessionOptions& options,
               const std::vector<uint32_t>& changed_pods, const std::vector<uint32_t>& changed_pod_groups,
               const std::vector<std::pair<const model::Node*, const model::Node*>>& replaced_nodes,
               const model::ObjectRefs* regroup_from = nullptr, const model::ObjectRefs* previous = nullptr);
  /// Why the last refresh returned false (a fixed text), for the keeper's log line.
  const char* refresh_refusal() const { return refusal_; }
  /// refresh with regroup_from (session_relayout.cpp).
  bool relayout(const model::ObjectRefs& objects, const SessionOptions& options,
                const std::vector<std::pair<const model::Node*, const model::Node*>>& replaced_nodes,
                const model::ObjectRefs& old_objects);
  /// A refresh's start after the undo: the replaced nodes' new objects, the options, the seed.
  void take_objects(const SessionOptions& options,
                    const std::vector<std::pair<const model::Node*, const model::Node*>>& replaced_nodes);
  /// A refresh's end: the jobs' times and every queue's usage from the options; whether they are
  /// the same as before. Only the jobs of the groups the options list as changed, when the session
  /// holds the times of the generation before and `every_job` is false.
  bool take_times_and_usage(bool every_job);

  SessionOptions options_;
  const char* refusal_ = "";
  std::vector<std::string> scalar_names_;
  std::unordered_map<std::string, uint32_t> scalar_ids_;
  struct StaticFit {
    std::vector<uint32_t> nodes;
    std::vector<char> mask;
  };
  const StaticFit& static_fit(const TaskInfo& task);
  /// By constraint signature; held by pointer so that a fit handed out stays valid while later
  /// signatures grow the cache (the victim solver keeps one across placements).
  std::vector<std::unique_ptr<StaticFit>> static_fit_cache_;
  std::mt19937_64 rng_;
  std::vector<std::unique_ptr<Plugin>> plugins_;

  /// What the build left, so that a kept session can return to it (session_keeper.hpp).
  struct Built {
    size_t tasks = 0;     ///< Tasks before any ghost.
    size_t warnings = 0;  ///< Warnings before the plugins'.
    std::vector<uint32_t> invalid;     ///< Each job's reasons from its input, before the cycle's.
    std::vector<JobTimes> base_times;  ///< Each job's times from its PodGroup and pods, before the cycle's.
    std::vector<char> warned;          ///< The job's derivation added a warning.
    std::vector<int32_t> pod_task;       ///< By position in the objects' pods: its task, -1 for none.
    std::vector<int32_t> pod_group_job;  ///< By position in the objects' PodGroups: its job, -1 for none.
    /// The grouper read more of some pod than its own grouping fields (grouping.hpp): not kept.
    bool grouping_reads_beyond_pod = false;
  };
  Built built_;
  /// Each task's state before its first change this cycle, in the order of first changes.
  struct JournalEntry {
    uint32_t task;
    PodStatus status;
    int32_t node;
    std::vector<std::string> gpu_groups;
    int64_t placed_portion;
  };
  std::vector<JournalEntry> journal_;
  std::vector<char> journaled_;  ///< By task id.
  bool undoing_ = false;
  /// Every journalled task is back where it was before its first change (only rollbacks moved it).
  bool moved_no_task() const;
  /// The jobs at `dirty` and their tasks, derived again, equal `jobs_before` and `tasks_before` (in
  /// the same order) in everything the actions read.
  bool same_for_actions(const std::vector<JobInfo>& jobs_before, const std::vector<TaskInfo>& tasks_before,
                        const std::vector<uint32_t>& dirty) const;
  /// The last cycle's outcome, for repeat_last_outcome.
  struct Outcome {
    bool backing_off = false;
    std::optional<int64_t> next_deadline;
    /// Set by a refresh that found the actions' inputs unchanged since a quiet cycle.
    bool same_inputs = false;
    /// That cycle's reasons by job, for the jobs that had any.
    std::vector<std::pair<uint32_t, std::vector<FitReason>>> reasons;
    /// The jobs with reasons when the outcome was noted (jobs_with_reasons); `scanned` while that is
    /// still so (until the undo).
    std::vector<uint32_t> with_reasons;
    bool scanned = false;
    /// This cycle repeats the last outcome (repeat_last_outcome has set `with_reasons`).
    bool repeated = false;
  };
  Outcome outcome_;
  /// Kept after the build for a kept session's refreshes: its interned signatures, priority classes
  /// and bind requests (session_builder.hpp).
  std::unique_ptr<SessionBuilder> builder_;
};

}  // namespace kai::core
