#pragma once
// The daemon runs the core's one cycle function (actors/scheduler/core/cycle.hpp); these names are
// what its writers and metrics read of a cycle.

#include "actors/scheduler/core/cycle.hpp"

namespace kai::daemon {

using CycleOutput = core::CycleResult;
using core::PendingPod;
using core::QueueFigures;

}  // namespace kai::daemon
