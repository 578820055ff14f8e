#include "actors/daemon/binder.hpp"

#include <optional>

namespace kai::daemon {

Binder::Binder(k8s::KubeClient& client, gpu_sharing::SharingChain& chain, int workers, OutcomeFn on_outcome,
               MayActFn may_act)
    : client_(client), chain_(chain), on_outcome_(std::move(on_outcome)), may_act_(std::move(may_act)) {
  for (int i = 0; i < std::max(1, workers); ++i) threads_.emplace_back([this] { work(); });
}

Binder::~Binder() { stop(); }

void Binder::submit(BindJob job) {
  {
    std::lock_guard lock(mu_);
    queue_.push_back(std::move(job));
  }
  cv_.notify_one();
}

void Binder::submit_task(std::function<void()> task) {
  {
    std::lock_guard lock(mu_);
    tasks_.push_back(std::move(task));
  }
  cv_.notify_one();
}

size_t Binder::queued() const {
  std::lock_guard lock(mu_);
  return queue_.size();
}

void Binder::stop() {
  {
    std::lock_guard lock(mu_);
    if (stopping_ && threads_.empty()) return;
    stopping_ = true;
  }
  cv_.notify_all();
  for (auto& t : threads_) {
    if (t.joinable()) t.join();
  }
  threads_.clear();
}

void Binder::work() {
  for (;;) {
    BindJob job;
    std::function<void()> task;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return stopping_ || !queue_.empty() || !tasks_.empty(); });
      if (queue_.empty() && tasks_.empty()) return;
      if (queue_.empty()) {
        task = std::move(tasks_.front());
        tasks_.pop_front();
      } else {
        job = std::move(queue_.front());
        queue_.pop_front();
      }
    }
    if (task) {
      task();
      continue;
    }
    events::BinderOutcome outcome = execute(job);
    on_outcome_(job, std::move(outcome));
  }
}

events::BinderOutcome Binder::execute(const BindJob& job) {
  const events::Decision& d = job.decision;
  events::BinderOutcome out;
  out.decision_seq = job.log_seq;
  out.pod = d.pod;
  const size_t slash = d.pod.find('/');
  const std::string ns = d.pod.substr(0, slash);
  const std::string name = d.pod.substr(slash + 1);
  auto abandon = [&] {
    out.outcome = events::Outcome::kAbandoned;
    out.reason = "this replica is no longer the leader; the new leader decides again";
    return out;
  };
  if (!may_act_()) return abandon();
  if (std::chrono::steady_clock::now() > job.deadline) {
    out.outcome = events::Outcome::kCancelled;
    out.reason = "not started before its deadline (the binder was busy or the API server slow); decided again";
    return out;
  }
  if (d.kind == events::DecisionKind::kEvict) {
    auto r = client_.delete_pod(ns, name, d.pod_uid);
    // Gone already, or a different pod by that name now: the eviction has nothing left to do.
    if (r.ok() || r.not_found() || r.conflict()) {
      out.outcome = events::Outcome::kBound;
      out.reason = r.ok() ? "evicted" : "already gone (" + r.describe() + ")";
    } else {
      out.outcome = events::Outcome::kBindFailed;
      out.reason = "eviction failed: " + r.describe();
    }
    return out;
  }
  gpu_sharing::SharedBind shared;
  const bool is_shared = !d.gpu_groups.empty() && d.gpu_fraction > 0;
  // A pod that is bound already (an earlier bind whose answer was lost, another replica) is left
  // alone: its group label, configmaps and reservation are what its GPU is, and must stay.
  auto already_bound = [&](const std::string& why) -> std::optional<events::BinderOutcome> {
    auto node = client_.pod_node(ns, name, d.pod_uid);
    if (!node.is_ok() || node.value().empty()) return std::nullopt;
    out.outcome = events::Outcome::kBound;
    out.reason = "already bound to " + node.value() + " (" + why + "); nothing of it was changed";
    return out;
  };
  if (is_shared) {
    if (auto bound = already_bound("found before its GPU-sharing chain")) return *bound;
    shared.ns = ns;
    shared.name = name;
    shared.uid = d.pod_uid;
    shared.node = d.node;
    shared.groups = d.gpu_groups;
    shared.portion = d.gpu_fraction;
    shared.config_map_prefix = job.config_map_prefix;
    shared.container_suffix = job.container_suffix;
    shared.tolerations = job.tolerations;
    auto chain = chain_.prepare(shared);
    if (!chain.status.is_ok()) {
      const bool timeout = chain.status.message().find("did not report its GPU") != std::string::npos;
      out.outcome = timeout ? events::Outcome::kReservationTimedOut : events::Outcome::kBindFailed;
      out.reason = chain.status.message();
      return out;
    }
  }
  if (!may_act_()) {  // the chain may have waited long for a reservation pod
    if (is_shared) chain_.rollback(shared);
    return abandon();
  }
  auto r = client_.bind_pod(ns, name, d.pod_uid, d.node);
  if (r.ok()) {
    out.outcome = events::Outcome::kBound;
    out.reason = "bound to " + d.node;
    return out;
  }
  // The bind may have happened with its answer lost (a 409 on a retry, a cut connection): a bound pod
  // is logged as bound where it is, and its chain is not rolled back.
  if (auto bound = already_bound("the bind answered " + r.describe())) return *bound;
  if (is_shared) chain_.rollback(shared);
  out.outcome = events::Outcome::kBindFailed;
  out.reason = "binding to " + d.node + " failed: " + r.describe();
  return out;
}

}  // namespace kai::daemon
