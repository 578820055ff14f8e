#pragma once
// A child process spoken to in lines over its stdin and stdout: the end-to-end benchmark runs the API
// server in one, so that the daemon's CPU and memory are the benchmark process's own.

#include <boost/core/noncopyable.hpp>
#include <sys/types.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kai::bench {

class ChildProcess : private boost::noncopyable {
 public:
  /// Starts `args[0]` with `args`; its stdin and stdout are pipes to us, its stderr is ours.
  /// Returns nullptr when the process could not be started.
  static std::unique_ptr<ChildProcess> spawn(const std::vector<std::string>& args);
  /// Ends the child (SIGKILL) if it still runs, and reaps it.
  ~ChildProcess();

  /// Writes `line` and a newline to the child's stdin. False when the child is gone.
  bool send(const std::string& line);
  /// The next line the child wrote (without the newline), or nullopt after `timeout` or at its end.
  std::optional<std::string> read_line(std::chrono::milliseconds timeout);
  /// Closes the child's stdin and waits up to `timeout` for it to exit; its exit status, or -1 when it
  /// had to be killed or died by a signal.
  int finish(std::chrono::milliseconds timeout);

 private:
  ChildProcess() = default;

  pid_t pid_ = -1;
  int to_child_ = -1;
  int from_child_ = -1;
  std::string buffered_;
};

}  // namespace kai::bench
