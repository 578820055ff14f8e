#include "tools/kai-log/usage_report.hpp"

#include <algorithm>
#include <climits>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "actors/scheduler/core/scheduler_config.hpp"
#include "actors/scheduler/core/usage_history.hpp"
#include "events/projection.hpp"
#include "k8s/model/time.hpp"
#include "storage/restore.hpp"

namespace kai::kailog {
namespace {

using nlohmann::ordered_json;

ordered_json amounts(double gpu, double cpu, double memory) {
  return ordered_json{{"gpu", gpu}, {"cpu", cpu}, {"memory", memory}};
}

/// What a queue held at `at_ms` by the history's steps (before its first step: nothing).
events::AllocationStep held_at(const std::vector<events::AllocationStep>& steps, int64_t at_ms) {
  // As the usage: a step logged at the evaluation time is not known yet.
  const auto known = std::lower_bound(steps.begin(), steps.end(), at_ms,
                                      [](const events::AllocationStep& s, int64_t t) { return s.at_ms < t; });
  return known == steps.begin() ? events::AllocationStep{} : *std::prev(known);
}

class Reporter {
 public:
  Reporter(const storage::EventLog& log, const UsageReportOptions& options, std::ostream& out, std::ostream& err)
      : log_(log), options_(options), out_(out), err_(err) {}

  void on_event(const events::Event& e) {
    if (const auto* c = std::get_if<events::CycleStart>(&e.payload)) report(*c);
    (void)events::apply_record(records_, e);
  }
  events::ScheduleRecords& records() { return records_; }
  int lines() const { return lines_; }

 private:
  /// The usage parameters of configuration `hash` (none when off or unreadable).
  const std::optional<core::UsageParams>& params_of(uint64_t hash) {
    auto it = params_.find(hash);
    if (it != params_.end()) return it->second;
    std::optional<core::UsageParams> params;
    // Every configuration body stays in the log's meta by its hash, whatever retention deleted.
    auto body = log_.get_meta("config/" + std::to_string(hash));
    if (body) {
      auto config = core::parse_scheduler_config(*body);
      if (config && config->usage_db) params = config->usage_db->params;
      if (!config) err_ << "kai-log: configuration " << hash << ": " << config.message() << "\n";
    }
    return params_.emplace(hash, params).first->second;
  }

  void report(const events::CycleStart& c) {
    const auto& params = params_of(c.config_hash);
    if (!params) return;
    const int64_t now_ms = c.now_ms != 0 ? c.now_ms : c.now * 1000;
    const int64_t at = core::usage_evaluation_time(*params, now_ms);
    if (at == last_at_ || at < options_.since_ms) return;
    last_at_ = at;
    const auto usage = core::cycle_usage(records_.usage_history, *params, now_ms, &memo_);
    for (const auto& [queue, u] : usage) {
      if (!options_.queue.empty() && queue != options_.queue) continue;
      const auto held = held_at(records_.usage_history.queues[queue], at);
      ordered_json line;
      line["at"] = model::format_rfc3339(at / 1000);
      line["queue"] = queue;
      line["usage"] = amounts(u.gpu, u.cpu, u.memory);
      line["allocated"] = amounts(held.gpu, held.cpu, held.memory);
      line["cycle"] = c.cycle_id;
      out_ << line.dump() << "\n";
      ++lines_;
    }
  }

  const storage::EventLog& log_;
  const UsageReportOptions& options_;
  std::ostream& out_;
  std::ostream& err_;
  events::ScheduleRecords records_;
  std::map<uint64_t, std::optional<core::UsageParams>> params_;
  core::UsageMemo memo_;
  int64_t last_at_ = INT64_MIN;
  int lines_ = 0;
};

}  // namespace

int report_usage(const storage::EventLog& log, const UsageReportOptions& options, std::ostream& out,
                 std::ostream& err) {
  Reporter reporter(log, options, out, err);
  uint64_t first = 0;
  auto st = log.read(1, UINT64_MAX, [&](uint64_t seq, const model::Result<events::Event>&) {
    first = seq;
    return false;
  });
  if (!st) return err << "kai-log: " << st.message() << "\n", 2;
  if (first > 1) {  // retention trimmed the log: the history up to there is in a snapshot
    auto restored = storage::restore_state(log, first - 1);
    if (!restored) return err << "kai-log: " << restored.message() << "\n", 2;
    reporter.records() = std::move(restored.value().state.records);
  }
  uint64_t damaged = 0;
  st = log.read(first == 0 ? 1 : first, UINT64_MAX, [&](uint64_t seq, const model::Result<events::Event>& e) {
    if (!e) {
      if (damaged++ == 0) err << "kai-log: record " << seq << ": " << e.message() << " (skipped)\n";
      return true;
    }
    reporter.on_event(*e);
    return true;
  });
  if (!st) return err << "kai-log: " << st.message() << "\n", 2;
  if (reporter.lines() == 0) {
    out << "no usage recorded" << (options.queue.empty() ? "" : " for queue " + options.queue)
        << " (usageDBConfig was never on, or no cycle ran)\n";
  }
  return 0;
}

}  // namespace kai::kailog
