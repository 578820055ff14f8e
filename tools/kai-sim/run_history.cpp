#include "tools/kai-sim/run_history.hpp"

#include <algorithm>
#include <optional>
#include <vector>

#include "events/event.hpp"
#include "storage/event_log.hpp"

namespace kai::sim {
namespace {

/// One pod's run as the log saw it (by uid: a pod recreated under its name is another run).
struct Run {
  std::string owner_uid;
  std::optional<int64_t> bound_us;     ///< First event showing it on a node.
  std::optional<int64_t> finished_us;  ///< First event showing it Succeeded or Failed.
};

int64_t median_seconds(std::vector<int64_t> us) {
  std::sort(us.begin(), us.end());
  const size_t mid = us.size() / 2;
  const int64_t median = us.size() % 2 == 1 ? us[mid] : (us[mid - 1] + us[mid]) / 2;
  return (median + 500'000) / 1'000'000;
}

}  // namespace

model::Result<RunHistory> read_run_history(const std::string& dir, uint64_t at) {
  storage::EventLogOptions options;
  options.read_only = true;  // beside the live writer: never a write
  auto log = storage::EventLog::open(dir, options);
  if (!log) return model::Status::error("event log " + dir + ": " + log.message());
  RunHistory history;
  std::map<std::string, Run> runs;  // by uid
  const auto on_event = [&](uint64_t /*seq*/, const model::Result<events::Event>& event) {
    if (!event) return true;  // a damaged record: restore_state reports it; the history goes on
    const auto* watch = std::get_if<events::WatchEvent>(&event->payload);
    if (watch == nullptr || watch->kind != "Pod" || watch->type == events::WatchType::kBookmark) return true;
    for_each_pod(watch->object_json, /*all_pods=*/true, [&](const PodFacts& pod) {
      if (watch->type != events::WatchType::kDeleted) history.pods[pod.key] = pod;
      if (pod.uid.empty()) return;
      Run& run = runs[pod.uid];
      if (run.owner_uid.empty()) run.owner_uid = pod.owner_uid;
      if (!run.bound_us && !pod.node_name.empty()) run.bound_us = event->timestamp_us;
      if (!run.finished_us && (pod.phase == "Succeeded" || pod.phase == "Failed")) {
        run.finished_us = event->timestamp_us;
      }
    });
    return true;
  };
  if (auto s = log.value()->read(log.value()->retained_from(), at, on_event); !s) {
    return model::Status::error("event log " + dir + ": " + s.message());
  }
  std::map<std::string, std::vector<int64_t>> by_owner;
  for (const auto& [uid, run] : runs) {
    if (run.owner_uid.empty() || !run.bound_us || !run.finished_us || *run.finished_us < *run.bound_us) continue;
    by_owner[run.owner_uid].push_back(*run.finished_us - *run.bound_us);
  }
  for (auto& [owner, durations] : by_owner) history.median_run_seconds[owner] = median_seconds(std::move(durations));
  return history;
}

}  // namespace kai::sim
