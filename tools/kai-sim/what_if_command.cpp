#include "tools/kai-sim/what_if_command.hpp"

#include <iostream>

#include "tools/common/read_file.hpp"
#include "tools/kai-sim/run_history.hpp"
#include "tools/kai-sim/what_if_report.hpp"
#include "tools/kai-sim/what_if_workload.hpp"

namespace kai::sim {

model::Result<WhatIfInput> what_if_input(const WhatIfRequest& request, std::string_view workload_text,
                                         model::ClusterObjects cluster, events::ScheduleRecords records,
                                         const core::SessionOptions& options) {
  auto workload = read_workload(workload_text, cluster, WorkloadDefaults{options.now, options.scheduler_name});
  if (!workload) return model::Status::error(request.workload_path + ": " + workload.message());
  std::map<std::string, PodFacts> facts;
  std::map<std::string, int64_t> median_run_seconds;
  if (!request.log_dir.empty()) {
    auto history = read_run_history(request.log_dir, request.log_at);
    if (!history) return model::Status::error("--log " + request.log_dir + ": " + history.message());
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
  return in;
}

int run_what_if(const WhatIfRequest& request, model::ClusterObjects cluster, events::ScheduleRecords records,
                const core::SessionOptions& options) {
  auto text = tools::read_file(request.workload_path);
  if (!text) {
    std::cerr << request.workload_path << ": cannot be read\n";
    return 2;
  }
  auto in = what_if_input(request, *text, std::move(cluster), std::move(records), options);
  if (!in) {
    std::cerr << in.message() << "\n";
    return 2;
  }
  const WhatIfAnswer answer = what_if(*in);
  for (const auto& w : answer.warnings) std::cerr << "warning: " << w << "\n";
  std::cout << (request.json ? render_what_if_json(answer) : render_what_if_text(answer));
  return 0;
}

}  // namespace kai::sim
