#pragma once
// Binds first (docs/configuration.md "Client defaults"): the API server serves a bounded number of
// requests at a time, so every status patch, Event, PodGroup or annotation sent while binds are
// queued delays a bind. The binder marks its work here; the deferred writers wait at the gate while
// any bind-path work (binds, evictions, the GPU-sharing chain) is queued or running, and go through
// once the binder is idle or after `max_hold` at the latest, so that a binder kept busy for minutes
// cannot starve them.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace kai::daemon {

class WriteGate {
 public:
  /// Default: a deferred write waits at most 30 s for the binds.
  explicit WriteGate(std::chrono::milliseconds max_hold = std::chrono::seconds(30)) : max_hold_(max_hold) {}

  /// The binder: `n` units of bind-path work were queued (or taken up again).
  void urgent_began(uint64_t n = 1);
  /// The binder: `n` units of bind-path work finished (or were parked to wait for a kubelet).
  void urgent_ended(uint64_t n = 1);
  /// A deferred writer, before each call: waits while bind-path work is outstanding, at most
  /// `max_hold`. Returns how long it waited.
  std::chrono::steady_clock::duration wait_turn();
  /// Lets every waiting and later writer through at once (the daemon stops).
  void open();

  uint64_t urgent() const;
  /// Deferred calls that found bind-path work outstanding and waited.
  uint64_t held() const;

 private:
  const std::chrono::milliseconds max_hold_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  uint64_t urgent_ = 0;
  uint64_t held_ = 0;
  bool open_ = false;
};

}  // namespace kai::daemon
