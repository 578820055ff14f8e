// Leader election against an in-memory Lease with resourceVersion preconditions, on a simulated
// clock: take-over after a crash, no overlap when the leader is cut off, conflicts, release, and a
// randomised run that checks that two replicas never may act at the same moment.

#include <gtest/gtest.h>

#include <random>

#include "actors/leader/leader_elector.hpp"

namespace kai::leader {
namespace {

using namespace std::chrono_literals;

/// The API server's Lease: one object, a resourceVersion bumped on every write.
struct LeaseStore {
  std::optional<LeaseRecord> lease;
  int64_t rv = 0;
};

/// One replica's view of the API server; `cut` simulates a network partition.
class FakeLeaseApi : public LeaseApi {
 public:
  explicit FakeLeaseApi(LeaseStore& store) : store_(store) {}
  bool cut = false;

  std::optional<LeaseRecord> get(LeaseError* e) override {
    if (cut) return fail(e);
    if (!store_.lease) {
      e->not_found = true;
      e->message = "404";
      return std::nullopt;
    }
    return store_.lease;
  }
  std::optional<LeaseRecord> create(const LeaseRecord& r, LeaseError* e) override {
    if (cut) return fail(e);
    if (store_.lease) return conflict(e, "409 AlreadyExists");
    return write(r);
  }
  std::optional<LeaseRecord> update(const LeaseRecord& r, LeaseError* e) override {
    if (cut) return fail(e);
    if (!store_.lease || store_.lease->resource_version != r.resource_version)
      return conflict(e, "409 Conflict");
    return write(r);
  }

 private:
  std::optional<LeaseRecord> fail(LeaseError* e) {
    e->message = "connection refused";
    return std::nullopt;
  }
  std::optional<LeaseRecord> conflict(LeaseError* e, const std::string& message) {
    e->conflict = true;
    e->message = message;
    return std::nullopt;
  }
  /// Stores `r` under the next resourceVersion.
  std::optional<LeaseRecord> write(const LeaseRecord& r) {
    store_.lease = r;
    store_.lease->resource_version = std::to_string(++store_.rv);
    return store_.lease;
  }
  LeaseStore& store_;
};

ElectorOptions options(const std::string& id) {
  ElectorOptions o;
  o.identity = id;
  o.lease_duration = 2000ms;  // tests use short leases (docs/build-and-ci.md "Timing in tests")
  o.renew_deadline = 1500ms;
  o.retry_period = 250ms;
  return o;
}

int64_t wall(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count() + 1'700'000'000'000'000;
}

/// Replicas a and b of one Lease, each with its own view of the API server, on a clock at 0.
struct TwoReplicas {
  LeaseStore store;
  FakeLeaseApi api_a{store}, api_b{store};
  LeaderElector a{api_a, options("a")}, b{api_b, options("b")};
  Clock::time_point t{};
};

TEST(LeaderElector, FirstCandidateCreatesTheLeaseAndRenewsIt) {
  LeaseStore store;
  FakeLeaseApi api(store);
  LeaderElector a(api, options("a"));
  Clock::time_point t{};
  EXPECT_EQ(a.tick(t, wall(t)), Transition::kBecameLeader);
  EXPECT_TRUE(a.may_act(t));
  EXPECT_EQ(store.lease->holder, "a");
  EXPECT_EQ(store.lease->lease_duration_s, 2);
  t += 250ms;
  EXPECT_EQ(a.tick(t, wall(t)), Transition::kNone);
  EXPECT_EQ(store.lease->renew_time_us, wall(t));
  EXPECT_EQ(a.epoch(), 0);
}

TEST(LeaderElector, StandbyTakesOverOneLeaseDurationAfterTheLeaderDied) {
  TwoReplicas replicas;
  auto& [store, api_a, api_b, a, b, t] = replicas;
  a.tick(t, wall(t));
  Clock::time_point died = t;  // a is SIGKILLed: it never ticks again
  for (int i = 0; i < 40; ++i) {
    t += 250ms;
    const Transition tr = b.tick(t, wall(t));
    if (tr == Transition::kBecameLeader) break;
    EXPECT_EQ(b.observed_holder(), "a");
  }
  EXPECT_TRUE(b.may_act(t));
  EXPECT_GE(t - died, 2000ms);
  EXPECT_LE(t - died, 2000ms + 2 * 250ms);
  EXPECT_EQ(b.epoch(), 1);
  EXPECT_EQ(store.lease->holder, "b");
  EXPECT_EQ(store.lease->transitions, 1);
}

TEST(LeaderElector, LeaderCutOffStopsActingBeforeAnyoneElseMayAct) {
  TwoReplicas replicas;
  auto& [store, api_a, api_b, a, b, t] = replicas;
  a.tick(t, wall(t));
  b.tick(t, wall(t));
  api_a.cut = true;
  Clock::time_point a_stopped{}, b_started{};
  for (int i = 0; i < 80; ++i) {
    t += 50ms;
    if ((i % 5) == 0) {
      if (a.tick(t, wall(t)) == Transition::kLostLeadership) a_stopped = t;
      if (b.tick(t, wall(t)) == Transition::kBecameLeader) b_started = t;
    }
    ASSERT_FALSE(a.may_act(t) && b.may_act(t)) << "overlap at step " << i;
    if (!a.may_act(t) && a_stopped == Clock::time_point{}) a_stopped = t;
  }
  ASSERT_NE(b_started, Clock::time_point{});
  EXPECT_LT(a_stopped, b_started);
  EXPECT_FALSE(a.last_error().empty());
}

TEST(LeaderElector, SimultaneousCandidatesConflictAndOnlyOneWins) {
  TwoReplicas replicas;
  auto& [store, api_a, api_b, a, b, t] = replicas;
  store.lease = LeaseRecord{"", 2, 0, 0, 3, "7"};
  store.rv = 7;
  const Transition ta = a.tick(t, wall(t));
  const Transition tb = b.tick(t, wall(t));
  EXPECT_EQ(ta, Transition::kBecameLeader);
  EXPECT_EQ(tb, Transition::kNone);  // b read the lease a just wrote: held and fresh
  EXPECT_EQ(a.epoch(), 4);
  // A write based on a stale read is refused by the resourceVersion precondition.
  LeaseRecord stale{"b", 2, 1, 1, 4, "7"};
  LeaseError e;
  EXPECT_FALSE(api_b.update(stale, &e));
  EXPECT_TRUE(e.conflict);
}

TEST(LeaderElector, ReleaseHandsOverAtOnce) {
  TwoReplicas replicas;
  auto& [store, api_a, api_b, a, b, t] = replicas;
  a.tick(t, wall(t));
  b.tick(t, wall(t));
  a.release(wall(t));
  EXPECT_FALSE(a.may_act(t));
  EXPECT_EQ(store.lease->holder, "");
  t += 250ms;
  EXPECT_EQ(b.tick(t, wall(t)), Transition::kBecameLeader);
}

TEST(LeaderElector, DeposedLeaderNoticesAtItsNextTick) {
  LeaseStore store;
  FakeLeaseApi api_a(store);
  LeaderElector a(api_a, options("a"));
  Clock::time_point t{};
  a.tick(t, wall(t));
  store.lease->holder = "intruder";  // an operator edited the lease
  store.lease->resource_version = std::to_string(++store.rv);
  t += 250ms;
  EXPECT_EQ(a.tick(t, wall(t)), Transition::kLostLeadership);
  EXPECT_FALSE(a.may_act(t));
}

TEST(LeaderElector, OptionsThatAllowOverlapAreRefused) {
  EXPECT_TRUE(LeaderElector::validate(options("a")).is_ok());
  ElectorOptions o = options("a");
  o.renew_deadline = o.lease_duration;
  EXPECT_FALSE(LeaderElector::validate(o).is_ok());
  o = options("a");
  o.retry_period = o.renew_deadline;
  EXPECT_FALSE(LeaderElector::validate(o).is_ok());
  o = options("");
  EXPECT_FALSE(LeaderElector::validate(o).is_ok());
}

TEST(LeaderElector, RandomPartitionsAndCrashesNeverGiveTwoActors) {
  std::mt19937 rng(2026);
  int takeovers = 0;
  for (int run = 0; run < 30; ++run) {
    LeaseStore store;
    std::vector<std::unique_ptr<FakeLeaseApi>> apis;
    std::vector<std::unique_ptr<LeaderElector>> electors;
    std::vector<bool> alive;
    for (int i = 0; i < 3; ++i) {
      apis.push_back(std::make_unique<FakeLeaseApi>(store));
      electors.push_back(std::make_unique<LeaderElector>(*apis.back(), options("r" + std::to_string(i))));
      alive.push_back(true);
    }
    Clock::time_point t{};
    int64_t last_epoch = -1;
    std::string last_holder;
    for (int step = 0; step < 600; ++step) {
      t += 50ms;
      const int i = static_cast<int>(rng() % 3);
      const int event = static_cast<int>(rng() % 100);
      if (event < 3) alive[i] = !alive[i];               // crash / restart
      else if (event < 8) apis[i]->cut = !apis[i]->cut;  // partition / heal
      if (alive[i] && event >= 8) {
        if (electors[i]->tick(t, wall(t)) == Transition::kBecameLeader) {
          // Every take-over by a new holder raises the epoch.
          if (store.lease->holder != last_holder) {
            ++takeovers;
            EXPECT_GT(electors[i]->epoch(), last_epoch);
            last_holder = store.lease->holder;
          }
          last_epoch = std::max<int64_t>(last_epoch, electors[i]->epoch());
        }
      }
      int acting = 0;
      for (int j = 0; j < 3; ++j) acting += alive[j] && electors[j]->may_act(t);
      ASSERT_LE(acting, 1) << "run " << run << " step " << step;
    }
  }
  EXPECT_GT(takeovers, 60) << "the random runs must exercise take-overs";
}

}  // namespace
}  // namespace kai::leader
