#pragma once
// The session builder: a Session's node, queue, job and task tables from the cluster's objects. Internal
// to the core; the Session constructor (session.cpp) runs it once. session_builder.cpp builds the cluster
// side (nodes, queues, pods of other schedulers, cluster totals), session_builder_jobs.cpp the workloads
// (priority classes, bind requests, jobs and their tasks).

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "actors/scheduler/core/grouping.hpp"
#include "actors/scheduler/core/inter_pod_constraints.hpp"
#include "actors/scheduler/core/session.hpp"
#include "k8s/model/objects.hpp"

namespace kai::core {

struct PodPairing;  // regrouping.hpp

/// Builds a Session from model objects (kept separate from Session's methods for readability).
class SessionBuilder {
 public:
  SessionBuilder(Session& ssn, const model::ObjectRefs& objects) : ssn_(ssn), objects_(&objects) {}

  /// Fills the session's tables, then its queue usage.
  void build();

  /// The objects later derivations read (null between cycles): a kept session's next cut, whose
  /// nodes, queues, priority classes, bind requests, owners and topologies are the build's.
  void retarget(const model::ObjectRefs* objects) { objects_ = objects; }
  /// The label indexes the inter-pod checks will read (InterPodConstraints::needed's keys), filled
  /// as each task is added while set (null: none).
  void index_labels(TaskLabelIndexes* indexes) { label_indexes_ = indexes; }
  /// Derives job `job` again, in place, from its group and the current objects: its pods' tasks
  /// keep their ids, and their nodes, queue and job counters follow (session_keeper.hpp).
  void rederive_job(uint32_t job);
  /// Groups the current objects' pods again and lays the jobs out as a build would, where the last
  /// build's objects were `old_objects`: a group whose PodGroup and pods are the very same objects
  /// keeps its job and tasks (moved), the others are derived (session_relayout.cpp). Null when laid
  /// out; else why the result could differ from a build's (the session must then be dropped).
  const char* relayout(const model::ObjectRefs& old_objects);
  /// Whether `pod`, of another scheduler than `scheduler_name`, holds its node's resources.
  static bool holds_node_as_foreign(const model::Pod& pod, const std::string& scheduler_name);
  /// A kept session follows pods of other schedulers (GPU reservation pods, say): what `before`
  /// held on its node (null: it held nothing) is taken back and what `after` holds is added (null:
  /// nothing); the nodes touched go to `nodes`. False, changing nothing, when the two hold the same.
  bool replace_foreign_pod(const model::Pod* before, const model::Pod* after, std::vector<uint32_t>& nodes);
  /// After replace_foreign_pod: the GPU indexes of `nodes` and the cluster's total.
  void foreign_pods_replaced(std::vector<uint32_t>& nodes);

  /// Puts `job`'s times: the cycle's job state for its uid (SessionOptions::job_times) where it
  /// holds one, else `base` (its PodGroup's and pods'). The build and a refresh both set them so.
  static void set_job_times(JobInfo& job, const JobTimes& base, const SessionOptions& options);
  /// Queue `name`'s historical usage (SessionOptions::queue_usage), zero without one.
  static QueueQuantities queue_usage_of(const std::string& name, const SessionOptions& options);

 private:
  static bool parse_int64(const std::string& s, int64_t& out);

  /// relayout's first step: the pods of other schedulers that came, went or changed since
  /// `old_objects` (among those `pods`, pair_pods of the two, did not pair), followed on their nodes
  /// (replace_foreign_pod). Null when followed, else why not.
  const char* follow_foreign_pods(const model::ObjectRefs& old_objects, const PodPairing& pods);
  /// The reservation pods' positions (Session::reservation_pod_positions), when asked since the last
  /// build, moved to the new cut's: a pass over every pod's namespace saved at each relayout.
  void renumber_reservation_pods(const PodPairing& pods);
  /// The GPU groups the pods use (Session::gpu_group_users), when asked since the last build, brought
  /// from `old_objects`' pods to the current ones.
  void follow_gpu_group_users(const model::ObjectRefs& old_objects, const PodPairing& pods);
  /// relayout's second half, from the new grouping. With `kept_from` (regroup_pods'), the groups
  /// taken from the last grouping are those it names; without, they are found by matching.
  const char* lay_out(std::vector<PodGroupAssignment> fresh, const model::ObjectRefs& old_objects,
                      const std::vector<int32_t>* kept_from = nullptr);
  /// Takes job `job`'s tasks, as they stand, off their nodes and queues; their nodes go to `nodes`.
  void take_out_tasks(uint32_t job, std::vector<uint32_t>& nodes);
  /// Counts job `job`'s tasks, just derived, in their queues and the job's counters (derive_job put
  /// them on their nodes); their nodes go to `nodes`.
  void count_derived_tasks(uint32_t job, std::vector<uint32_t>& nodes);
  /// The GPU node indexes of `nodes` (any order, repeats allowed) brought up to date.
  void update_node_indexes(std::vector<uint32_t>& nodes);
  /// Session::Built::pod_group_job: a PodGroup object's job by the object's position, where job
  /// first_job + i is group i.
  void index_pod_group_jobs(const std::vector<PodGroupAssignment>& groups, size_t first_job);

  // --- the cluster side (session_builder.cpp) ---
  Resources to_resources(const model::ResourceList& list, bool& has_mig);

  static Resources max_each(const Resources& a, const Resources& b);

  /// max(Σ containers, each init container) + overhead; pods = 1 (docs/kai-compatibility.md "Pod statuses").
  Resources pod_request(const model::Pod& pod, bool& has_mig);
  /// The GPUs a request's MIG instances count in queue quota: N x count of each nvidia.com/mig-<N>g.<M>gb.
  double mig_gpus_of(const Resources& req) const;

  void build_nodes();

  static QueueQuantities quantities(const model::QueueResource& gpu, const model::QueueResource& cpu,
                                    const model::QueueResource& mem, double model::QueueResource::*field);

  void build_queues();

  /// Pods of other schedulers (and reservation pods) still use their node's capacity.
  void account_foreign_pods();
  /// What a pod of another scheduler holds on its node (account_foreign_pods), if anything.
  struct ForeignHold {
    uint32_t node = 0;
    TaskInfo task;                        ///< Its request and status (running or releasing).
    const std::string* group = nullptr;   ///< A reservation pod's GPU group: it holds that device.
    bool counts_against_cluster = false;  ///< Taken off the cluster's total (compute_cluster_total).
  };
  std::optional<ForeignHold> foreign_hold(const model::Pod& pod);
  /// Adds (`sign` +1) or takes back (-1) a hold on its node.
  void apply_foreign_hold(const ForeignHold& hold, int sign);

  void compute_cluster_total();

  // --- the workloads (session_builder_jobs.cpp) ---
  void build_priority_classes();

  void build_bind_requests();

  int32_t priority_of(const std::string& class_name, std::string& warning);

  PodStatus derive_status(const model::Pod& pod, const model::BindRequest*& bind_request);

  int32_t constraint_signature(const model::Pod& pod, const TaskInfo& t);

  /// Makes task `task_id` for `pod` of job `job_id` and puts it on its node; returns an input error
  /// for the pod, if any.
  std::optional<std::string> add_task(uint32_t pod_index, uint32_t job_id, uint16_t pod_set, uint32_t task_id);

  static std::vector<std::string> running_gpu_groups(const model::Pod& pod);

  std::optional<int64_t> timestamp_annotation(const model::PodGroup& pg, const char* key,
                                              const std::string& job);

  /// A group without a last start in its annotations takes it from when its running pods were
  /// scheduled, as a replica that did not run them (a standby that took over) can only know it from
  /// the pods.
  void times_from_pods(JobTimes& times, const PodGroupAssignment& g);
  /// The configuration has the topology plugin, which makes a job with topology errors invalid.
  bool topology_plugin_configured() const;

  void build_jobs();
  /// Job `job_id` from group `g`, its tasks at ids first_task..: the body of build_jobs, also used
  /// by rederive_job. Records what Session::Built keeps of the job.
  void derive_job(const PodGroupAssignment& g, uint32_t job_id, uint32_t first_task);
  /// The job's topology scopes from its constraints (topology_scopes.hpp); a constraint naming a
  /// missing topology or level is kept for the topology plugin (JobInfo::topology_errors).
  void resolve_topology(JobInfo& job, const model::TopologyConstraint& root,
                        const std::vector<model::SubGroup>* sub_groups);

  /// Why a job's queue is not in the session: missing, or ignored with the reason; for a pod without the
  /// queue label, which label to set (docs: README.md "Queues").
  std::string missing_queue_message(const std::string& queue, bool defaulted) const;

  Session& ssn_;
  const model::ObjectRefs* objects_;
  TaskLabelIndexes* label_indexes_ = nullptr;
  std::vector<const model::Queue*> queue_objects_;
  /// Queues left out because their parent chain is broken, with what broke it.
  std::map<std::string, std::string> broken_queues_;
  std::map<std::string, int32_t> priority_classes_;
  std::optional<int32_t> global_default_priority_;
  std::map<std::pair<std::string, std::string>, const model::BindRequest*> bind_requests_;
  std::map<std::string, int32_t> signatures_;
  /// The signature of a pod that constrains nothing but its GPU kind, by kind x 2 + legacy MIG; -1
  /// until the first such pod.
  std::array<int32_t, 16> plain_signatures_ = filled_with_minus_one();
  static constexpr std::array<int32_t, 16> filled_with_minus_one() {
    std::array<int32_t, 16> a{};
    a.fill(-1);
    return a;
  }
  /// What pods of other schedulers hold, summed, off the cluster's total (compute_cluster_total).
  Resources foreign_;
};

}  // namespace kai::core
