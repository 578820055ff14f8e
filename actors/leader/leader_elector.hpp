#pragma once
// Leader election on a coordination.k8s.io/v1 Lease, with client-go's rules (KAI's defaults: lease
// 15 s, renew deadline 10 s, retry 2 s):
// - a candidate takes the lease when it does not exist, names nobody, or has not been renewed for a
//   whole lease duration as observed on the candidate's own clock (clock skew between replicas does
//   not matter: only local durations are compared);
// - every write carries the resourceVersion it read, so two candidates cannot both win;
// - a leader that has not renewed for the renew deadline stops acting, which is before any other
//   replica may take the lease (renew deadline < lease duration): no double binds;
// - the lease's leaseTransitions after a take-over is the leader epoch stamped on every decision.
// The elector is plain and clock-driven (tick()); the daemon calls it from a timer.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "k8s/model/status.hpp"

namespace kai::leader {

using Clock = std::chrono::steady_clock;

/// The Lease's spec as the elector reads and writes it.
struct LeaseRecord {
  std::string holder;             ///< spec.holderIdentity; "" = released.
  int32_t lease_duration_s = 0;   ///< spec.leaseDurationSeconds
  int64_t acquire_time_us = 0;    ///< spec.acquireTime (MicroTime), unix microseconds
  int64_t renew_time_us = 0;      ///< spec.renewTime (MicroTime), unix microseconds
  int32_t transitions = 0;        ///< spec.leaseTransitions
  std::string resource_version;   ///< metadata.resourceVersion (precondition of updates)
};

/// A failed Lease call: `conflict` for 409 (someone else wrote first) and `not_found` for 404.
struct LeaseError {
  bool conflict = false;
  bool not_found = false;
  std::string message;
};

/// The three Lease calls, done by the daemon with its Kubernetes client (or by tests in memory).
class LeaseApi {
 public:
  virtual ~LeaseApi() = default;
  /// The lease, or nullopt when it does not exist.
  virtual std::optional<LeaseRecord> get(LeaseError* error) = 0;
  virtual std::optional<LeaseRecord> create(const LeaseRecord& record, LeaseError* error) = 0;
  /// Replaces the spec if the stored resourceVersion still equals record.resource_version.
  virtual std::optional<LeaseRecord> update(const LeaseRecord& record, LeaseError* error) = 0;
};

struct ElectorOptions {
  std::string identity;  ///< This replica (pod name); required.
  std::chrono::milliseconds lease_duration{15000};
  std::chrono::milliseconds renew_deadline{10000};
  std::chrono::milliseconds retry_period{2000};
};

/// What changed at a tick, for the daemon's log and event log.
enum class Transition : uint8_t { kNone, kBecameLeader, kLostLeadership };

class LeaderElector {
 public:
  LeaderElector(LeaseApi& api, ElectorOptions options);

  /// Checks the options (renew deadline below the lease duration, retry below the deadline).
  static model::Status validate(const ElectorOptions& options);

  /// One attempt to take or renew the lease. `now` is the monotonic clock, `wall_us` the wall clock
  /// written into the lease. Call every retry_period (tick_due() says when).
  Transition tick(Clock::time_point now, int64_t wall_us);

  /// Whether this replica may act now: it holds the lease and renewed it less than the renew
  /// deadline ago. Checked before every bind and eviction, not only at ticks.
  bool may_act(Clock::time_point now) const;
  /// The instant until which may_act() holds without another successful tick (the clock's epoch
  /// when it does not hold), so that other threads can check leadership without the elector.
  Clock::time_point act_until() const { return leader_ ? last_renew_ + options_.renew_deadline : Clock::time_point{}; }
  /// The leader epoch (leaseTransitions when this replica took the lease); 0 before.
  int64_t epoch() const { return epoch_; }
  /// Who holds the lease as last observed ("" = nobody).
  const std::string& observed_holder() const { return observed_.holder; }
  Clock::time_point next_tick(Clock::time_point now) const { return now + options_.retry_period; }
  /// Gives the lease up (holder cleared) so that a standby takes over at once. Best effort.
  void release(int64_t wall_us);
  const std::string& last_error() const { return last_error_; }

 private:
  bool try_take_or_renew(Clock::time_point now, int64_t wall_us);

  LeaseApi& api_;
  ElectorOptions options_;
  LeaseRecord observed_;
  bool have_observed_ = false;
  Clock::time_point observed_at_{};  ///< When the observed record last changed, on our clock.
  bool leader_ = false;
  Clock::time_point last_renew_{};
  int64_t epoch_ = 0;
  std::string last_error_;
};

}  // namespace kai::leader
