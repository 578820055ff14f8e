#pragma once
// The actions that evict running pods, one per file: reclaim.cpp, preempt.cpp and consolidation.cpp
// choose victims through the victim solver (victim_solver.hpp); stale_gang_eviction.cpp ends gangs
// that stayed below their minimum.

#include "actors/scheduler/core/action.hpp"

namespace kai::core {

class Session;

/// Reclaim: a pending job takes resources from other queues that are over their fair share.
void reclaim_action(Session& ssn);

/// Preempt: a pending job evicts lower-priority preemptible jobs of its own queue.
void preempt_action(Session& ssn);

/// Consolidation: running pods are moved elsewhere to make room for a pending job.
void consolidation_action(Session& ssn);

/// Stale-gang eviction: a gang that stays below minMember longer than the grace period loses its
/// remaining pods.
void stale_gang_eviction_action(Session& ssn);

}  // namespace kai::core
