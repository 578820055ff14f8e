#pragma once
// A whole file as text, for the tools' input files (snapshots, configurations, workloads, queues).

#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <system_error>

namespace kai::tools {

/// The file's bytes, or nullopt when it cannot be opened or read. `spare`: capacity kept free after
/// the bytes of a regular file, for a parser that reads past the end (simdjson's padding).
inline std::optional<std::string> read_file(const std::string& path, size_t spare = 0) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  // A regular file is read in one call into a string of its size: kai-gen's 65 MB cluster through a
  // stream buffer copy took a tenth of kai-sim's run. Anything else (a pipe) is read as a stream.
  std::error_code ec;
  const bool regular = std::filesystem::is_regular_file(path, ec);
  const auto size = regular ? std::filesystem::file_size(path, ec) : 0;
  if (regular && !ec) {
    std::string text;
    text.reserve(size + spare);
    text.resize(size);
    in.read(text.data(), static_cast<std::streamsize>(size));
    if (in.gcount() == static_cast<std::streamsize>(size) && in.peek() == std::char_traits<char>::eof()) return text;
    if (in.bad()) return std::nullopt;
    // The file changed size while being read: read it as a stream from the start.
    in.clear();
    in.seekg(0);
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return text.str();
}

}  // namespace kai::tools
