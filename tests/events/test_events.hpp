#pragma once
// Sample events of every kind, shared by the events and storage tests.

#include <string>
#include <vector>

#include "events/event.hpp"

namespace kai::events::testing {

inline Event decision_event(uint64_t cycle, uint64_t n, const std::string& pod = "team-a/pod-0") {
  Event e;
  e.timestamp_us = 1'700'000'000'000'000 + static_cast<int64_t>(n);
  DecisionEvent d;
  d.cycle_id = cycle;
  d.decision.seq = n;
  d.decision.action = "allocate";
  d.decision.kind = DecisionKind::kBind;
  d.decision.pod = pod;
  d.decision.pod_uid = "uid-" + std::to_string(n);
  d.decision.node = "node-" + std::to_string(n % 7);
  d.decision.gpu_groups = {"g-1", "g-2"};
  d.decision.gpu_fraction = 0.5;
  d.decision.by = "team-a/pg-0";
  d.decision.queue = "team-a";
  e.payload = d;
  return e;
}

inline std::vector<Event> one_of_each() {
  std::vector<Event> v;
  Event w;
  w.timestamp_us = -5;  // negative timestamps must survive (zigzag)
  w.payload = WatchEvent{"Pod", WatchType::kModified, R"({"metadata":{"name":"p"}})", "12345"};
  v.push_back(w);
  v.push_back(decision_event(3, 9));
  Event u;
  u.payload = UnschedulableEvent{4, "ns/pg", "q1", {{"OverLimit", "queue q1 is over its limit"}, {"X", ""}},
                                 {{"ns/p-0", "uid-0"}, {"ns/p-1", "uid-1"}}};
  v.push_back(u);
  Event cs;
  cs.payload = CycleStart{5, 0xdeadbeefcafeULL, 77, 1'700'000'000, 42, "other-scheduler", 3, 1'700'000'000'250};
  v.push_back(cs);
  Event ce;
  ce.payload = CycleEnd{5, 1234, {{"allocate", 1000}, {"reclaim", 234}}};
  v.push_back(ce);
  Event b;
  b.payload = BinderOutcome{2, "ns/p", Outcome::kBindFailed, "node gone"};
  v.push_back(b);
  Event l;
  l.payload = LeadershipChange{3, "replica-0", true};
  v.push_back(l);
  Event c;
  c.payload = ConfigChange{config_hash("actions: allocate\n", 1, "stale-grace-seconds=60"), "actions: allocate\n", 1,
                           "stale-grace-seconds=60"};
  v.push_back(c);
  Event j;
  j.payload = JobStateChange{6, "uid-pg", "ns/pg", JobField::kStaleSince, -7, 1'700'000'000, JobStateSource::kDecided};
  v.push_back(j);
  Event forget;
  forget.payload = JobStateChange{6, "uid-gone", "ns/gone", JobField::kLastStart, std::nullopt, std::nullopt,
                                  JobStateSource::kForget};
  v.push_back(forget);
  Event settled;
  settled.payload = AssumedSettled{6, {17, uint64_t{1} << 40}};
  v.push_back(settled);
  Event cancelled;
  cancelled.payload = BinderOutcome{3, "ns/q", Outcome::kCancelled, "not started before its deadline"};
  v.push_back(cancelled);
  Event allocation;
  allocation.payload = AllocationChange{7,
                                        {{"team-a", {1'700'000'000'250, 16, 64000, 2.5e11}}, {"team-b", {1'700'000'000'250}}},
                                        AllocationStep{1'700'000'000'250, 16, 128000, 5e11},
                                        1'699'999'980'000,
                                        1'699'999'400'000};
  v.push_back(allocation);
  return v;
}

}  // namespace kai::events::testing
