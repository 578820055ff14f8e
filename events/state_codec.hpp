#pragma once
// Binary snapshots of the projected state (issue 6, contracts.md §8: "log, replay and snapshots use
// versioned binary records"). A snapshot is the ClusterState after the event at `seq`; startup and
// tools restore it and apply only the log's tail.
//
// Layout (primitives as in event_codec.hpp: varint, zigzag i64, length-prefixed str, f64 LE):
//
//   +-------+---------+---------------------------------------------------------------------+
//   | "KAS" | version | state: seq u64, resource_versions map, open_decisions map,           |
//   | 3 B   | u8      | nodes, pods, queues, pod_groups, priority_classes, bind_requests     |
//   +-------+---------+---------------------------------------------------------------------+
//
//   map<K,V> = count, (K, V)...        vec<T> = count, T...        optional<T> = u8 present, [T]
//   each object = its fields in declaration order (state_codec.cpp lists them once, for both
//   directions), every ObjectMeta, FieldError and nested struct included, so restore(encode(s)) == s.
//
// Versions: 1 = first. A reader upgrades older versions; a newer version is refused with its number.

#include <cstdint>
#include <string>
#include <string_view>

#include "events/projection.hpp"

namespace kai::events {

/// The snapshot format this build writes.
inline constexpr uint8_t kStateSnapshotVersion = 1;

/// Appends the binary snapshot of `state` to `out`.
void encode_state(const ClusterState& state, std::string& out);

/// Decodes a snapshot. Never throws, never reads out of bounds: damaged input is an error naming
/// the section that failed.
Result<ClusterState> decode_state(std::string_view bytes);

}  // namespace kai::events
