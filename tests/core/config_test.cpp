#include <gtest/gtest.h>

#include "actors/scheduler/core/scheduler_config.hpp"

namespace {

using kai::core::parse_scheduler_config;

TEST(SchedulerConfig, DefaultsAreKais) {
  auto c = kai::core::SchedulerConfig::defaults();
  ASSERT_EQ(c.actions.size(), 5u);
  EXPECT_EQ(c.actions.front(), "allocate");
  ASSERT_NE(c.plugin("nodeplacement"), nullptr);
  EXPECT_EQ(c.plugin("nodeplacement")->arguments.at("gpu"), "binpack");
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
  EXPECT_EQ(c->plugin("nodeplacement")->arguments.at("gpu"), "spread");
}

TEST(SchedulerConfig, MissingFieldsFallBackToDefaults) {
  auto c = parse_scheduler_config("{\"actions\": \"allocate\"}");
  ASSERT_TRUE(c);
  EXPECT_NE(c->plugin("proportion"), nullptr);
}

TEST(SchedulerConfig, BadShapesAreClearErrors) {
  EXPECT_FALSE(parse_scheduler_config("tiers: 3"));
  EXPECT_FALSE(parse_scheduler_config("{\"tiers\": [{\"plugins\": [{}]}]}"));
  EXPECT_FALSE(parse_scheduler_config("{not json"));
}

}  // namespace
