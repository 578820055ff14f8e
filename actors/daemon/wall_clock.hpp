#pragma once
// The wall clock as the log records it: microseconds since the Unix epoch.

#include <chrono>
#include <cstdint>

namespace kai::daemon {

inline int64_t wall_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace kai::daemon
