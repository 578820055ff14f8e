#pragma once
// How the long-running tools wait for Ctrl-C or a SIGTERM: the signals are blocked before any thread
// starts, so that every thread inherits the mask and only wait() receives them.

#include <pthread.h>

#include <csignal>

namespace kai::tools {

class StopSignals {
 public:
  /// Blocks SIGINT and SIGTERM in this thread; construct before any thread starts.
  StopSignals() {
    sigemptyset(&set_);
    sigaddset(&set_, SIGINT);
    sigaddset(&set_, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set_, nullptr);
  }

  /// Waits for one of them; returns its number.
  int wait() const {
    int sig = 0;
    sigwait(&set_, &sig);
    return sig;
  }

 private:
  sigset_t set_{};
};

}  // namespace kai::tools
