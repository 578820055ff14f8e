#include "actors/daemon/binder.hpp"

namespace kai::daemon {

namespace {

constexpr const char* kNotLeader = "this replica is no longer the leader; the new leader decides again";

/// Namespace and name of "namespace/name".
std::pair<std::string, std::string> split_pod(const std::string& key) {
  const size_t slash = key.find('/');
  return {key.substr(0, slash), key.substr(slash + 1)};
}

events::BinderOutcome report(const BindJob& job, events::Outcome outcome, std::string reason) {
  events::BinderOutcome out;
  out.decision_seq = job.log_seq;
  out.pod = job.decision.pod;
  out.outcome = outcome;
  out.reason = std::move(reason);
  return out;
}

/// A failed step, logged by the failure's code, never its text.
events::BinderOutcome failed(const BindJob& job, const model::Status& s) {
  return report(job,
                s.code() == model::Code::kTimedOut ? events::Outcome::kReservationTimedOut
                                                   : events::Outcome::kBindFailed,
                s.message());
}

}  // namespace

Binder::Binder(BindApi& api, gpu_sharing::SharingChain& chain, int workers, OutcomeFn on_outcome,
               MayActFn may_act, BinderTiming timing, WriteGate* gate)
    : api_(api),
      chain_(chain),
      on_outcome_(std::move(on_outcome)),
      may_act_(std::move(may_act)),
      timing_(timing),
      gate_(gate) {
  for (int i = 0; i < std::max(1, workers); ++i) threads_.emplace_back([this] { work(); });
}

Binder::~Binder() { stop(); }

void Binder::submit(BindJob job) {
  Work w;
  w.job = std::move(job);
  if (gate_ != nullptr) gate_->urgent_began();
  {
    std::lock_guard lock(mu_);
    auto& lane = w.job.decision.kind == events::DecisionKind::kEvict ? evictions_ : binds_;
    lane.push_back(std::move(w));
  }
  cv_.notify_one();
}

size_t Binder::queued() const {
  std::lock_guard lock(mu_);
  return evictions_.size() + binds_.size();
}

size_t Binder::waiting() const {
  std::lock_guard lock(mu_);
  return parked_.size();
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

void Binder::park(Work w) {
  const auto at = Clock::now() + w.poll;
  w.poll = std::min(w.poll * 2, timing_.max_poll);
  {
    std::lock_guard lock(mu_);
    parked_.emplace(at, std::move(w));
  }
  cv_.notify_one();
}

void Binder::work() {
  for (;;) {
    Work w;
    {
      std::unique_lock lock(mu_);
      for (;;) {
        // Due (or, when stopping, all) parked binds go first among binds: a read of a reservation pod
        // is one short call.
        const auto now = Clock::now();
        while (!parked_.empty() && (stopping_ || parked_.begin()->first <= now)) {
          binds_.push_front(std::move(parked_.begin()->second));
          parked_.erase(parked_.begin());
          if (gate_ != nullptr) gate_->urgent_began();
        }
        if (!evictions_.empty()) {
          w = std::move(evictions_.front());
          evictions_.pop_front();
          break;
        }
        if (!binds_.empty()) {
          w = std::move(binds_.front());
          binds_.pop_front();
          break;
        }
        if (stopping_) return;
        if (parked_.empty()) {
          cv_.wait(lock);
        } else {
          const Clock::time_point next = parked_.begin()->first;  // a copy: the entry may go while we wait
          cv_.wait_until(lock, next);
        }
      }
    }
    if (auto outcome = step(w)) on_outcome_(w.job, std::move(*outcome));
    // Done, or parked until its reservation pod reports: a kubelet's wait, not the API server's.
    if (gate_ != nullptr) gate_->urgent_ended();
  }
}

std::optional<events::BinderOutcome> Binder::step(Work& w) {
  return w.started ? continue_chain(w) : start(w);
}

std::optional<events::BinderOutcome> Binder::found_bound(const BindJob& job, const std::string& why) {
  const auto [ns, name] = split_pod(job.decision.pod);
  auto node = api_.pod_node(ns, name, job.decision.pod_uid);
  if (!node.is_ok() || node.value().empty()) return std::nullopt;
  return report(job, events::Outcome::kBound,
                "already bound to " + node.value() + " (" + why + "); nothing of it was changed");
}

std::optional<events::BinderOutcome> Binder::start(Work& w) {
  const BindJob& job = w.job;
  const events::Decision& d = job.decision;
  if (!may_act_()) return report(job, events::Outcome::kAbandoned, kNotLeader);
  if (Clock::now() > job.deadline) {
    return report(job, events::Outcome::kCancelled,
                  "not started before its deadline (the binder was busy or the API server slow); decided again");
  }
  const auto [ns, name] = split_pod(d.pod);
  if (d.kind == events::DecisionKind::kEvict) {
    const model::Status r = api_.delete_pod(ns, name, d.pod_uid, kPodsOwnGracePeriod);
    // Gone already, or a different pod by that name now: the eviction has nothing left to do.
    if (r.is_ok() || r.code() == model::Code::kNotFound || r.code() == model::Code::kConflict) {
      return report(job, events::Outcome::kBound, r.is_ok() ? "evicted" : "already gone (" + r.message() + ")");
    }
    return report(job, events::Outcome::kBindFailed, "eviction failed: " + r.message());
  }
  w.started = true;
  if (d.gpu_groups.empty() || d.gpu_fraction <= 0) return bind(w);
  // A pod that is bound already (an earlier bind whose answer was lost, another replica) is left
  // alone: its group label, configmaps and reservation are what its GPU is, and must stay.
  if (auto bound = found_bound(job, "found before its GPU-sharing chain")) return bound;
  gpu_sharing::SharedBind& shared = w.shared;
  shared.ns = ns;
  shared.name = name;
  shared.uid = d.pod_uid;
  shared.node = d.node;
  shared.groups = d.gpu_groups;
  shared.portion = d.gpu_fraction;
  shared.config_map_prefix = job.config_map_prefix;
  shared.container_suffix = job.container_suffix;
  shared.tolerations = job.tolerations;
  w.chain = std::make_shared<gpu_sharing::ChainState>();
  w.give_up_at = Clock::now() + chain_.options().reservation_timeout;
  w.poll = timing_.first_poll;
  return continue_chain(w);
}

std::optional<events::BinderOutcome> Binder::continue_chain(Work& w) {
  bool stopping = false;
  {
    std::lock_guard lock(mu_);
    stopping = stopping_;
  }
  // Nothing was written to the pod yet (its labels and configmaps come when the chain is ready); its
  // reservation pods stay, to be adopted when it is decided again or cleaned up by a cycle.
  if (stopping) {
    return report(w.job, events::Outcome::kAbandoned,
                  "the scheduler stopped while the pod waited for its reservation pod; decided again");
  }
  if (!may_act_()) return report(w.job, events::Outcome::kAbandoned, kNotLeader);
  auto r = chain_.advance(w.shared, *w.chain);
  if (r.step == gpu_sharing::ChainStep::kFailed) return failed(w.job, r.status);
  if (r.step == gpu_sharing::ChainStep::kWaiting) {
    if (Clock::now() >= w.give_up_at) return failed(w.job, chain_.give_up(w.shared, *w.chain));
    park(std::move(w));
    return std::nullopt;
  }
  if (auto s = chain_.finish(w.shared, *w.chain); !s.is_ok()) return failed(w.job, s);
  return bind(w);
}

events::BinderOutcome Binder::bind(const Work& w) {
  const events::Decision& d = w.job.decision;
  const bool shared = w.chain != nullptr;
  if (!may_act_()) {
    if (shared) chain_.rollback(w.shared);
    return report(w.job, events::Outcome::kAbandoned, kNotLeader);
  }
  const auto [ns, name] = split_pod(d.pod);
  const model::Status r = api_.bind_pod(ns, name, d.pod_uid, d.node);
  if (r.is_ok()) return report(w.job, events::Outcome::kBound, "bound to " + d.node);
  // The bind may have happened with its answer lost (a 409 on a retry, a cut connection): a bound pod
  // is logged as bound where it is, and nothing of it is rolled back.
  if (auto bound = found_bound(w.job, "the bind answered " + r.message())) return *bound;
  if (shared) chain_.rollback(w.shared);
  return report(w.job, events::Outcome::kBindFailed, "binding to " + d.node + " failed: " + r.message());
}

}  // namespace kai::daemon
