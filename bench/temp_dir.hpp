#pragma once
// The directory of a benchmark's event log (bench/eventlog_bench.cpp, ingest_compaction_bench.cpp,
// snapshot_bench.cpp), under the system's temporary directory; the benchmark removes it when done.

#include <unistd.h>

#include <filesystem>
#include <string>

namespace kai::bench {

/// kai-bench-<tag>-<pid>, emptied of what an earlier run left there.
inline std::string temp_dir(const std::string& tag) {
  auto p = std::filesystem::temp_directory_path() / ("kai-bench-" + tag + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(p);
  return p.string();
}

}  // namespace kai::bench
