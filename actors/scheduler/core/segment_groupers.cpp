// Segmented subgroups of KAI's pod grouper (docs/pod-grouping.md "Segments"): a PyTorchJob's workers
// and a LeaderWorkerSet group split into fixed-size segments, each a subgroup of its own that a
// topology constraint can keep together.
#include <optional>

#include "actors/scheduler/core/workload_groupers.hpp"
#include "k8s/model/well_known_names.hpp"

namespace kai::core {
namespace {

/// KAI refuses a segmentation into more subgroups than this (a typo in a segment size, not a plan).
constexpr int32_t kMaxSegments = 10000;

std::string pod_name(const model::Pod& pod) { return pod.meta.namespace_ + "/" + pod.meta.name; }

std::string owner_name(const model::WorkloadOwner& o) { return o.kind + " " + o.meta.namespace_ + "/" + o.meta.name; }

/// The value of `key` on the pod when set and not empty, else on the worker template.
std::string pod_then_template(const model::Pod& pod, const model::StringMap* worker_template, const char* key) {
  if (const std::string* v = find_in(pod.meta.annotations, key); v != nullptr && !v->empty()) return *v;
  if (worker_template != nullptr) {
    if (const std::string* v = find_in(*worker_template, key)) return *v;
  }
  return {};
}

/// The segments' topology constraint: the topology named on the pod, the worker template or the top
/// owner, with the segment levels from the pod or the worker template; none without a name or a level.
model::TopologyConstraint segment_topology(const model::Pod& pod, const model::StringMap* worker_template,
                                           const model::WorkloadOwner& top) {
  model::TopologyConstraint t;
  t.topology = pod_then_template(pod, worker_template, model::kTopologyAnnotation);
  if (t.topology.empty()) {
    if (const std::string* v = find_in(top.meta.annotations, model::kTopologyAnnotation)) t.topology = *v;
  }
  if (t.topology.empty()) return {};
  t.required_level = pod_then_template(pod, worker_template, model::kSegmentTopologyRequiredAnnotation);
  t.preferred_level = pod_then_template(pod, worker_template, model::kSegmentTopologyPreferredAnnotation);
  if (t.required_level.empty() && t.preferred_level.empty()) return {};
  return t;
}

model::SubGroup parent_of(std::string name, int32_t min_sub_group) {
  model::SubGroup s;
  s.name = std::move(name);
  s.min_sub_group = min_sub_group;
  return s;
}

/// The LeaderWorkerSet segment size: spec subGroupSize, else the annotation on the LWS, else on its
/// worker template; nullopt when none is set, an error text when one is not a number.
std::optional<int32_t> lws_segment_size(const model::WorkloadOwner& lws, const model::StringMap* worker_template,
                                        std::string& error) {
  if (lws.sub_group_size) return *lws.sub_group_size;
  const std::string* text = find_in(lws.meta.annotations, model::kSegmentSizeAnnotation);
  std::string where = "annotation " + std::string(model::kSegmentSizeAnnotation);
  if (text == nullptr && worker_template != nullptr) {
    text = find_in(*worker_template, model::kSegmentSizeAnnotation);
    where = "worker template annotation " + std::string(model::kSegmentSizeAnnotation);
  }
  if (text == nullptr) return std::nullopt;
  auto n = parse_int(text);
  if (!n) error = owner_name(lws) + ": " + where + " \"" + *text + "\" is not an integer";
  return n;
}

}  // namespace

void add_pytorch_worker_sub_groups(GroupSpec& g, const model::WorkloadOwner& job, const model::Pod& pod,
                                   int32_t worker_replicas, int32_t worker_min) {
  const model::StringMap* worker_template = nullptr;
  for (const auto& r : job.replicas) {
    if (r.name == "Worker") worker_template = &r.template_annotations;
  }
  const bool is_worker = [&] {
    const std::string* type = find_in(pod.meta.labels, "training.kubeflow.org/replica-type");
    return type != nullptr && *type == "worker";
  }();
  // The pod's annotation first, then the worker template's (KAI reads both).
  std::optional<int32_t> size;
  if (const std::string* v = find_in(pod.meta.annotations, model::kSegmentSizeAnnotation); v != nullptr && !v->empty()) {
    size = parse_int(v);
    if (!size || *size <= 0) {
      g.rare.mut().error = "pod " + pod_name(pod) + ": annotation " + model::kSegmentSizeAnnotation + " \"" +
                           *v + "\" is not a positive integer";
      return;
    }
  } else if (worker_template != nullptr) {
    if (const std::string* v = find_in(*worker_template, model::kSegmentSizeAnnotation); v != nullptr && !v->empty()) {
      size = parse_int(v);
      if (!size || *size <= 0) {
        g.rare.mut().error = owner_name(job) + ": worker template annotation " +
                             model::kSegmentSizeAnnotation + " \"" + *v + "\" is not a positive integer";
        return;
      }
    }
  }
  const int32_t segments = size ? (worker_replicas + *size - 1) / *size : 0;
  if (segments == 0) {  // no segmentation: the workers are one leaf
    g.rare.mut().sub_groups.push_back(leaf("worker", worker_min));
    if (is_worker) g.rare.mut().sub_group = "worker";
    return;
  }
  if (segments > kMaxSegments) {
    g.rare.mut().error = owner_name(job) + ": segment size " + std::to_string(*size) + " makes " +
                         std::to_string(segments) + " worker segments, more than " +
                         std::to_string(kMaxSegments);
    return;
  }
  int32_t pod_segment = -1;
  if (is_worker) {
    const std::string* index = find_in(pod.meta.labels, "training.kubeflow.org/replica-index");
    const auto n = parse_int(index);
    if (!n || *n < 0) {
      g.rare.mut().error =
          "pod " + pod_name(pod) +
          " of a segmented PyTorchJob has no valid training.kubeflow.org/replica-index label";
      return;
    }
    pod_segment = *n / *size;
  }
  const model::TopologyConstraint topology = segment_topology(pod, worker_template, job);
  // Parents take minSubGroup, never minMember. Segments whose first worker is within the workers'
  // minimum are required; the others are elastic (minMember 0) and never hold the gang back.
  g.rare.mut().sub_groups.push_back(parent_of("worker", segments));
  const int32_t required = (worker_min + *size - 1) / *size;
  const int32_t partial = worker_replicas % *size;
  for (int32_t i = 0; i < segments; ++i) {
    model::SubGroup s = leaf("worker-" + std::to_string(i), *size, "worker");
    if (i >= required) {
      s.min_member = 0;
    } else if (partial != 0 && i == segments - 1) {
      s.min_member = partial;
    }
    s.topology_constraint = topology;
    g.rare.mut().sub_groups.push_back(std::move(s));
  }
  if (pod_segment >= 0 && pod_segment < segments)
    g.rare.mut().sub_group = "worker-" + std::to_string(pod_segment);
}

void add_leader_worker_sub_groups(GroupSpec& g, const model::WorkloadOwner& lws, const model::Pod& pod,
                                  std::optional<int32_t> worker_index) {
  const int32_t size = g.min_member;
  const model::StringMap* worker_template = lws.replicas.empty() ? nullptr : &lws.replicas.front().template_annotations;
  std::string error;
  const std::optional<int32_t> segment = lws_segment_size(lws, worker_template, error);
  if (!error.empty()) {
    g.rare.mut().error = error;
    return;
  }
  // Without segments, and while a LeaderReady group needs only its leader: a leader and the workers.
  if (!segment || size == 1) {
    g.rare.mut().sub_groups.push_back(leaf("leader", 1));
    if (size > 1) g.rare.mut().sub_groups.push_back(leaf("workers", size - 1));
    g.rare.mut().sub_group = worker_index == 0 ? "leader" : size > 1 ? "workers" : "";
    return;
  }
  if (*segment <= 1 || *segment > size) {
    g.rare.mut().error = owner_name(lws) + ": segment size " + std::to_string(*segment) +
                         " must be above 1 and at most the group size " + std::to_string(size);
    return;
  }
  const std::string& policy = lws.sub_group_policy_type;
  const bool leader_excluded = policy == "LeaderExcluded";
  if (!leader_excluded && !policy.empty() && policy != "LeaderWorker") {
    g.rare.mut().error =
        owner_name(lws) + ": subGroupPolicyType " + policy + " is not LeaderWorker or LeaderExcluded";
    return;
  }
  // The workers 1..size-1 fill segments of `segment`; when they divide evenly the leader (index 0)
  // rides in the first segment as an extra member, otherwise it takes the first segment's first place.
  const bool divisible = (size - 1) % *segment == 0;
  auto segment_of = [&](int32_t w) { return w == 0 ? 0 : divisible ? (w - 1) / *segment : w / *segment; };
  if (leader_excluded && !divisible) {
    g.rare.mut().error = owner_name(lws) + ": subGroupPolicyType LeaderExcluded needs the " +
                         std::to_string(size - 1) + " workers to divide into segments of " +
                         std::to_string(*segment);
    return;
  }
  const int32_t segments = segment_of(size - 1) + 1;
  if (segments > kMaxSegments) {
    g.rare.mut().error = owner_name(lws) + ": segment size " + std::to_string(*segment) + " makes " +
                         std::to_string(segments) + " segments, more than " + std::to_string(kMaxSegments);
    return;
  }
  if (!worker_index) {
    g.rare.mut().error =
        "pod " + pod_name(pod) +
        " of a segmented LeaderWorkerSet has no leaderworkerset.sigs.k8s.io/worker-index label";
    return;
  }
  // Each segment's members counted, so that the last (partial) segment and the one holding the
  // leader need exactly the pods they have.
  std::vector<int32_t> members(static_cast<size_t>(segments), 0);
  for (int32_t w = leader_excluded ? 1 : 0; w < size; ++w) ++members[static_cast<size_t>(segment_of(w))];
  const model::TopologyConstraint topology = segment_topology(pod, worker_template, lws);
  const int32_t pod_segment = segment_of(*worker_index);
  const bool is_leader = *worker_index == 0;
  if (leader_excluded) g.rare.mut().sub_groups.push_back(leaf("leader", 1));
  for (int32_t i = 0; i < segments; ++i) {
    model::SubGroup s = leaf("segment-" + std::to_string(i), members[static_cast<size_t>(i)]);
    s.topology_constraint = topology;
    if (i == 0 && !leader_excluded) {  // the first segment is the parent of the leader and its workers
      s.min_member = 0;
      s.min_sub_group = 2;
    }
    g.rare.mut().sub_groups.push_back(std::move(s));
  }
  if (leader_excluded) {
    g.rare.mut().sub_group = is_leader                ? "leader"
                             : pod_segment < segments ? "segment-" + std::to_string(pod_segment)
                                                      : "";
    return;
  }
  g.rare.mut().sub_groups.push_back(leaf("leader", 1, "segment-0"));
  g.rare.mut().sub_groups.push_back(leaf("workers", members[0] - 1, "segment-0"));
  g.rare.mut().sub_group = is_leader          ? "leader"
                           : pod_segment == 0 ? "workers"
                                              : "segment-" + std::to_string(pod_segment);
  if (pod_segment >= segments)
    g.rare.mut().sub_group.clear();  // an index beyond the group's size: in no segment
}

}  // namespace kai::core
