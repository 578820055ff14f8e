#include "actors/leader/leader_elector.hpp"

namespace kai::leader {

namespace {

bool same_record(const LeaseRecord& a, const LeaseRecord& b) {
  return a.holder == b.holder && a.renew_time_us == b.renew_time_us && a.transitions == b.transitions &&
         a.resource_version == b.resource_version;
}

}  // namespace

LeaderElector::LeaderElector(LeaseApi& api, ElectorOptions options) : api_(api), options_(std::move(options)) {}

model::Status LeaderElector::validate(const ElectorOptions& o) {
  if (o.identity.empty()) return model::Status::error("leader election: an identity (pod name) is required");
  if (o.renew_deadline >= o.lease_duration) {
    return model::Status::error("leader election: the renew deadline must be shorter than the lease duration, or "
                                "two replicas could act at once");
  }
  if (o.retry_period >= o.renew_deadline) {
    return model::Status::error("leader election: the retry period must be shorter than the renew deadline");
  }
  return model::Status::ok();
}

bool LeaderElector::may_act(Clock::time_point now) const {
  return leader_ && now - last_renew_ < options_.renew_deadline;
}

bool LeaderElector::try_take_or_renew(Clock::time_point now, int64_t wall_us) {
  LeaseError error;
  std::optional<LeaseRecord> current = api_.get(&error);
  if (!current && !error.not_found) {
    last_error_ = "reading the lease: " + error.message;
    return false;
  }
  const int32_t duration_s = static_cast<int32_t>(
      std::chrono::duration_cast<std::chrono::seconds>(options_.lease_duration).count());
  if (!current) {
    LeaseRecord fresh{options_.identity, duration_s, wall_us, wall_us, 0, ""};
    auto created = api_.create(fresh, &error);
    if (!created) {
      last_error_ = "creating the lease: " + error.message;
      return false;
    }
    observed_ = *created;
    have_observed_ = true;
    observed_at_ = now;
    epoch_ = created->transitions;
    return true;
  }
  if (!have_observed_ || !same_record(*current, observed_)) {
    observed_ = *current;
    have_observed_ = true;
    observed_at_ = now;
  }
  const bool mine = current->holder == options_.identity;
  const bool free = current->holder.empty();
  const auto valid_for = current->lease_duration_s > 0 ? std::chrono::seconds(current->lease_duration_s)
                                                       : std::chrono::duration_cast<std::chrono::seconds>(options_.lease_duration);
  if (!mine && !free && now < observed_at_ + valid_for) {
    last_error_.clear();
    return false;  // held by someone who renewed within a lease duration, as far as we have seen
  }
  LeaseRecord next = *current;
  next.holder = options_.identity;
  next.lease_duration_s = duration_s;
  next.renew_time_us = wall_us;
  if (!mine) {
    next.acquire_time_us = wall_us;
    next.transitions = current->transitions + 1;
  }
  auto updated = api_.update(next, &error);
  if (!updated) {
    last_error_ = error.conflict ? "the lease changed under us (another replica wrote it first)"
                                 : "updating the lease: " + error.message;
    return false;
  }
  observed_ = *updated;
  observed_at_ = now;
  if (!mine) epoch_ = updated->transitions;
  last_error_.clear();
  return true;
}

Transition LeaderElector::tick(Clock::time_point now, int64_t wall_us) {
  const bool was_leader = may_act(now);
  if (try_take_or_renew(now, wall_us)) {
    leader_ = true;
    last_renew_ = now;
    return was_leader ? Transition::kNone : Transition::kBecameLeader;
  }
  if (leader_ && !may_act(now)) {
    leader_ = false;
    return Transition::kLostLeadership;
  }
  if (leader_ && observed_.holder != options_.identity && !observed_.holder.empty()) {
    // Someone else holds it now (we were deposed while partitioned): stop at once.
    leader_ = false;
    return Transition::kLostLeadership;
  }
  return Transition::kNone;
}

void LeaderElector::release(int64_t wall_us) {
  if (!leader_) return;
  leader_ = false;
  LeaseRecord next = observed_;
  if (next.holder != options_.identity) return;
  next.holder.clear();
  next.renew_time_us = wall_us;
  LeaseError error;
  if (!api_.update(next, &error)) last_error_ = "releasing the lease: " + error.message;
}

}  // namespace kai::leader
