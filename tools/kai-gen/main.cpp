// kai-gen: writes a synthetic cluster snapshot (a v1 List, JSON) that kai-sim and the benchmarks read.
#include <CLI/CLI.hpp>
#include <iostream>

#include "k8s/model/codec.hpp"
#include "tools/common/guarded_main.hpp"
#include "tools/kai-gen/generator.hpp"

static int run_tool(int argc, char** argv) {
  CLI::App app{"kai-gen: synthetic KAI cluster snapshots (the benchmark mix of docs/performance-targets.md)"};
  double scale = 1.0;
  kai::gen::ClusterSpec spec;
  app.add_option("--scale", scale, "Scale of the default mix (1 = 5,000 nodes)")->capture_default_str();
  app.add_option("--seed", spec.seed, "Random seed")->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  const uint64_t seed = spec.seed;
  spec = kai::gen::ClusterSpec::scaled(scale);
  spec.seed = seed;
  std::cout << kai::model::encode_snapshot_json(kai::gen::generate(spec)) << "\n";
  return 0;
}

int main(int argc, char** argv) {
  return kai::tools::guarded_main("kai-gen", [&] { return run_tool(argc, argv); });
}
