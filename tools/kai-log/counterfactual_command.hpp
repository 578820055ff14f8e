#pragma once
// `kai-log replay --counterfactual | --config FILE | --queues FILE`: reads the files and the
// window, runs the counterfactual (counterfactual.hpp) and prints its report (counterfactual_report.hpp).

#include <ostream>
#include <string>

#include "storage/event_log.hpp"

namespace kai::kailog {

struct CounterfactualArgs {
  std::string config_path;  ///< Empty: each cycle's recorded configuration.
  std::string queues_path;  ///< Empty: the recorded queues.
  std::string from, to;     ///< RFC 3339; empty: the log's first / last cycle.
  std::string default_runtime;  ///< Go duration; empty: censored runs last to the window's end.
  std::string format = "table";  ///< table | csv | json
  bool progress = false;
};

/// Exit code: 0 when the report was printed; 2 when a file or the log cannot be read, an argument
/// does not parse, or no cycle falls in the window (the message names which).
int counterfactual_command(const storage::EventLog& log, const CounterfactualArgs& args, std::ostream& out,
                           std::ostream& err);

}  // namespace kai::kailog
