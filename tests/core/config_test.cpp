#include <gtest/gtest.h>

#include <algorithm>
#include <ostream>
#include <vector>

#include "actors/scheduler/core/plugins/builtin.hpp"
#include "actors/scheduler/core/scheduler_config.hpp"
#include "actors/scheduler/core/session.hpp"

namespace {

using kai::core::parse_scheduler_config;
using kai::core::plugins::kNodePlacementName;
using kai::core::plugins::kProportionName;

TEST(SchedulerConfig, DefaultsAreKais) {
  auto c = kai::core::SchedulerConfig::defaults();
  ASSERT_EQ(c.actions.size(), 5u);
  EXPECT_EQ(c.actions.front(), "allocate");
  ASSERT_NE(c.plugin(kNodePlacementName), nullptr);
  EXPECT_EQ(c.plugin(kNodePlacementName)->arguments.at("gpu"), "binpack");
}

TEST(SchedulerConfig, YamlActionsAndTiers) {
  auto c = parse_scheduler_config(
      "actions: \"allocate, reclaim\"\n"
      "tiers:\n"
      "- plugins:\n"
      "  - name: predicates\n"
      "  - name: nodeplacement\n"
      "    arguments:\n"
      "      gpu: spread\n");
  ASSERT_TRUE(c) << c.message();
  EXPECT_EQ(c->actions, (std::vector<std::string>{"allocate", "reclaim"}));
  ASSERT_EQ(c->plugins.size(), 2u);
  EXPECT_EQ(c->plugin(kNodePlacementName)->arguments.at("gpu"), "spread");
}

TEST(SchedulerConfig, MissingFieldsFallBackToDefaults) {
  auto c = parse_scheduler_config("{\"actions\": \"allocate\"}");
  ASSERT_TRUE(c);
  EXPECT_NE(c->plugin(kProportionName), nullptr);
}

TEST(SchedulerConfig, BadShapesAreClearErrors) {
  EXPECT_FALSE(parse_scheduler_config("tiers: 3"));
  EXPECT_FALSE(parse_scheduler_config("{\"tiers\": [{\"plugins\": [{}]}]}"));
  EXPECT_FALSE(parse_scheduler_config("{not json"));
}

/// What a session reads from the capabilities its plugins declare: the allocate fast path's inputs.
struct FastPathInputs {
  bool gpu_fast_path = false;
  bool prefers_idle_nodes = false;
  bool honours_nominated_node = false;
  bool prefers_shared_groups = false;
  bool cpu_fast_path = false;
  bool prefers_cpu_nodes_for_cpu_tasks = false;
  bool operator==(const FastPathInputs&) const = default;
};

void PrintTo(const FastPathInputs& in, std::ostream* os) {
  *os << "{gpu_fast_path " << in.gpu_fast_path << ", prefers_idle_nodes " << in.prefers_idle_nodes
      << ", honours_nominated_node " << in.honours_nominated_node << ", prefers_shared_groups "
      << in.prefers_shared_groups << ", cpu_fast_path " << in.cpu_fast_path
      << ", prefers_cpu_nodes_for_cpu_tasks " << in.prefers_cpu_nodes_for_cpu_tasks << "}";
}

/// The inputs of a session over no objects with `options`.
FastPathInputs inputs_of(const kai::core::SessionOptions& options) {
  const kai::model::ClusterObjects objects;
  const kai::core::Session ssn(objects, options);
  return {ssn.gpu_fast_path,         ssn.prefers_idle_nodes, ssn.honours_nominated_node,
          ssn.prefers_shared_groups, ssn.cpu_fast_path,      ssn.prefers_cpu_nodes_for_cpu_tasks};
}

/// The inputs of a session whose only plugins are `plugins`.
FastPathInputs inputs_with_plugins(std::vector<kai::core::PluginConfig> plugins) {
  kai::core::SessionOptions options;
  options.config.plugins = std::move(plugins);
  return inputs_of(options);
}

/// The session reads the allocate fast path's inputs from what the configured plugins declare
/// (Plugin::capabilities), never from their names.
TEST(PluginCapabilities, SessionReadsThemFromTheConfiguredPlugins) {
  using kai::core::PluginConfig;
  using namespace kai::core::plugins;
  // KAI's default tier.
  EXPECT_EQ(inputs_of(kai::core::SessionOptions{}), (FastPathInputs{true, true, true, true, true, true}));
  EXPECT_EQ(inputs_with_plugins({PluginConfig{std::string(kNodePlacementName), {{"gpu", "spread"}}},
                                 PluginConfig{std::string(kResourceTypeName), {}}}),
            (FastPathInputs{false, false, false, false, true, true}));
  // The first plugin that ranks GPU nodes by allocation decides, as the first nodeplacement did.
  // Two of them both score CPU-only tasks, which the CPU indexes cannot follow.
  EXPECT_EQ(inputs_with_plugins({PluginConfig{std::string(kNodePlacementName), {{"gpu", "binpack"}}},
                                 PluginConfig{std::string(kNodePlacementName), {{"gpu", "spread"}}},
                                 PluginConfig{std::string(kNodeAvailabilityName), {}}}),
            (FastPathInputs{true, true, false, false, false, false}));
  EXPECT_EQ(inputs_with_plugins({PluginConfig{std::string(kNodePlacementName), {{"cpu", "spread"}}}}),
            (FastPathInputs{true, false, false, false, false, false}));
  // resourcetype twice scores 20 for a node without GPUs: still below nodeavailability, but the
  // fast path takes each ordering plugin at most once.
  EXPECT_EQ(inputs_with_plugins({PluginConfig{std::string(kNodePlacementName), {}},
                                 PluginConfig{std::string(kResourceTypeName), {}},
                                 PluginConfig{std::string(kResourceTypeName), {}}}),
            (FastPathInputs{true, false, false, false, false, true}));
}


/// The plugin names of a configuration, in order.
std::vector<std::string> plugin_names(const kai::core::SchedulerConfig& c) {
  std::vector<std::string> names;
  for (const auto& p : c.plugins) names.push_back(p.name);
  return names;
}

// KAI's SchedulingShard as --config: turned into the configuration KAI's operator writes for it.
TEST(SchedulingShard, AnEmptySpecGivesKaisDefaultActionsAndPluginsByPriority) {
  auto c = parse_scheduler_config("apiVersion: kai.scheduler/v1\nkind: SchedulingShard\nmetadata: {name: default}\n");
  ASSERT_TRUE(c) << c.message();
  EXPECT_EQ(c->actions, (std::vector<std::string>{"allocate", "consolidation", "reclaim", "preempt", "stalegangeviction"}));
  EXPECT_EQ(plugin_names(*c),
            (std::vector<std::string>{"predicates", "proportion", "priority", "nodeavailability", "resourcetype",
                                      "podaffinity", "elastic", "kubeflow", "ray", "subgrouporder", "taskorder",
                                      "nominatednode", "dynamicresources", "minruntime", "topology", "snapshot",
                                      "sg-nodelocalgreedy", "sg-multinodegang", "gpupack", "nodeplacement",
                                      "gpusharingorder"}));
  const auto* placement = c->plugin(kNodePlacementName);
  ASSERT_NE(placement, nullptr);
  EXPECT_EQ(placement->arguments.at("gpu"), "binpack");
  EXPECT_FALSE(c->usage_db);
}

TEST(SchedulingShard, ItsFieldsBecomeTheirPluginArgumentsActionsAndUsageDbConfig) {
  auto c = parse_scheduler_config(R"(
apiVersion: kai.scheduler/v1
kind: SchedulingShard
metadata: {name: gpu-shard}
spec:
  partitionLabelValue: gpu
  placementStrategy: {gpu: spread}
  kValue: 0.5
  minRuntime: {reclaimMinRuntime: 10m}
  actions:
    preempt: {enabled: false}
    stalegangeviction: {priority: 600}
  plugins:
    taskorder: {priority: 2000}
  queueDepthPerAction: {reclaim: 10}
  usageDBConfig:
    clientType: eventlog
    usageParams: {windowSize: 1h, halfLifePeriod: 30m}
)");
  ASSERT_TRUE(c) << c.message();
  // spread turns consolidation off; preempt is off; stalegangeviction runs first.
  EXPECT_EQ(c->actions, (std::vector<std::string>{"stalegangeviction", "allocate", "reclaim"}));
  const auto names = plugin_names(*c);
  EXPECT_EQ(names.front(), "taskorder");
  EXPECT_NE(std::find(names.begin(), names.end(), "gpuspread"), names.end());
  EXPECT_EQ(std::find(names.begin(), names.end(), "gpupack"), names.end());
  EXPECT_EQ(std::find(names.begin(), names.end(), "gpusharingorder"), names.end());
  EXPECT_EQ(c->plugin(kProportionName)->arguments.at("kValue"), "0.5");
  EXPECT_EQ(c->plugin("minruntime")->arguments.at("defaultReclaimMinRuntime"), "10m");
  EXPECT_EQ(c->plugin(kNodePlacementName)->arguments.at("gpu"), "spread");
  EXPECT_EQ(c->plugin(kNodePlacementName)->arguments.at("cpu"), "binpack");
  ASSERT_TRUE(c->usage_db);
  EXPECT_EQ(c->usage_db->params.window_ms, 3600 * 1000);
  EXPECT_EQ(c->usage_db->params.half_life_ms, 1800 * 1000);
}

TEST(SchedulingShard, ABadFieldIsRefusedByName) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"kind: SchedulingShard\nspec: {placementStrategy: {gpu: tight}}", "spec.placementStrategy.gpu"},
      {"kind: SchedulingShard\nspec: {kValue: high}", "spec.kValue"},
      {"kind: SchedulingShard\nspec: {actions: {preempt: {enabled: false}}, queueDepthPerAction: {preempt: 3}}",
       "spec.queueDepthPerAction.preempt"},
      {"kind: SchedulingShard\nspec: {plugins: {proportion: {priority: high}}}", "spec.plugins.proportion.priority"},
      {"kind: SchedulingShard\nspec: {usageDBConfig: {clientType: influx}}", "usageDBConfig.clientType"},
  };
  for (const auto& [text, names] : cases) {
    auto c = parse_scheduler_config(text);
    ASSERT_FALSE(c) << text;
    EXPECT_NE(c.message().find(names), std::string::npos) << c.message();
  }
}

}  // namespace
