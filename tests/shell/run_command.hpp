#pragma once
// Runs a command through the shell and keeps what it printed, for the tests that drive a binary:
// kubectl (tests/apiserver/kubectl_test.cpp, tests/deploy/manifests_test.cpp) and kai-log
// (tests/storage/kai_log_tool_test.cpp, tests/storage/replay_test.cpp).

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace kai::test_shell {

struct CommandRun {
  /// The exit code; -1 when the command could not be started or did not exit normally.
  int code = -1;
  /// What it wrote to its standard output (and what the command line redirected there).
  std::string out;
};

inline CommandRun run_command(const std::string& command_line) {
  CommandRun r;
  FILE* p = ::popen(command_line.c_str(), "r");
  if (p == nullptr) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int status = ::pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

}  // namespace kai::test_shell
