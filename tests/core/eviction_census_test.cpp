// The eviction actions' job census (actions/eviction_common.hpp) is kept while ssn.decisions does not
// change: after every action, on random clusters, the kept census equals one taken afresh.

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "actors/scheduler/core/action.hpp"
#include "actors/scheduler/core/actions/eviction_common.hpp"
#include "actors/scheduler/core/scheduler_config.hpp"
#include "actors/scheduler/core/session.hpp"
#include "tools/kai-gen/generator.hpp"

namespace {

using namespace kai::core;

bool same_census(const JobCensus& a, const JobCensus& b) {
  return a.ready_pending == b.ready_pending && a.running_preemptible == b.running_preemptible &&
         a.lowest_victim_priority == b.lowest_victim_priority;
}

TEST(EvictionCensus, KeptUntilACommitEqualsOneTakenAfreshAfterEveryAction) {
  size_t decided = 0, pending_seen = 0, victims_seen = 0;
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    kai::gen::ClusterSpec spec = kai::gen::ClusterSpec::scaled(0.004);
    spec.seed = seed;
    spec.pending_groups = 16;
    const auto objects = kai::gen::generate(spec);
    SessionOptions options;
    options.config.actions = SchedulerConfig::defaults().actions;
    options.now = 1767225600;
    Session ssn(objects, options);
    for (const std::string& action : options.config.actions) {
      (void)job_census(
          ssn);  // kept from here: a change the action makes without a decision would stay unseen
      run_actions(ssn, {action});
      const JobCensus kept = job_census(ssn);
      ssn.eviction_cache.reset();
      const JobCensus& fresh = job_census(ssn);
      EXPECT_TRUE(same_census(kept, fresh)) << "seed " << seed << ", after " << action;
      pending_seen += fresh.ready_pending.size();
      for (const auto& q : fresh.running_preemptible) victims_seen += q.size();
    }
    decided += ssn.decisions.size();
  }
  // The clusters exercise the census: pending jobs, possible victims, and commits that change both.
  EXPECT_GT(decided, 0U);
  EXPECT_GT(pending_seen, 0U);
  EXPECT_GT(victims_seen, 0U);
}

}  // namespace
