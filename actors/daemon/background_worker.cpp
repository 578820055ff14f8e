#include "actors/daemon/background_worker.hpp"

namespace kai::daemon {

void BackgroundWorker::stop() {
  {
    std::lock_guard lock(mu_);
    if (stopping_ && !thread_.joinable()) return;
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

uint64_t BackgroundWorker::written() const {
  std::lock_guard lock(mu_);
  return written_;
}

}  // namespace kai::daemon
