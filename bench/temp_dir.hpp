#pragma once
// The directory of a benchmark's event log (bench/eventlog_bench.cpp, ingest_compaction_bench.cpp,
// snapshot_bench.cpp), under the system's temporary directory.

#include <unistd.h>

#include <filesystem>
#include <string>
#include <system_error>

namespace kai::bench {

/// kai-bench-<tag>-<pid>, emptied of what an earlier run left there.
inline std::string temp_dir(const std::string& tag) {
  auto p = std::filesystem::temp_directory_path() / ("kai-bench-" + tag + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(p);
  return p.string();
}

/// A temp_dir() removed when it goes out of scope: declared before the log that lives in it, it
/// outlives the log.
class ScopedTempDir {
 public:
  explicit ScopedTempDir(const std::string& tag) : path_(temp_dir(tag)) {}
  ~ScopedTempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScopedTempDir(const ScopedTempDir&) = delete;
  ScopedTempDir& operator=(const ScopedTempDir&) = delete;

  const std::string& str() const { return path_; }

 private:
  std::string path_;
};

}  // namespace kai::bench
