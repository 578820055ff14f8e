// kai-sim --what-if --log: a running pod's end from its owner's run times in the daemon's event log
// (docs/what-if.md "Expected completions").
#include <gtest/gtest.h>

#include "events/event.hpp"
#include "k8s/model/json_codec.hpp"
#include "k8s/model/time.hpp"
#include "storage/event_log.hpp"
#include "tests/storage/temp_dir.hpp"
#include "tests/what_if/demo_cluster.hpp"
#include "tools/kai-sim/log_input.hpp"
#include "tools/kai-sim/what_if_command.hpp"
#include "tools/kai-sim/what_if_report.hpp"

namespace kai::sim {
namespace {

using testing::demo_cluster_yaml;
using testing::running_pod;
using testing::at;
using testing::workload_pod;

/// The log's events, each stamped with its own wall clock.
class LogWriter {
 public:
  void watch(const nlohmann::json& object, events::WatchType type, int64_t at_seconds, int64_t plus_us = 0) {
    events::Event e;
    e.timestamp_us = at_seconds * 1'000'000 + plus_us;
    e.payload = events::WatchEvent{object["kind"].get<std::string>(), type, object.dump(), ""};
    events_.push_back(std::move(e));
  }
  void write(const std::string& dir) {
    auto log = storage::EventLog::open(dir);
    ASSERT_TRUE(log) << log.message();
    auto appended = log.value()->append(std::move(events_));
    ASSERT_TRUE(appended) << appended.message();
  }

 private:
  std::vector<events::Event> events_;
};

nlohmann::json one(const std::string& yaml) { return model::yaml_documents_to_json(yaml).value().at(0); }

TEST(WhatIfLog, ARunningPodEndsAfterItsOwnersMedianRunTime) {
  LogWriter log;
  const int64_t day_before = at("2027-01-14T00:00:00Z");
  const auto cluster_docs = model::yaml_documents_to_json(demo_cluster_yaml());
  ASSERT_TRUE(cluster_docs) << cluster_docs.message();
  for (const auto& doc : *cluster_docs) log.watch(doc, events::WatchType::kAdded, day_before);
  // Job "train"'s earlier pods ran 30, 80 and 40 minutes from bind to end: the median is 40 (the mean 50).
  const int runs[] = {30, 80, 40};
  for (int i = 0; i < 3; ++i) {
    nlohmann::json pod = one(running_pod("team-b", "h-" + std::to_string(i), "team-b", "gpu-node-1", 4,
                                         "2027-01-14T00:00:00Z", "", "", "train"));
    const int64_t bound = day_before + 3600 * (i + 1);
    nlohmann::json pending = pod;
    pending["spec"].erase("nodeName");
    pending["status"]["phase"] = "Pending";
    log.watch(pending, events::WatchType::kAdded, bound - 5);
    log.watch(pod, events::WatchType::kModified, bound, 250'000);
    pod["status"]["phase"] = i == 1 ? "Failed" : "Succeeded";
    log.watch(pod, events::WatchType::kModified, bound + runs[i] * 60, 250'000);
    log.watch(pod, events::WatchType::kDeleted, bound + runs[i] * 60 + 30);
  }
  // Now train's next pod holds gpu-node-1 (started 08:50) and another team-b pod gpu-node-2, with
  // no known end.
  log.watch(one(running_pod("team-b", "r-1", "team-b", "gpu-node-1", 4, "2027-01-15T08:49:00Z", "",
                            ", startTime: \"2027-01-15T08:50:00Z\"", "train")),
            events::WatchType::kAdded, at("2027-01-15T08:49:00Z"));
  log.watch(one(running_pod("team-b", "r-2", "team-b", "gpu-node-2", 4, "2027-01-15T08:00:00Z")),
            events::WatchType::kAdded, at("2027-01-15T08:00:00Z"));
  storage::testing::TempDir dir;
  log.write(dir.str());

  auto cluster = read_log_input(dir.str(), UINT64_MAX);
  ASSERT_TRUE(cluster) << cluster.message();
  core::SessionOptions options;
  options.now = at("2027-01-15T09:00:00Z");
  WhatIfRequest request;
  request.workload_path = "workload.yaml";
  request.log_dir = dir.str();
  auto in = what_if_input(request, workload_pod("next", "team-b", 4), std::move(cluster.value().objects),
                          std::move(cluster.value().records), options);
  ASSERT_TRUE(in) << in.message();
  ASSERT_EQ(in->ends.size(), 2u);
  EXPECT_EQ(in->ends[0].pod, "team-b/r-1");
  EXPECT_EQ(in->ends[0].basis, EndBasis::kOwnerHistory);
  ASSERT_TRUE(in->ends[0].at);
  EXPECT_EQ(*in->ends[0].at, at("2027-01-15T09:30:00Z"));
  EXPECT_FALSE(in->ends[1].at);

  const WhatIfAnswer a = what_if(*in);
  EXPECT_FALSE(a.first.fits);
  ASSERT_TRUE(a.earliest);
  EXPECT_EQ(a.earliest->at, at("2027-01-15T09:30:00Z"));
  EXPECT_NE(render_what_if_text(a).find("Earliest at 2027-01-15T09:30:00Z (in 30m), after team-b/r-1 finish:\n"
                                        "  default/next -> gpu-node-1 (bind)\n"),
            std::string::npos)
      << render_what_if_text(a);
}

}  // namespace
}  // namespace kai::sim
