#pragma once
// Compact binary encoding of one Event (the value the log stores after its checksum).
//
// Record layout (all integers little-endian or LEB128 varints; no padding):
//
//   +---------+------+--------------------+--------------------------------+
//   | version | type | timestamp_us       | payload fields, in this order  |
//   | u8      | u8   | zigzag varint (i64)| (see below)                    |
//   +---------+------+--------------------+--------------------------------+
//
//   str   = varint length, bytes          u64 = varint        i64 = zigzag varint
//   f64   = 8 bytes, IEEE-754 bit pattern little-endian        bool/enum = u8
//   vec<T>= varint count, T...
//
//   type 1 WatchEvent       : kind str, watch type u8, resourceVersion str, object str
//   type 2 DecisionEvent    : cycle u64, seq u64, action str, kind u8, pod str, pod_uid str, node str,
//                             gpu_groups vec<str>, [v2+: gpu_fraction f64], reason str, by str,
//                             [v3+: leader_epoch u64], [v4+: queue str]
//   type 3 Unschedulable    : cycle u64, pod_group str, queue str, reasons vec<(reason str, message str)>,
//                             [v5+: pods vec<(pod str, uid str)>]
//   type 4 CycleStart       : cycle u64, config_hash u64, log_position u64, now i64, [v2+: seed u64],
//                             [v5+: scheduler_name str, leader_epoch u64, now_ms i64]
//   type 5 CycleEnd         : cycle u64, total_us u64, action_us vec<(name str, us u64)>
//   type 6 BinderOutcome    : decision_seq u64, pod str, outcome u8 (v5+: 4 = cancelled), reason str
//   type 7 LeadershipChange : epoch u64, holder str, acquired bool
//   type 8 ConfigChange     : hash u64, text str, [v5+: behaviour_version u64, flags str] (v4+ only)
//   type 9 JobStateChange   : cycle u64, group_uid str, group str, field u8, value opt<i64>,
//                             seen opt<i64>, source u8                             (v5+ only)
//   type 10 AssumedSettled  : cycle u64, decision_seqs vec<u64>                    (v5+ only)
//   type 11 PodGroupWrite   : cycle u64, group str, object str, exists bool,
//                             pods vec<(pod str, uid str, sub_group str)>, settled bool (v6+ only)
//   type 12 StatusWrite     : cycle u64, kind str, object str, uid str, patch str, settled bool
//                             (v7+ only)
//   type 13 AllocationChange: cycle u64, queues vec<(queue str, step)>, capacity opt<step>,
//                             replaces_after_ms i64, keep_from_ms i64                (v9+ only)
//   step = at_ms i64, gpu f64, cpu f64, memory f64
//   opt<i64> = u8 present, [i64]
//
// Versions: 1 = first release (no gpu_fraction, no seed); 2 = gpu_fraction and seed; 3 = decisions
// carry the leader epoch; 4 = decisions carry their queue; ConfigChange; 5 = CycleStart
// carries the scheduler name and epoch, ConfigChange the behaviour version; job state, settled
// assumptions, the cancelled outcome: docs/one-truth.md); 6 = the pod grouper's PodGroup writes
// (docs/pod-grouping.md); 7 = PodGroup and Queue status writes (docs/status.md); 8 = the
// `unconfirmed` binder outcome (docs/event-ordering.md "Restart: unconfirmed binds"); 9 = current
// (allocation records: docs/time-based-fair-share.md). A reader upgrades
// by filling the fields a version lacks with their defaults, so every consumer only ever sees the
// current shape.
// Trailing bytes after the last field are rejected: they mean a corrupt or future record.

#include <cstdint>
#include <string>
#include <string_view>

#include "events/event.hpp"
#include "k8s/model/status.hpp"

namespace kai::events {

using model::Result;
using model::Status;

/// Appends the encoding of `e` (without its seq) to `out` at schema `version` (1 to kSchemaVersion).
/// Writers use the default; older versions exist only so that tests can produce old records (a kind
/// that a version did not have gives a record that decode_event rejects).
void encode_event(const Event& e, std::string& out, uint8_t version = kSchemaVersion);

/// Decodes one record, upgrading older schema versions. Never throws and never reads out of bounds:
/// bad input gives an error Status naming what is wrong.
Result<Event> decode_event(std::string_view bytes);

/// The timestamp of an encoded record without decoding its payload (retention reads millions).
Result<int64_t> peek_timestamp(std::string_view bytes);

}  // namespace kai::events
