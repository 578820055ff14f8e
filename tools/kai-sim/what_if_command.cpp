#include "tools/kai-sim/what_if_command.hpp"

#include <fstream>
#include <iostream>
#include <sstream>

#include "tools/kai-sim/run_history.hpp"
#include "tools/kai-sim/what_if.hpp"
#include "tools/kai-sim/what_if_report.hpp"
#include "tools/kai-sim/what_if_workload.hpp"

namespace kai::sim {

int run_what_if(const WhatIfRequest& request, model::ClusterObjects cluster, events::ScheduleRecords records,
                const core::SessionOptions& options) {
  const auto fail = [](const std::string& file, const std::string& what) {
    std::cerr << file << ": " << what << "\n";
    return 2;
  };
  std::ifstream file(request.workload_path, std::ios::binary);
  if (!file) return fail(request.workload_path, "cannot be read");
  std::ostringstream text;
  text << file.rdbuf();
  auto workload = read_workload(text.str(), cluster, WorkloadDefaults{options.now, options.scheduler_name});
  if (!workload) return fail(request.workload_path, workload.message());

  std::map<std::string, PodFacts> facts;
  std::map<std::string, int64_t> median_run_seconds;
  if (!request.log_dir.empty()) {
    auto history = read_run_history(request.log_dir, request.log_at);
    if (!history) return fail("--log " + request.log_dir, history.message());
    facts = std::move(history.value().pods);
    median_run_seconds = std::move(history.value().median_run_seconds);
  } else {
    for_each_pod(request.snapshot_text, /*all_pods=*/false, [&](const PodFacts& p) { facts[p.key] = p; });
  }

  WhatIfInput in;
  in.ends = expected_ends(cluster, facts, median_run_seconds);
  in.cluster = std::move(cluster);
  in.workload = std::move(workload).value();
  in.records = std::move(records);
  in.options = options;
  const WhatIfAnswer answer = what_if(in);
  for (const auto& w : answer.warnings) std::cerr << "warning: " << w << "\n";
  std::cout << (request.json ? render_what_if_json(answer) : render_what_if_text(answer));
  return 0;
}

}  // namespace kai::sim
