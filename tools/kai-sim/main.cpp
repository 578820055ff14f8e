// kai-sim: runs ONE scheduling session on a snapshot (or the daemon's event log) and prints what it decided (docs/build-and-ci.md "kai-sim's output"); with --what-if, where and when a workload would run (docs/what-if.md).
#include <CLI/CLI.hpp>
#include <chrono>
#include <map>
#include <iostream>

#include "actors/scheduler/core/action.hpp"
#include "actors/scheduler/core/session.hpp"
#include "actors/scheduler/core/session_flags.hpp"
#include "actors/scheduler/core/simulation.hpp"
#include "k8s/model/codec.hpp"
#include "k8s/model/json_codec.hpp"
#include "k8s/model/time.hpp"
#include "tools/common/guarded_main.hpp"
#include "tools/common/huge_pages.hpp"
#include "tools/common/read_file.hpp"
#include "tools/kai-sim/log_input.hpp"
#include "tools/kai-sim/sim_report.hpp"
#include "tools/kai-sim/what_if_command.hpp"

namespace {

int fail(const std::string& file, const std::string& what) {
  std::cerr << file << ": " << what << "\n";
  return 2;
}

/// A --usage file: queue name -> resource -> usage (a share of the cluster's capacity), as KAI's usage
/// database answers it; the resources are `gpu` (or `nvidia.com/gpu`), `cpu` and `memory`.
kai::model::Result<std::map<std::string, kai::core::UsageShare>> parse_usage(const std::string& text) {
  auto j = kai::model::yaml_to_json(text);  // JSON is YAML too
  if (!j) return kai::model::Status::error("not JSON or YAML: " + j.message());
  if (!j->is_object()) return kai::model::Status::error("must map each queue to its usage, e.g. {team-a: {gpu: 0.5}}");
  std::map<std::string, kai::core::UsageShare> out;
  for (const auto& [queue, resources] : j->items()) {
    if (!resources.is_object()) return kai::model::Status::error(queue + ": must map resources to numbers");
    kai::core::UsageShare& u = out[queue];
    for (const auto& [name, value] : resources.items()) {
      if (!value.is_number() || value.get<double>() < 0) {
        return kai::model::Status::error(queue + "." + name + ": must be a number, 0 or more");
      }
      const double v = value.get<double>();
      if (name == "gpu" || name == "nvidia.com/gpu") {
        u.gpu = v;
      } else if (name == "cpu") {
        u.cpu = v;
      } else if (name == "memory") {
        u.memory = v;
      } else {
        return kai::model::Status::error(queue + "." + name + ": not gpu, cpu or memory");
      }
    }
  }
  return out;
}

}  // namespace

static int run_tool(int argc, char** argv) {
  CLI::App app{"kai-sim: run one KAI scheduling session on a cluster snapshot"};
  std::string snapshot_path, config_path, usage_path, actions, now_text, format = "json";
  uint64_t seed = 1;
  int rounds = 1;
  std::string now_step_text = "0s";
  std::string log_dir;
  std::string what_if_path;
  uint64_t at_seq = UINT64_MAX;
  auto* snapshot_opt =
      app.add_option("--snapshot", snapshot_path, "Kubernetes List (JSON or YAML) of nodes, pods, queues, ...");
  auto* log_opt = app.add_option(
      "--log", log_dir,
      "The daemon's event log directory (read-only, beside the live daemon) instead of --snapshot: its "
      "objects, records (usage history, job state, binds in flight) and configuration; --now defaults "
      "to its last cycle's clock");
  log_opt->excludes(snapshot_opt);
  app.add_option("--at", at_seq, "With --log: the state after this record (default: the log's end)")->needs(log_opt);
  app.add_option("--what-if", what_if_path,
                 "A workload (Pods and PodGroups, YAML or JSON): where and when it would run if submitted now, "
                 "without writing anything (docs/what-if.md); prints text unless --format json");
  app.add_option("--config", config_path, "KAI scheduler configuration (JSON or YAML)");
  app.add_option("--actions", actions, "Comma-separated actions, overriding the configuration's");
  app.add_option("--usage", usage_path,
                 "Each queue's historical usage (time-based fair share), YAML or JSON: {queue: {gpu: 0.5}}; "
                 "fixed for every round");
  app.add_option("--now", now_text, "The session's clock, RFC 3339 (default: the wall clock)");
  app.add_option("--seed", seed, "Seed for new GPU-group IDs")->capture_default_str();
  auto* rounds_opt = app.add_option("--rounds", rounds,
                 "Run up to N sessions, applying each one's decisions before the next (stops when stable)")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  app.add_option("--now-step", now_step_text,
                 "Advance the clock by this much each round (Go duration; with it every round runs)")
      ->capture_default_str();
  auto* format_opt = app.add_option("--format", format, "json or table (--what-if: text or json, default text)")
                         ->check(CLI::IsMember({"json", "table", "text"}))
                         ->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }

  if (snapshot_path.empty() && log_dir.empty()) return fail("kai-sim", "--snapshot or --log is required");
  if (!what_if_path.empty() && rounds_opt->count() > 0) return fail("kai-sim", "--what-if runs its own rounds: no --rounds");
  if (what_if_path.empty() && format == "text") return fail("--format", "text is --what-if's format");
  kai::model::Result<kai::model::ClusterObjects> objects = kai::model::ClusterObjects{};
  kai::events::ScheduleRecords records;
  kai::core::SessionOptions options;
  std::string snapshot_text;
  if (!log_dir.empty()) {
    auto in = kai::sim::read_log_input(log_dir, at_seq);
    if (!in) return fail("--log " + log_dir, in.message());
    std::cerr << "note: the log's state after record " << in->at_seq << "\n";
    records = std::move(in.value().records);
    if (in->has_config && config_path.empty()) {
      auto config = kai::core::parse_scheduler_config(in->config_text);
      if (!config) return fail("--log " + log_dir, "its configuration: " + config.message());
      options.config = std::move(config).value();
      if (auto flags = kai::core::apply_session_flags(in->flags, options); !flags) {
        return fail("--log " + log_dir, "its flags: " + flags.message());
      }
    }
    objects = std::move(in.value().objects);
  } else {
    auto file = kai::tools::read_file(snapshot_path, kai::model::kSnapshotInPlacePadding);
    if (!file) return fail(snapshot_path, "cannot be read");
    snapshot_text = std::move(*file);
    objects = kai::model::decode_snapshot(snapshot_text, snapshot_text.capacity() - snapshot_text.size());
    if (!objects) return fail(snapshot_path, objects.message());
    // Only --what-if reads the text again; the objects own copies of what they hold.
    if (what_if_path.empty()) std::string().swap(snapshot_text);
  }

  options.seed = seed;
  if (!config_path.empty()) {
    std::string config_text;
    auto file = kai::tools::read_file(config_path);
    if (!file) return fail(config_path, "cannot be read");
    config_text = std::move(*file);
    auto config = kai::core::parse_scheduler_config(config_text);
    if (!config) return fail(config_path, config.message());
    options.config = std::move(config).value();
  }
  if (!actions.empty()) options.config.actions = kai::core::split_actions(actions);
  std::map<std::string, kai::core::UsageShare> usage;
  if (!usage_path.empty()) {
    std::string usage_text;
    auto file = kai::tools::read_file(usage_path);
    if (!file) return fail(usage_path, "cannot be read");
    usage_text = std::move(*file);
    auto parsed = parse_usage(usage_text);
    if (!parsed) return fail(usage_path, parsed.message());
    usage = std::move(parsed).value();
    options.queue_usage = &usage;
  }
  if (!now_text.empty()) {
    auto now = kai::model::parse_rfc3339(now_text);
    if (!now) return fail("--now", now.message());
    options.now = *now;
  } else if (records.last_now_ms != 0) {
    options.now = records.last_now_ms / 1000;  // the log's last cycle: the session it would run
  } else {
    options.now =
        std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
            .count();
  }

  auto now_step = kai::model::parse_go_duration_ns(now_step_text);
  if (!now_step) return fail("--now-step", now_step.message());

  for (const auto& skipped : objects->skipped) std::cerr << "note: skipped " << skipped << "\n";
  if (!what_if_path.empty()) {
    kai::sim::WhatIfRequest request{what_if_path, std::move(snapshot_text), log_dir, at_seq,
                                    format_opt->count() > 0 && format == "json"};
    return kai::sim::run_what_if(request, std::move(objects).value(), std::move(records), options);
  }
  // The last session and its objects are left to the process's end rather than freed: freeing 150,000
  // pods, jobs and tasks one by one took about a tenth of kai-sim's run at 5,000 nodes (bench/README.md
  // "kai-sim on kai-gen's 5,000-node cluster"). Held from a static, so leak checkers count it reachable.
  static const kai::core::SimulationResult* kept_to_exit = nullptr;
  kept_to_exit = new kai::core::SimulationResult(kai::core::simulate(
      std::move(objects).value(), options, rounds, *now_step / 1'000'000'000, std::move(records)));
  const kai::core::SimulationResult& result = *kept_to_exit;
  const kai::core::Session& ssn = *result.session;
  for (const auto& w : ssn.warnings) std::cerr << "warning: " << w << "\n";
  for (const auto& a : result.skipped_actions) {
    std::cerr << "warning: action \"" << a << "\" is not available in this build and was skipped\n";
  }
  if (rounds > 1) std::cerr << "note: ran " << result.rounds << " round(s)\n";
  if (format == "table") {
    std::cout << kai::sim::render_table(ssn);
  } else {
    kai::sim::write_json(std::cout, ssn, &result.decisions);
  }
  if (!std::cout.flush()) return fail("kai-sim", "the report could not be written to standard output");
  return 0;
}

int main(int argc, char** argv) {
  kai::tools::run_with_huge_pages(argv);
  return kai::tools::guarded_main("kai-sim", [&] { return run_tool(argc, argv); });
}
