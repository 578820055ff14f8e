#pragma once
// The benchmark process's own resident sizes, read from /proc/self/status (bench/daemon_e2e_bench.cpp,
// session_bench.cpp).

#include <cstdlib>
#include <fstream>
#include <string>

namespace kai::bench {

/// A field of /proc/self/status in MiB ("VmRSS", "VmHWM"); 0 when absent.
inline double status_mib(const std::string& field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field + ":", 0) == 0)
      return static_cast<double>(std::atoll(line.c_str() + field.size() + 1)) / 1024.0;
  }
  return 0;
}

}  // namespace kai::bench
