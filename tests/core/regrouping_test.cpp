// regroup_pods (actors/scheduler/core/regrouping.hpp): the grouping made from the last one, deciding
// only the pods added or replaced, equals group_pods of the new objects after every step of random
// changes; when it cannot go on it changes nothing; the groups it takes are the last ones with their
// pods renumbered; and the memo then holds entries only of the new objects' pods.
#include "actors/scheduler/core/regrouping.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "actors/scheduler/core/grouping.hpp"
#include "actors/scheduler/core/grouping_memo.hpp"
#include "tests/core/grouping_world.hpp"

namespace kai::core {
namespace {

using grouping_world::cut_of;
using grouping_world::expect_same;
using grouping_world::Mutator;
using grouping_world::World;

/// The pod objects of each group, in order: what a taken group must keep.
std::vector<const model::Pod*> pod_objects(const PodGroupAssignment& g, const model::ObjectRefs& objects) {
  std::vector<const model::Pod*> out;
  for (uint32_t p : g.pods) out.push_back(objects.pods[p]);
  return out;
}

class RegroupingSteps : public ::testing::TestWithParam<uint64_t> {};

TEST_P(RegroupingSteps, EachRegroupingEqualsAFullGroupingOfTheNewObjects) {
  World w;
  Mutator m(GetParam());
  m.seed(w);
  GroupingMemo memo;
  auto cut = cut_of(w);
  memo.hold(cut);
  std::vector<PodGroupAssignment> last = group_pods(cut->refs, "kai-scheduler", "default-queue", {}, &memo);
  int continued = 0, taken = 0;
  for (int step = 0; step < 150; ++step) {
    const std::string where = "seed " + std::to_string(GetParam()) + ", step " + std::to_string(step);
    m.step(w);
    const auto next = cut_of(w);
    memo.hold(next);
    const std::vector<PodGroupAssignment> expected =
        group_pods(next->refs, "kai-scheduler", "default-queue", {});
    std::vector<std::vector<const model::Pod*>> last_pods;
    last_pods.reserve(last.size());
    for (const auto& g : last) last_pods.push_back(pod_objects(g, cut->refs));
    std::vector<PodGroupAssignment> before = last;
    std::optional<Regrouping> r =
        regroup_pods(last, cut->refs, next->refs, "kai-scheduler", "default-queue", {}, memo);
    if (r) {
      ++continued;
      expect_same(r->groups, expected, where);
      ASSERT_EQ(r->kept_from.size(), r->groups.size()) << where;
      int32_t previous = -1;
      for (size_t i = 0; i < r->groups.size(); ++i) {
        const int32_t j = r->kept_from[i];
        if (j < 0) continue;
        ++taken;
        ASSERT_GT(j, previous) << where << ": the groups taken keep their order";
        previous = j;
        EXPECT_EQ(pod_objects(r->groups[i], next->refs), last_pods[static_cast<size_t>(j)])
            << where << ": a group taken keeps its pods";
        EXPECT_EQ(r->groups[i].name, before[static_cast<size_t>(j)].name) << where;
      }
      last = std::move(r->groups);
    } else {
      expect_same(last, before, where + " (not regrouped: nothing changes)");
      last = group_pods(next->refs, "kai-scheduler", "default-queue", {}, &memo);
    }
    if (HasFatalFailure() || HasNonfatalFailure()) return;
    // The memo's entries are of the new objects only: the old ones may be freed now.
    const std::set<const model::Pod*> alive(next->refs.pods.begin(), next->refs.pods.end());
    for (const model::Pod* p : memo.pods())
      ASSERT_TRUE(alive.count(p)) << where << ": an entry of a pod gone";
    cut = next;
  }
  EXPECT_GT(continued, 40) << "most steps should be regrouped";
  EXPECT_GT(taken, 1000) << "most groups should be taken as they were";
}

INSTANTIATE_TEST_SUITE_P(Seeds, RegroupingSteps, ::testing::Range<uint64_t>(1, 41));

TEST(Regrouping, AMemoThatDidNotGroupTheLastObjectsCannotGoOn) {
  World w;
  Mutator m(5);
  m.seed(w);
  GroupingMemo memo;
  const auto cut = cut_of(w);
  // Grouped without the memo: the memo knows nothing of these groups.
  std::vector<PodGroupAssignment> last = group_pods(cut->refs, "kai-scheduler", "default-queue", {});
  const auto next = cut_of(w);
  memo.hold(next);
  EXPECT_FALSE(
      regroup_pods(last, cut->refs, next->refs, "kai-scheduler", "default-queue", {}, memo).has_value());
}

}  // namespace
}  // namespace kai::core
