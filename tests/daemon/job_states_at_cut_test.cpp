// The job states /get-snapshot serves (actors/daemon/job_states_at_cut.hpp): each take equals the
// records' job states, and a table a reader holds never changes.
#include "actors/daemon/job_states_at_cut.hpp"

#include <gtest/gtest.h>

#include <random>

#include "events/projection.hpp"

namespace kai::daemon {
namespace {

void change(events::ScheduleRecords& records, const std::string& uid, std::optional<int64_t> value,
            bool forget) {
  static uint64_t seq = 0;
  events::JobStateChange c{1,
                           uid,
                           "ns/" + uid,
                           events::JobField::kLastStart,
                           value,
                           std::nullopt,
                           forget ? events::JobStateSource::kForget : events::JobStateSource::kDecided};
  ASSERT_TRUE(events::apply_record(records, events::Event{++seq, 0, events::kSchemaVersion, c}));
}

TEST(JobStatesAtCut, EachTakeIsTheRecordsJobStatesAndAHeldTableNeverChanges) {
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    std::mt19937 rng(seed);
    events::ScheduleRecords records;
    JobStatesAtCut at_cut;
    std::vector<std::pair<std::shared_ptr<const JobStatesAtCut::Table>, JobStatesAtCut::Table>> held;
    for (int step = 0; step < 60; ++step) {
      const int changes = static_cast<int>(rng() % 4);
      for (int c = 0; c < changes; ++c) {
        const std::string uid = "u" + std::to_string(rng() % 10);
        change(records, uid, 1000 + static_cast<int64_t>(rng() % 50), rng() % 4 == 0);
      }
      auto table = at_cut.take(records);
      ASSERT_EQ(*table, records.job_states) << "seed " << seed << " step " << step;
      // A reader (a snapshot request) keeps some tables a while.
      if (rng() % 3 == 0) held.emplace_back(table, *table);
      if (!held.empty() && rng() % 4 == 0) held.erase(held.begin());
      for (const auto& [kept, content] : held)
        ASSERT_EQ(*kept, content) << "seed " << seed << " step " << step;
    }
  }
}

TEST(JobStatesAtCut, AnotherCopyOfTheRecordsIsTakenWhole) {
  events::ScheduleRecords records;
  change(records, "a", 1, false);
  JobStatesAtCut at_cut;
  at_cut.take(records);
  at_cut.take(records);
  events::ScheduleRecords other = records;  // another log: its changes are not the first one's
  change(other, "b", 2, false);
  EXPECT_EQ(*at_cut.take(other), other.job_states);
  EXPECT_EQ(*at_cut.take(other), other.job_states);
}

}  // namespace
}  // namespace kai::daemon
