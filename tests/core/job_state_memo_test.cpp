// The job state kept between cycles (actors/scheduler/core/job_state_memo.hpp): what it resolves,
// and that resolving only what changed gives what resolving every group gives.
#include "actors/scheduler/core/job_state_memo.hpp"

#include <gtest/gtest.h>

#include <deque>
#include <random>
#include <set>

#include "events/projection.hpp"
#include "k8s/model/time.hpp"

namespace kai::core {
namespace {

using events::JobField;
using events::JobStateChange;
using events::JobStateSource;

constexpr int64_t kT = 1'700'000'000;

/// PodGroups that live as long as the test, as a cut's objects do while the memo holds them.
struct PodGroups {
  std::deque<model::PodGroup> objects;
  std::vector<const model::PodGroup*> cut;
  const model::PodGroup* make(const std::string& uid, std::optional<int64_t> last_start) {
    model::PodGroup& pg = objects.emplace_back();
    pg.meta.namespace_ = "ns";
    pg.meta.name = "pg-" + uid;
    pg.meta.uid = uid;
    if (last_start)
      pg.meta.annotations[events::job_field_annotation(JobField::kLastStart)] =
          model::format_rfc3339(*last_start);
    return &pg;
  }
};

void apply(events::ScheduleRecords& records, const JobStateChange& c) {
  static uint64_t seq = 0;
  ASSERT_TRUE(events::apply_record(records, events::Event{++seq, 0, events::kSchemaVersion, c}));
}

JobStateChange decided(const std::string& uid, int64_t value, std::optional<int64_t> seen = std::nullopt) {
  return JobStateChange{1, uid, "ns/pg-" + uid, JobField::kLastStart, value, seen, JobStateSource::kDecided};
}

TEST(JobStateMemo, APodGroupShowingAnotherValueHasItAdoptedAndAskedForOnce) {
  events::ScheduleRecords records;
  apply(records, decided("a", kT));
  apply(records, decided("b", kT));
  PodGroups pgs;
  pgs.cut = {pgs.make("a", kT), pgs.make("b", kT + 7)};  // b: someone else wrote kT + 7
  JobStateMemo memo;
  std::vector<JobStateChange> changes;
  memo.update(&records, pgs.cut, 2, changes);
  EXPECT_TRUE(memo.resolved_all());
  EXPECT_EQ(memo.times().at("a").last_start, kT);
  EXPECT_EQ(memo.times().at("b").last_start, kT + 7);
  // a shows the records' value, so the value it showed before is no longer expected (caught up);
  // b shows one nobody expected (adopted).
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_EQ(changes[0].group_uid, "a");
  EXPECT_EQ(changes[0].value, kT);
  EXPECT_EQ(changes[1].group_uid, "b");
  EXPECT_EQ(changes[1].value, kT + 7);
  for (const auto& c : changes) EXPECT_EQ(c.source, JobStateSource::kWatched);
  memo.note_asked(changes);
  memo.hold(pgs.cut);
  // Both logged: the next cycle reads a and b again and asks nothing; another change to a only
  // is then the only group read.
  for (const auto& c : changes) apply(records, c);
  changes.clear();
  memo.update(&records, pgs.cut, 3, changes);
  EXPECT_FALSE(memo.resolved_all());
  EXPECT_EQ(memo.changed(), (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(changes.empty());
  EXPECT_EQ(memo.times().at("b").last_start, kT + 7);
  memo.note_asked(changes);
  memo.hold(pgs.cut);
  apply(records, decided("a", kT + 1, kT));
  memo.update(&records, pgs.cut, 4, changes);
  EXPECT_EQ(memo.changed(), std::vector<std::string>{"a"});
  EXPECT_TRUE(changes.empty()) << "a's PodGroup shows the value seen when it was decided";
  EXPECT_EQ(memo.times().at("a").last_start, kT + 1);
}

TEST(JobStateMemo, AChangeAskedForButNotLoggedIsAskedForAgain) {
  events::ScheduleRecords records;
  apply(records, decided("a", kT));
  PodGroups pgs;
  pgs.cut = {pgs.make("a", kT + 3)};
  JobStateMemo memo;
  std::vector<JobStateChange> changes;
  memo.update(&records, pgs.cut, 2, changes);
  ASSERT_EQ(changes.size(), 1u);
  memo.note_asked(changes);
  memo.hold(pgs.cut);
  changes.clear();
  memo.update(&records, pgs.cut, 3, changes);  // the records did not change: the last cycle's were lost
  EXPECT_FALSE(memo.resolved_all());
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].value, kT + 3);
}

TEST(JobStateMemo, EveryGroupIsResolvedWhenTheObjectsWereNotHeldOrTheRecordsAreAnotherCopy) {
  events::ScheduleRecords records;
  apply(records, decided("a", kT));
  PodGroups pgs;
  pgs.cut = {pgs.make("a", kT)};
  JobStateMemo memo;
  std::vector<JobStateChange> changes;
  memo.update(&records, pgs.cut, 2, changes);
  memo.update(&records, pgs.cut, 3, changes);  // not held
  EXPECT_TRUE(memo.resolved_all());
  memo.hold(pgs.cut);
  const events::ScheduleRecords copy = records;
  memo.update(&copy, pgs.cut, 4, changes);
  EXPECT_TRUE(memo.resolved_all());
  memo.hold(pgs.cut);
  memo.update(&copy, pgs.cut, 5, changes);
  EXPECT_FALSE(memo.resolved_all());
  EXPECT_TRUE(memo.changed().empty());
  EXPECT_EQ(memo.generation(), 4u);
}

// Random records and PodGroup changes (annotations, PodGroups coming and going), the objects held or
// not: after every update the kept job
// state, the PodGroups by uid and the records asked for are a fresh resolution's, and every group
// whose job state moved is listed as changed.
TEST(JobStateMemo, ResolvingWhatChangedEqualsResolvingEveryGroup) {
  for (uint32_t seed = 1; seed <= 40; ++seed) {
    std::mt19937 rng(seed);
    auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<uint32_t>(n)); };
    events::ScheduleRecords records;
    PodGroups pgs;
    std::vector<std::string> uids;
    for (int i = 0; i < 12; ++i) uids.push_back("u" + std::to_string(i));
    for (int i = 0; i < 8; ++i) pgs.cut.push_back(pgs.make(uids[static_cast<size_t>(i)], std::nullopt));
    JobStateMemo memo;
    JobTimesByUid before;
    for (uint64_t cycle = 1; cycle <= 30; ++cycle) {
      const int steps = pick(4);
      for (int s = 0; s < steps; ++s) {
        const std::string& uid = uids[static_cast<size_t>(pick(12))];
        switch (pick(6)) {
          case 0:
            apply(records, decided(uid, kT + pick(5)));
            break;
          case 1:
            apply(records, JobStateChange{cycle, uid, "ns/pg-" + uid, JobField::kLastStart, std::nullopt,
                                          std::nullopt, JobStateSource::kForget});
            break;
          case 2: {  // a PodGroup's annotation changes: a new object at its position
            const size_t k = static_cast<size_t>(pick(static_cast<int>(pgs.cut.size())));
            const int shown = pick(7);
            pgs.cut[k] =
                pgs.make(pgs.cut[k]->meta.uid, shown < 5 ? std::optional<int64_t>(kT + shown) : std::nullopt);
            break;
          }
          case 3: {  // a PodGroup comes, anywhere in the list (its uid may be another's: both resolve all)
            const size_t k = static_cast<size_t>(pick(static_cast<int>(pgs.cut.size()) + 1));
            const int shown = pick(7);
            pgs.cut.insert(pgs.cut.begin() + static_cast<std::ptrdiff_t>(k),
                           pgs.make(uid, shown < 5 ? std::optional<int64_t>(kT + shown) : std::nullopt));
            break;
          }
          case 4: {  // a PodGroup goes
            if (pgs.cut.empty()) break;
            const size_t k = static_cast<size_t>(pick(static_cast<int>(pgs.cut.size())));
            pgs.cut.erase(pgs.cut.begin() + static_cast<std::ptrdiff_t>(k));
            break;
          }
          default:
            break;
        }
      }
      std::vector<JobStateChange> changes, fresh_changes;
      memo.update(&records, pgs.cut, cycle, changes);
      JobStateMemo fresh;
      fresh.update(&records, pgs.cut, cycle, fresh_changes);
      ASSERT_EQ(memo.times(), fresh.times()) << "seed " << seed << " cycle " << cycle;
      ASSERT_EQ(changes, fresh_changes) << "seed " << seed << " cycle " << cycle;
      ASSERT_EQ(memo.pod_groups(), fresh.pod_groups()) << "seed " << seed << " cycle " << cycle;
      if (!memo.resolved_all()) {
        const std::set<std::string> listed(memo.changed().begin(), memo.changed().end());
        for (const auto& [uid, t] : fresh.times()) {
          auto it = before.find(uid);
          if (it == before.end() || !(it->second == t)) {
            EXPECT_TRUE(listed.count(uid)) << uid << " moved unlisted";
          }
        }
        for (const auto& [uid, t] : before) {
          if (!fresh.times().contains(uid)) {
            EXPECT_TRUE(listed.count(uid)) << uid << " went unlisted";
          }
        }
      }
      before = memo.times();
      memo.note_asked(changes);
      // Most cycles' records are logged and their objects held; some are lost, some not held.
      if (pick(5) != 0) {
        for (const auto& c : changes) apply(records, c);
      }
      if (pick(6) != 0) memo.hold(pgs.cut);
    }
  }
}

}  // namespace
}  // namespace kai::core
