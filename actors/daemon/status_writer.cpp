#include "actors/daemon/status_writer.hpp"

#include <set>

namespace kai::daemon {

StatusWriter::StatusWriter(StatusApi& api, size_t max_queue)
    : api_(api), max_queue_(max_queue) {
  start([this] { work(); });
}

StatusWriter::~StatusWriter() { stop(); }

void StatusWriter::enqueue(std::function<void()> write) {
  {
    std::lock_guard lock(mu_);
    // Statuses are advisory; under a flood the oldest give way (the next cycle writes them again).
    if (queue_.size() >= max_queue_) queue_.pop_front();
    queue_.push_back(std::move(write));
  }
  cv_.notify_one();
}

void StatusWriter::after_cycle(const CycleOutput& out) {
  std::set<std::string> still_pending;
  for (const auto& p : out.pending) {
    still_pending.insert(p.pod);
    std::string& last = last_message_[p.pod];
    if (last == p.reason + ": " + p.message) continue;
    last = p.reason + ": " + p.message;
    // Already on the pod: its Warning event went out with the condition (a restart, a failover).
    if (p.shown) continue;
    const size_t slash = p.pod.find('/');
    const std::string ns = p.pod.substr(0, slash), name = p.pod.substr(slash + 1);
    enqueue([this, ns, name, uid = p.uid, reason = p.reason, message = p.message, mark = p.mark_condition] {
      // Advisory: a failure is not retried; the condition stays as it was until the reasons change.
      // A PodGroup with markUnschedulable false keeps its pods' conditions as they are.
      if (mark) (void)api_.set_pod_condition(ns, name, "PodScheduled", "False", reason, message);
      (void)api_.create_event({ns, "Pod", "v1", name, uid, "Warning", reason, message, "Scheduling"});
    });
  }
  for (auto it = last_message_.begin(); it != last_message_.end();) {
    it = still_pending.count(it->first) ? std::next(it) : last_message_.erase(it);
  }
  for (const auto& d : out.decisions) {
    if (d.kind != events::DecisionKind::kEvict) continue;
    const size_t slash = d.pod.find('/');
    enqueue([this, ns = d.pod.substr(0, slash), name = d.pod.substr(slash + 1), uid = d.pod_uid,
             note = d.reason.empty() ? "Evicted by " + d.action + " for " + d.by : d.reason] {
      (void)api_.create_event({ns, "Pod", "v1", name, uid, "Normal", "Evict", note, "Evicting"});
    });
  }
}

void StatusWriter::pod_bound(const std::string& pod, const std::string& uid, const std::string& node) {
  {
    std::lock_guard lock(mu_);
    if (scheduled_.insert_or_assign(pod, std::pair{uid, node}).second) scheduled_order_.push_back(pod);
    // Advisory like the rest: under a flood the oldest give way.
    while (scheduled_order_.size() > max_queue_) {
      scheduled_.erase(scheduled_order_.front());
      scheduled_order_.pop_front();
    }
  }
  cv_.notify_one();
}

void StatusWriter::work() {
  for (;;) {
    std::function<void()> write;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return stopping_ || !queue_.empty() || !scheduled_order_.empty(); });
      if (stopping_) return;  // advisory writes are dropped at shutdown
      if (!queue_.empty()) {
        write = std::move(queue_.front());
        queue_.pop_front();
      } else {
        const std::string pod = std::move(scheduled_order_.front());
        scheduled_order_.pop_front();
        auto it = scheduled_.find(pod);
        const std::string uid = it->second.first, node = it->second.second;
        scheduled_.erase(it);
        const size_t slash = pod.find('/');
        write = [this, ns = pod.substr(0, slash), name = pod.substr(slash + 1), uid, node, pod] {
          (void)api_.create_event(
              {ns, "Pod", "v1", name, uid, "Normal", "Scheduled", "Successfully assigned " + pod + " to " + node,
               "Binding"});
        };
      }
    }
    write();
    std::lock_guard lock(mu_);
    ++written_;
  }
}

}  // namespace kai::daemon
