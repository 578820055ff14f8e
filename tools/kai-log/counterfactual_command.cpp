#include "tools/kai-log/counterfactual_command.hpp"

#include <unistd.h>

#include <optional>
#include <tuple>

#include "k8s/model/codec.hpp"
#include "k8s/model/time.hpp"
#include "tools/common/read_file.hpp"
#include "tools/kai-log/counterfactual.hpp"
#include "tools/kai-log/counterfactual_report.hpp"

namespace kai::kailog {
namespace {

int fail(std::ostream& err, const std::string& what) {
  err << "kai-log: " << what << "\n";
  return 2;
}

}  // namespace

int counterfactual_command(const storage::EventLog& log, const CounterfactualArgs& args, std::ostream& out,
                           std::ostream& err) {
  CounterfactualOptions options;
  options.progress = args.progress;
  options.progress_if_long = ::isatty(STDERR_FILENO) != 0;  // a progress bar on long windows, for a person
  if (!args.config_path.empty()) {
    auto text = tools::read_file(args.config_path);
    if (!text) return fail(err, "--config " + args.config_path + ": cannot be read");
    options.config_text = std::move(*text);
  }
  if (!args.queues_path.empty()) {
    auto text = tools::read_file(args.queues_path);
    if (!text) return fail(err, "--queues " + args.queues_path + ": cannot be read");
    auto objects = model::decode_snapshot(*text);
    if (!objects) return fail(err, "--queues " + args.queues_path + ": " + objects.message());
    if (objects->queues.empty()) return fail(err, "--queues " + args.queues_path + ": holds no Queue");
    const size_t others = objects->nodes.size() + objects->pods.size() + objects->pod_groups.size() +
                          objects->priority_classes.size() + objects->bind_requests.size() +
                          objects->owners.size() + objects->topologies.size() + objects->namespaces.size() +
                          objects->skipped.size();
    if (others != 0) return fail(err, "--queues " + args.queues_path + ": holds objects other than Queues");
    options.queues = std::move(objects.value().queues);
  }
  for (const auto& [flag, text, target] :
       {std::tuple<const char*, const std::string*, std::optional<int64_t>*>{"--from", &args.from, &options.from_ms},
        std::tuple<const char*, const std::string*, std::optional<int64_t>*>{"--to", &args.to, &options.to_ms}}) {
    if (text->empty()) continue;
    auto t = model::parse_rfc3339(*text);
    if (!t) return fail(err, std::string(flag) + ": " + t.message());
    *target = *t * 1000;
  }
  if (options.from_ms && options.to_ms && *options.from_ms > *options.to_ms)
    return fail(err, "--from is after --to");
  if (!args.default_runtime.empty()) {
    auto ns = model::parse_go_duration_ns(args.default_runtime);
    if (!ns || *ns <= 0) return fail(err, "--default-runtime: " + (ns ? std::string("must be positive") : ns.message()));
    options.default_runtime_ms = *ns / 1'000'000;
  }
  auto result = run_counterfactual(log, options, err);
  if (!result) return fail(err, result.message());
  const CounterfactualReport report = summarize(*result);
  if (args.format == "csv") {
    out << render_csv(report);
  } else if (args.format == "json") {
    out << render_json(report);
  } else {
    out << render_table(report);
  }
  return 0;
}

}  // namespace kai::kailog
