#pragma once
// Sums of queue quantities that do not depend on the order of their terms.
//
// A queue's request and allocation are sums over its tasks, and the session lists tasks in the order
// their objects arrived. CPU millicores and memory bytes are whole numbers, which doubles add exactly;
// GPU amounts are not (0.37 of a device, a gpu-memory request's share of the smallest device), so two
// orders of the same pods gave sums one rounding apart, and a comparison of those sums against a fair
// share could then decide differently (tests/core/property_test.cpp,
// DecisionsDoNotDependOnTheOrderObjectsAreListedIn). Every GPU amount that enters such a sum, and
// every sum, is kept on a grid of a millionth of a device: the grid value nearest the exact sum is the
// same whatever the order.

#include <cmath>

#include "actors/scheduler/core/cluster_info.hpp"

namespace kai::core {

/// `gpus` on the grid of a millionth of a device.
inline double on_gpu_grid(double gpus) {
  return std::round(gpus * 1e6) / 1e6;
}

/// into += sign x q, its GPU amount kept on the grid.
inline void add_queue_quantities(QueueQuantities& into, const QueueQuantities& q, double sign = 1) {
  into.gpu = on_gpu_grid(into.gpu + sign * on_gpu_grid(q.gpu));
  into.cpu += sign * q.cpu;
  into.memory += sign * q.memory;
}

}  // namespace kai::core
