#pragma once
// A whole file as text, for the tools' input files (snapshots, configurations, workloads, queues).

#include <fstream>
#include <optional>
#include <sstream>
#include <string>

namespace kai::tools {

/// The file's bytes, or nullopt when it cannot be opened or read.
inline std::optional<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return text.str();
}

}  // namespace kai::tools
