#pragma once
// The version of the scheduling behaviour: raise it with any change that makes the same log decide
// differently (an action, a plugin, an order, a message). The daemon logs it with its configuration;
// kai-log replay compares only the cycles recorded by this version and reports older ones as skipped
// (docs/one-truth.md).

#include <cstdint>

namespace kai::core {

/// 1: the first versioned behaviour (assumed decisions, job state and reservation clean-up in the
/// cycle).
/// 2: reservation pods hold their group's device when no fraction pod does, and new fraction pods
/// may join (adopt) such a group; groups back off after failed binds (bind_backoff.hpp,
/// docs/one-truth.md "Bind backoff").
/// 3: KAI's pod grouper: groups by top owner, sized from the owner's spec, with subgroups, minSubGroup
/// and per-group staleness grace (docs/pod-grouping.md).
/// 4: cycles log the PodGroup objects and pod annotations the pod grouper writes, and a bare pod
/// naming the grouper's own group stays the grouper's (pod_group_objects.hpp).
/// 5: PyTorchJob and LeaderWorkerSet segments, and the legacy PodGroups of Jobs, JobSets, Ray and
/// Knative kept (segment_groupers.cpp, docs/pod-grouping.md "Legacy PodGroups").
/// 6: cycles log the PodGroup and Queue statuses KAI's controllers write (status_objects.hpp).
/// 7: pod (anti-)affinity, host ports and DoNotSchedule topology spread are honoured instead of
/// refused; the podaffinity plugin scores preferred terms (docs/pod-constraints.md).
/// 8: no decision depends on the order objects are listed: equally scored shared devices by GPU-group
/// name, queue GPU sums on a grid, reclaim's check in victim order; a running shared pod that names
/// no GPU group has an id made from its uid, no longer drawn from the seed (docs/determinism-and-replay.md
/// "Determinism").
/// 9: eviction messages name the evicted pod in KAI v0.17's words (reclaim's queue lines as <GPU, CPU
/// (cores), memory (GB)>); OverLimit and NonPreemptibleOverQuota in KAI's units and words, the latter
/// with KAI's advice (docs/kai-compatibility.md).
/// 10: a PodGroup's preemptionDelay holds it back from reclaim, preempt and consolidation with KAI's
/// PreemptionDelayNotElapsed reason, from max(creation, last eviction); evictions record the victim
/// group's last eviction (preemption_delay.hpp).
/// 11: a cycle's settled PodGroup write records come after its writes, in key order, not among them
/// in group order (pod_group_objects.hpp: the same whether a kept session skips the groups in sync).
inline constexpr uint32_t kBehaviourVersion = 11;

}  // namespace kai::core
