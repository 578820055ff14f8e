#pragma once
// Binary snapshots of the projected state (docs/event-log-format.md "Snapshots": restarts and replay read them, so they are
// versioned binary records). A snapshot is the ClusterState after the event at `seq`; startup and
// tools restore it and apply only the log's tail.
//
// Layout (primitives as in event_codec.hpp: varint, zigzag i64, length-prefixed str, f64 LE):
//
//   +-------+---------+---------------------------------------------------------------------+
//   | "KAS" | version | state: seq u64, resource_versions map, records (v1: open_decisions),  |
//   | 3 B   | u8      | nodes, pods, queues, pod_groups, priority_classes, bind_requests,    |
//   |       |         | owners (v4), topologies (v7), namespaces (v8)                        |
//   +-------+---------+---------------------------------------------------------------------+
//
//   map<K,V> = count, (K, V)...        vec<T> = count, T...        optional<T> = u8 present, [T]
//   each object = its fields in declaration order (state_codec.cpp lists them once, for both
//   directions), every ObjectMeta, FieldError and nested struct included, so restore(encode(s)) == s.
//
//   records = assumed map<u64, (decision, reported bool, [v9: unconfirmed bool, held_since_ms opt<i64>])>, job_states map<str, (group str,
//             (value opt<i64>, expected vec<opt<i64>>) x 2 [v11: x 3])>, last_now_ms i64, scheduler_name str,
//             bind_failures map<str, (pod_uid str, failures u32, failed_at_ms opt<i64>, reason str)>
//             (v3), group_writes map<str, (hash u64, at_ms i64)> (v5), status_writes (as group_writes,
//             v6); enums are u8
//
// Versions: 1 = first (open_decisions map<u64, pod str>; pod conditions without
// lastTransitionTime); 2 = the scheduler's records (docs/one-truth.md); 3 = failed binds
// (docs/one-truth.md "Bind backoff"; v2 reads as none); 4 = workload owners and KAI v0.17's
// PodGroup fields (docs/pod-grouping.md; v3 reads as none); 5 = the PodGroup writes asked for
// (docs/pod-grouping.md "Objects written"; v4 reads as none); 6 = PodGroup and Queue statuses and
// the status writes asked for (docs/status.md; v5 reads as none); 7 = the Topology section
// (docs/topology.md; v6 reads as none); 8 = pods keep their pod (anti-)affinity, spread
// constraints and host ports, and the Namespace section (docs/pod-constraints.md; v7 refused them
// and reads as none; its namespaces are listed again); 9 = assumed binds a restart left
// unconfirmed and their hold (docs/event-ordering.md "Restart: unconfirmed binds"; v8 reads as none);
// 10 = the allocation history of time-based fair share (docs/time-based-fair-share.md; v9
// reads as none); 11 = current: a group's last eviction in its job state (docs/kai-compatibility.md
// "Preemption delay"; v10 reads as none). A reader upgrades older versions; a newer version is refused
// with its number.

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "events/projection.hpp"
#include "k8s/model/kinds.hpp"

namespace kai::events {

/// The snapshot format this build writes.
inline constexpr uint8_t kStateSnapshotVersion = 11;

/// Appends the binary snapshot of `state` to `out`.
void encode_state(const ClusterState& state, std::string& out);

/// Objects shared with readers that must not see them change (the daemon's entity actors).
template <class T>
using SharedObjects = std::map<std::string, std::shared_ptr<const T>>;

/// One kind's section of a snapshot: the bytes encode_state writes for that map. The daemon's entity
/// actors encode their own kinds, in parallel, at the same cut.
std::string encode_section(const SharedObjects<model::Node>& objects);
std::string encode_section(const SharedObjects<model::Pod>& objects);
std::string encode_section(const SharedObjects<model::Queue>& objects);
std::string encode_section(const SharedObjects<model::PodGroup>& objects);
std::string encode_section(const SharedObjects<model::PriorityClass>& objects);
std::string encode_section(const SharedObjects<model::BindRequest>& objects);
std::string encode_section(const SharedObjects<model::WorkloadOwner>& objects);
std::string encode_section(const SharedObjects<model::Topology>& objects);
std::string encode_section(const SharedObjects<model::Namespace>& objects);

/// The kind sections of a snapshot, encoded apart.
template <class>
using SectionBytes = std::string;
struct StateSections : model::PerKind<SectionBytes> {};

/// Appends a snapshot assembled from its parts: the same bytes as encode_state of the ClusterState
/// that holds this content.
void encode_state(uint64_t seq, const std::map<std::string, std::string>& resource_versions,
                  const ScheduleRecords& records, const StateSections& sections, std::string& out);

/// Decodes a snapshot. Never throws, never reads out of bounds: damaged input is an error naming
/// the section that failed.
Result<ClusterState> decode_state(std::string_view bytes);

/// The format version of snapshot `bytes` (kStateSnapshotVersion for this build's), 0 when they are
/// not a snapshot. An older one decodes without what its format did not keep.
uint8_t state_version(std::string_view bytes);

}  // namespace kai::events
