#include <gtest/gtest.h>

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

/// The session reads the allocate fast path's inputs from what the configured plugins declare
/// (Plugin::capabilities), never from their names.
TEST(PluginCapabilities, SessionReadsThemFromTheConfiguredPlugins) {
  using kai::core::PluginConfig;
  using kai::core::Session;
  using kai::core::SessionOptions;
  using namespace kai::core::plugins;
  const kai::model::ClusterObjects objects;
  {
    Session ssn(objects, SessionOptions{});  // KAI's default tier
    EXPECT_TRUE(ssn.gpu_fast_path);
    EXPECT_TRUE(ssn.prefers_idle_nodes);
    EXPECT_TRUE(ssn.honours_nominated_node);
    EXPECT_TRUE(ssn.prefers_shared_groups);
  }
  {
    SessionOptions options;
    options.config.plugins = {PluginConfig{std::string(kNodePlacementName), {{"gpu", "spread"}}},
                              PluginConfig{std::string(kResourceTypeName), {}}};
    Session ssn(objects, options);
    EXPECT_FALSE(ssn.gpu_fast_path);
    EXPECT_FALSE(ssn.prefers_idle_nodes);
    EXPECT_FALSE(ssn.honours_nominated_node);
    EXPECT_FALSE(ssn.prefers_shared_groups);
  }
  {
    // The first plugin that ranks GPU nodes by allocation decides, as the first nodeplacement did.
    SessionOptions options;
    options.config.plugins = {PluginConfig{std::string(kNodePlacementName), {{"gpu", "binpack"}}},
                              PluginConfig{std::string(kNodePlacementName), {{"gpu", "spread"}}},
                              PluginConfig{std::string(kNodeAvailabilityName), {}}};
    Session ssn(objects, options);
    EXPECT_TRUE(ssn.gpu_fast_path);
    EXPECT_TRUE(ssn.prefers_idle_nodes);
    EXPECT_FALSE(ssn.honours_nominated_node);
    EXPECT_FALSE(ssn.prefers_shared_groups);
  }
}

}  // namespace
