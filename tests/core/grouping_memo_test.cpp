// GroupingMemo (actors/scheduler/core/grouping_memo.hpp): group_pods with the memo kept between
// groupings returns exactly what it returns without one, after every step of random changes to the
// pods, their owners, the PodGroups and the priority classes; and it does reuse specs, so that the
// equality is not vacuous.
#include "actors/scheduler/core/grouping_memo.hpp"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "actors/scheduler/core/grouping.hpp"
#include "k8s/model/well_known_names.hpp"
#include "tests/core/grouping_world.hpp"

namespace kai::core {
namespace {

using grouping_world::Cut;
using grouping_world::cut_of;
using grouping_world::expect_same;
using grouping_world::Mutator;
using grouping_world::World;

class GroupingMemoSteps : public ::testing::TestWithParam<uint64_t> {};

TEST_P(GroupingMemoSteps, WithTheMemoEveryGroupingEqualsOneWithout) {
  World w;
  Mutator m(GetParam());
  m.seed(w);
  GroupingMemo memo;
  size_t reused = 0;
  for (int step = 0; step < 120; ++step) {
    const auto cut = cut_of(w);
    memo.hold(cut);
    const auto with = group_pods(cut->refs, "kai-scheduler", "default-queue", {}, &memo);
    const auto without = group_pods(cut->refs, "kai-scheduler", "default-queue", {});
    expect_same(with, without, "seed " + std::to_string(GetParam()) + ", step " + std::to_string(step));
    if (HasFatalFailure() || HasNonfatalFailure()) return;
    reused += memo.reused();
    m.step(w);
  }
  EXPECT_GT(reused, 1000u) << "the memo should serve most pods of most steps";
}

INSTANTIATE_TEST_SUITE_P(Seeds, GroupingMemoSteps, ::testing::Range<uint64_t>(1, 41));

// kai-sim computes no PodGroup writes, so its grouper skips the PodGroups' labels and annotations
// (GrouperFlags::pod_group_metadata): everything else it decides is the same.
TEST_P(GroupingMemoSteps, WithoutThePodGroupMetadataOnlyTheLabelsAndAnnotationsAreLeftOut) {
  World w;
  Mutator m(GetParam());
  m.seed(w);
  GrouperFlags no_metadata;
  no_metadata.pod_group_metadata = false;
  for (int step = 0; step < 20; ++step) {
    const auto cut = cut_of(w);
    auto full = group_pods(cut->refs, "kai-scheduler", "default-queue", {});
    const auto lean = group_pods(cut->refs, "kai-scheduler", "default-queue", no_metadata);
    bool any_metadata = false;
    for (auto& a : full) {
      if (!a.spec) continue;
      any_metadata = any_metadata || !a.spec->annotations.empty();
      auto stripped = std::make_shared<GroupSpec>(*a.spec);
      stripped->labels.clear();
      stripped->annotations.clear();
      a.spec = std::move(stripped);
    }
    EXPECT_TRUE(any_metadata || full.empty())
        << "every grouped pod's group has kai.scheduler/top-owner-metadata";
    expect_same(full, lean, "seed " + std::to_string(GetParam()) + ", step " + std::to_string(step));
    if (HasFatalFailure() || HasNonfatalFailure()) return;
    m.step(w);
  }
}

TEST(GroupingMemo, AGroupingWithoutHeldObjectsNeitherReadsNorKeeps) {
  World w;
  Mutator m(7);
  m.seed(w);
  GroupingMemo memo;
  const auto cut = cut_of(w);
  memo.hold(cut);
  (void)group_pods(cut->refs, "kai-scheduler", "default-queue", {}, &memo);
  EXPECT_GT(memo.size(), 0u);
  // The next grouping hands over no owner: the memo cannot know its entries' objects are alive.
  (void)group_pods(cut->refs, "kai-scheduler", "default-queue", {}, &memo);
  EXPECT_EQ(memo.reused(), 0u);
  EXPECT_EQ(memo.size(), 0u);
}

TEST(GroupingMemo, AnUnchangedClusterIsGroupedFromTheMemo) {
  World w;
  Mutator m(3);
  m.seed(w);
  GroupingMemo memo;
  auto cut = cut_of(w);
  memo.hold(cut);
  (void)group_pods(cut->refs, "kai-scheduler", "default-queue", {}, &memo);
  const size_t kept = memo.size();
  cut = cut_of(w);
  memo.hold(cut);
  (void)group_pods(cut->refs, "kai-scheduler", "default-queue", {}, &memo);
  EXPECT_EQ(memo.reused(), kept);
}

}  // namespace
}  // namespace kai::core
