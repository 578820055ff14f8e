#include "events/state_codec.hpp"

#include <algorithm>
#include <concepts>
#include <limits>
#include <optional>
#include <type_traits>

#include "events/binary.hpp"

namespace kai::events {
namespace {

constexpr std::string_view kMagic = "KAS";

template <class S, class T>
concept Is = std::same_as<std::remove_const_t<S>, T>;

template <class T>
struct IsOptional : std::false_type {};
template <class T>
struct IsOptional<std::optional<T>> : std::true_type {};
template <class T>
struct IsVector : std::false_type {};
template <class T>
struct IsVector<std::vector<T>> : std::true_type {};
template <class T>
struct IsShared : std::false_type {};
template <class T>
struct IsShared<std::shared_ptr<const T>> : std::true_type {};
template <class T>
struct IsMap : std::false_type {};
template <class K, class V>
struct IsMap<std::map<K, V>> : std::true_type {};
template <class K, class V>
struct IsMap<boost::container::flat_map<K, V>> : std::true_type {};

// Each struct's fields, listed once for both directions: `f` is a Writer or a Loader.
template <class S, class F>
requires Is<S, model::FieldError>
void fields(S& x, F& f) {
  f(x.field, x.message);
}
template <class S, class F>
requires Is<S, model::OwnerReference>
void fields(S& x, F& f) {
  f(x.api_version, x.kind, x.name, x.uid, x.controller);
}
template <class S, class F>
requires Is<S, model::ObjectMeta>
void fields(S& x, F& f) {
  f(x.name, x.namespace_, x.uid, x.resource_version, x.generation, x.creation_timestamp, x.deletion_timestamp,
    x.labels, x.annotations, x.owner_references);
}
template <class S, class F>
requires Is<S, model::Taint>
void fields(S& x, F& f) {
  f(x.key, x.value, x.effect);
}
template <class S, class F>
requires Is<S, model::NodeCondition>
void fields(S& x, F& f) {
  f(x.type, x.status);
}
template <class S, class F>
requires Is<S, model::Node>
void fields(S& x, F& f) {
  f(x.meta, x.unschedulable, x.taints, x.capacity, x.allocatable, x.conditions, x.errors);
}
template <class S, class F>
requires Is<S, model::Toleration>
void fields(S& x, F& f) {
  f(x.key, x.op, x.value, x.effect);
}
template <class S, class F>
requires Is<S, model::NodeSelectorRequirement>
void fields(S& x, F& f) {
  f(x.key, x.op, x.values);
}
template <class S, class F>
requires Is<S, model::NodeSelectorTerm>
void fields(S& x, F& f) {
  f(x.match_expressions, x.match_fields);
}
template <class S, class F>
requires Is<S, model::Container>
void fields(S& x, F& f) {
  f(x.name, x.requests, x.limits, x.restart_policy_always);
  if (f.version >= 8) {
    f(x.host_ports);
  } else {
    bool had_host_port = false;  // v7 upgrade: the port numbers were not kept (the pod was refused)
    f(had_host_port);
  }
}
template <class S, class F>
requires Is<S, model::HostPort>
void fields(S& x, F& f) {
  f(x.port, x.protocol, x.host_ip);
}
template <class S, class F>
requires Is<S, model::LabelSelectorRequirement>
void fields(S& x, F& f) {
  f(x.key, x.op, x.values);
}
template <class S, class F>
requires Is<S, model::LabelSelector>
void fields(S& x, F& f) {
  f(x.match_labels, x.match_expressions);
}
template <class S, class F>
requires Is<S, model::PodAffinityTerm>
void fields(S& x, F& f) {
  f(x.label_selector, x.namespaces, x.namespace_selector, x.topology_key, x.match_label_keys, x.mismatch_label_keys);
}
template <class S, class F>
requires Is<S, model::WeightedPodAffinityTerm>
void fields(S& x, F& f) {
  f(x.weight, x.term);
}
template <class S, class F>
requires Is<S, model::PodAffinityRules>
void fields(S& x, F& f) {
  f(x.required, x.preferred);
}
template <class S, class F>
requires Is<S, model::TopologySpreadConstraint>
void fields(S& x, F& f) {
  f(x.max_skew, x.topology_key, x.when_unsatisfiable, x.label_selector, x.min_domains, x.node_affinity_policy,
    x.node_taints_policy, x.match_label_keys);
}
template <class S, class F>
requires Is<S, model::PodCondition>
void fields(S& x, F& f) {
  f(x.type, x.status, x.reason, x.message);
  if (f.version >= 2) f(x.last_transition_time);  // v1 upgrade: not recorded
}
template <class S, class F>
requires Is<S, model::Pod>
void fields(S& x, F& f) {
  f(x.meta, x.scheduler_name, x.node_name, x.priority_class_name, x.priority, x.node_selector,
    x.required_node_affinity);
  if (f.version >= 8) f(x.pod_affinity, x.pod_anti_affinity, x.topology_spread_constraints);  // v7: refused, not kept
  f(x.tolerations, x.containers, x.init_containers, x.overhead, x.scheduling_gates,
    x.unsupported_constraints, x.phase, x.nominated_node_name, x.conditions, x.errors);
}
template <class S, class F>
requires Is<S, model::QueueResource>
void fields(S& x, F& f) {
  f(x.quota, x.over_quota_weight, x.limit);
}
template <class S, class F>
requires Is<S, model::ResourcesStatus>
void fields(S& x, F& f) {
  f(x.allocated, x.allocated_non_preemptible, x.requested);
}
template <class S, class F>
requires Is<S, model::SchedulingReason>
void fields(S& x, F& f) {
  f(x.reason, x.message);
}
template <class S, class F>
requires Is<S, model::SchedulingCondition>
void fields(S& x, F& f) {
  f(x.type, x.node_pool, x.reason, x.message, x.status, x.transition_id, x.last_transition_time, x.reasons);
}
template <class S, class F>
requires Is<S, model::Queue>
void fields(S& x, F& f) {
  f(x.meta, x.display_name, x.parent_queue, x.has_resources, x.gpu, x.cpu, x.memory, x.priority,
    x.preempt_min_runtime_seconds, x.reclaim_min_runtime_seconds, x.errors);
  if (f.version >= 6) f(x.resources_status, x.child_queues);  // v5 upgrade: no status
}
template <class S, class F>
requires Is<S, model::TopologyConstraint>
void fields(S& x, F& f) {
  f(x.topology, x.required_level, x.preferred_level);
}
template <class S, class F>
requires Is<S, model::SubGroup>
void fields(S& x, F& f) {
  f(x.name, x.min_member, x.parent, x.topology_constraint);
  if (f.version >= 4) f(x.min_sub_group);  // v3 upgrade: none (every subgroup counted by minMember)
}
template <class S, class F>
requires Is<S, model::PodGroup>
void fields(S& x, F& f) {
  f(x.meta, x.min_member, x.queue, x.priority_class_name, x.preemptibility, x.mark_unschedulable,
    x.scheduling_backoff, x.topology_constraint, x.sub_groups, x.errors);
  if (f.version >= 4) f(x.min_sub_group, x.preemption_delay_seconds, x.staleness_grace_period_seconds);
  if (f.version >= 6) f(x.resources_status, x.scheduling_conditions);  // v5 upgrade: no status
}
template <class S, class F>
requires Is<S, model::WorkloadReplicas>
void fields(S& x, F& f) {
  f(x.name, x.replicas, x.min_replicas, x.parallelism, x.num_of_hosts, x.suspended, x.template_annotations);
}
template <class S, class F>
requires Is<S, model::WorkloadOwner>
void fields(S& x, F& f) {
  f(x.meta, x.group, x.version, x.kind, x.replicas, x.head, x.min_available, x.elastic_min_replicas,
    x.startup_policy, x.launcher_creation_policy, x.size, x.sub_group_size, x.sub_group_policy_type,
    x.ray_cluster_name, x.errors);
}
template <class S, class F>
requires Is<S, model::PriorityClass>
void fields(S& x, F& f) {
  f(x.meta, x.value, x.global_default, x.preemption_policy, x.errors);
}
template <class S, class F>
requires Is<S, model::TopologyLevel>
void fields(S& x, F& f) {
  f(x.node_label, x.alias);
}
template <class S, class F>
requires Is<S, model::Topology>
void fields(S& x, F& f) {
  f(x.meta, x.levels, x.errors);
}
template <class S, class F>
requires Is<S, model::Namespace>
void fields(S& x, F& f) {
  f(x.meta, x.errors);
}
template <class S, class F>
requires Is<S, model::BindRequest>
void fields(S& x, F& f) {
  f(x.meta, x.pod_name, x.selected_node, x.received_resource_type, x.received_gpu_count,
    x.received_gpu_portion, x.selected_gpu_groups, x.backoff_limit, x.phase, x.reason, x.failed_attempts,
    x.errors);
}
template <class S, class F>
requires Is<S, Decision>
void fields(S& x, F& f) {
  f(x.seq, x.action, x.kind, x.pod, x.pod_uid, x.node, x.gpu_groups, x.gpu_fraction, x.reason, x.by, x.queue);
}
template <class S, class F>
requires Is<S, AssumedDecision>
void fields(S& x, F& f) {
  f(x.decision, x.reported);
  if (f.version >= 9) f(x.unconfirmed, x.held_since_ms);  // v8 upgrade: none (a restart abandoned binds)
}
template <class S, class F>
requires Is<S, JobValue>
void fields(S& x, F& f) {
  f(x.value, x.expected);
}
template <class S, class F>
requires Is<S, JobState>
void fields(S& x, F& f) {
  f(x.group, x.fields[0], x.fields[1]);
  if (f.version >= 11) f(x.fields[2]);  // v10 upgrade: no last eviction
}
template <class S, class F>
requires Is<S, BindFailures>
void fields(S& x, F& f) {
  f(x.pod_uid, x.failures, x.failed_at_ms, x.reason);
}
template <class S, class F>
requires Is<S, GroupWriteMark>
void fields(S& x, F& f) {
  f(x.hash, x.at_ms);
}
template <class S, class F>
requires Is<S, AllocationStep>
void fields(S& x, F& f) {
  f(x.at_ms, x.gpu, x.cpu, x.memory);
}
template <class S, class F>
requires Is<S, AllocationHistory>
void fields(S& x, F& f) {
  f(x.queues, x.capacity);
}
template <class S, class F>
requires Is<S, ScheduleRecords>
void fields(S& x, F& f) {
  f(x.assumed, x.job_states, x.last_now_ms, x.scheduler_name);
  if (f.version >= 3) f(x.bind_failures);  // v2 upgrade: none (each backoff starts afresh)
  if (f.version >= 5) f(x.group_writes);   // v4 upgrade: none (a write in flight is asked again)
  if (f.version >= 6) f(x.status_writes);  // v5 upgrade: none
  if (f.version >= 10) f(x.usage_history);  // v9 upgrade: none (the usage history starts afresh)
}
/// The sections of a snapshot in order, named so that a decode error says where it is; the one list
/// both directions follow. Version 1 held open_decisions (seq -> pod) where `records` is now.
template <class S, class F>
requires Is<S, ClusterState>
void sections(S& x, F&& section) {
  section("seq", x.seq);
  section("resource_versions", x.resource_versions);
  section("records", x.records);
  model::for_each_kind([&](auto kind) { section(decltype(kind)::kSection, decltype(kind)::in(x)); });
}

struct Writer {
  std::string& out;
  uint8_t version = kStateSnapshotVersion;

  template <class... V>
  void operator()(const V&... v) {
    (put(v), ...);
  }

  template <class V>
  void put(const V& v) {
    if constexpr (std::is_same_v<V, std::string>) {
      binary::put_str(out, v);
    } else if constexpr (std::is_same_v<V, bool>) {
      binary::put_u8(out, v ? 1 : 0);
    } else if constexpr (std::is_integral_v<V> && std::is_signed_v<V>) {
      binary::put_i64(out, v);
    } else if constexpr (std::is_integral_v<V>) {
      binary::put_varint(out, v);
    } else if constexpr (std::is_same_v<V, double>) {
      binary::put_f64(out, v);
    } else if constexpr (std::is_enum_v<V>) {
      binary::put_u8(out, static_cast<uint8_t>(v));
    } else if constexpr (IsShared<V>::value) {
      put(*v);  // written as the object itself: a snapshot does not know who shared it
    } else if constexpr (IsOptional<V>::value) {
      binary::put_u8(out, v.has_value() ? 1 : 0);
      if (v) put(*v);
    } else if constexpr (IsVector<V>::value) {
      binary::put_varint(out, v.size());
      for (const auto& e : v) put(e);
    } else if constexpr (IsMap<V>::value) {
      binary::put_varint(out, v.size());
      for (const auto& [k, e] : v) {
        put(k);
        put(e);
      }
    } else {
      fields(v, *this);
    }
  }
};

struct Loader {
  binary::Reader& in;
  uint8_t version = kStateSnapshotVersion;

  template <class... V>
  void operator()(V&... v) {
    (get(v), ...);
  }

  template <class V>
  void get(V& v) {
    if constexpr (std::is_same_v<V, std::string>) {
      v = in.str();
    } else if constexpr (std::is_same_v<V, bool>) {
      const uint8_t b = in.u8();
      if (b > 1) in.fail();
      v = b == 1;
    } else if constexpr (std::is_integral_v<V> && std::is_signed_v<V>) {
      const int64_t x = in.i64();
      if (x < std::numeric_limits<V>::min() || x > std::numeric_limits<V>::max()) in.fail();
      v = static_cast<V>(x);
    } else if constexpr (std::is_integral_v<V>) {
      const uint64_t x = in.varint();
      if (x > std::numeric_limits<V>::max()) in.fail();
      v = static_cast<V>(x);
    } else if constexpr (std::is_same_v<V, double>) {
      v = in.f64();
    } else if constexpr (std::is_enum_v<V>) {
      // Every enum of the state has at most 8 values; a larger byte is damage.
      const uint8_t b = in.u8();
      if (b > 7) in.fail();
      v = static_cast<V>(b);
    } else if constexpr (IsOptional<V>::value) {
      const uint8_t present = in.u8();
      if (present > 1) in.fail();
      v.reset();
      if (present == 1 && in.ok()) get(v.emplace());
    } else if constexpr (IsVector<V>::value) {
      const uint64_t n = in.count();
      v.clear();
      // n is bounded by the bytes left, not by memory: a damaged count must not reserve gigabytes
      // (bad_alloc) before the elements fail to decode; the vector grows as they do decode.
      v.reserve(std::min<uint64_t>(n, 4096));
      for (uint64_t i = 0; i < n && in.ok(); ++i) get(v.emplace_back());
    } else if constexpr (IsMap<V>::value) {
      const uint64_t n = in.count();
      v.clear();
      for (uint64_t i = 0; i < n && in.ok(); ++i) {
        typename V::key_type k{};
        get(k);
        typename V::mapped_type e{};
        get(e);
        // Keys were written in order; anything else means a damaged snapshot.
        if (!v.empty() && !(v.rbegin()->first < k)) in.fail();
        v.emplace_hint(v.end(), std::move(k), std::move(e));
      }
    } else {
      fields(v, *this);
    }
  }
};

}  // namespace

void encode_state(const ClusterState& state, std::string& out) {
  out.append(kMagic);
  binary::put_u8(out, kStateSnapshotVersion);
  Writer w{out};
  sections(state, [&](std::string_view, const auto& member) { w.put(member); });
}

namespace {

template <class T>
std::string section_of(const SharedObjects<T>& objects) {
  std::string out;
  Writer w{out};
  w.put(objects);
  return out;
}

}  // namespace

std::string encode_section(const SharedObjects<model::Node>& objects) {
  return section_of(objects);
}
std::string encode_section(const SharedObjects<model::Pod>& objects) {
  return section_of(objects);
}
std::string encode_section(const SharedObjects<model::Queue>& objects) {
  return section_of(objects);
}
std::string encode_section(const SharedObjects<model::PodGroup>& objects) {
  return section_of(objects);
}
std::string encode_section(const SharedObjects<model::PriorityClass>& objects) {
  return section_of(objects);
}
std::string encode_section(const SharedObjects<model::BindRequest>& objects) {
  return section_of(objects);
}
std::string encode_section(const SharedObjects<model::WorkloadOwner>& objects) {
  return section_of(objects);
}
std::string encode_section(const SharedObjects<model::Topology>& objects) {
  return section_of(objects);
}
std::string encode_section(const SharedObjects<model::Namespace>& objects) {
  return section_of(objects);
}

void encode_state(uint64_t seq, const std::map<std::string, std::string>& resource_versions,
                  const ScheduleRecords& records, const StateSections& sections, std::string& out) {
  out.append(kMagic);
  binary::put_u8(out, kStateSnapshotVersion);
  Writer w{out};
  // The order of sections(ClusterState).
  w.put(seq);
  w.put(resource_versions);
  w.put(records);
  // The sections are most of a snapshot (80 MB at 150,000 pods): the text is sized once for them
  // rather than grown by doubling, which held up to twice their size at the end.
  size_t sections_size = 0;
  model::for_each_kind(
      [&](auto kind) { sections_size += std::max<size_t>(decltype(kind)::in(sections).size(), 1); });
  out.reserve(out.size() + sections_size);
  // A kind no store encoded (a store set up without it) is an empty map.
  model::for_each_kind([&](auto kind) {
    const std::string& section = decltype(kind)::in(sections);
    if (section.empty()) {
      binary::put_varint(out, 0);
    } else {
      out.append(section);
    }
  });
}

namespace {

/// The byte after the magic, or nullopt when `bytes` do not start with it.
std::optional<uint8_t> version_byte(std::string_view bytes) {
  if (bytes.size() < kMagic.size() + 1 || bytes.substr(0, kMagic.size()) != kMagic) return std::nullopt;
  return static_cast<uint8_t>(bytes[kMagic.size()]);
}

}  // namespace

uint8_t state_version(std::string_view bytes) { return version_byte(bytes).value_or(0); }

Result<ClusterState> decode_state(std::string_view bytes) {
  const std::optional<uint8_t> found = version_byte(bytes);
  if (!found) return Status::error("not a state snapshot (bad magic)");
  const uint8_t version = *found;
  if (version == 0 || version > kStateSnapshotVersion) {
    return Status::error("unsupported snapshot version " + std::to_string(version));
  }
  binary::Reader r(bytes.substr(kMagic.size() + 1));
  ClusterState state;
  Loader load{r, version};
  std::string failed;  // the first section that did not decode, for the message
  auto section = [&](std::string_view name, auto& member) {
    if constexpr (std::is_same_v<std::decay_t<decltype(member)>, ScheduleRecords>) {
      if (version == 1) {
        // v1 upgrade: only the pods of the decisions without an outcome were kept; they are
        // abandoned at the next start, which needs nothing more.
        std::map<uint64_t, std::string> open;
        load.get(open);
        for (auto& [seq, pod] : open) member.assumed[seq].decision.pod = std::move(pod);
        if (!r.ok() && failed.empty()) failed = "open_decisions";
        return;
      }
    }
    // v3 upgrade: no owners (the section did not exist; their watches list them again).
    if (version < 4 && name == model::kinds::WorkloadOwner::kSection) return;
    // v6 upgrade: no topologies (the section did not exist; their watch lists them again).
    if (version < 7 && name == model::kinds::Topology::kSection) return;
    // v7 upgrade: no namespaces (the section did not exist; their watch lists them again).
    if (version < 8 && name == model::kinds::Namespace::kSection) return;
    load.get(member);
    if (!r.ok() && failed.empty()) failed = name;
  };
  sections(state, section);
  if (!r.ok()) return Status::error("damaged or truncated snapshot (in " + failed + ")");
  if (!r.at_end()) return Status::error("trailing bytes after the snapshot");
  return state;
}

}  // namespace kai::events
