// Runs every scenario under tests/scenarios (format: tests/scenarios/README.md) through one session and
// checks the expected statuses, nodes, GPU groups and pod-group reasons.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "actors/scheduler/core/action.hpp"
#include "actors/scheduler/core/session.hpp"
#include "actors/scheduler/core/simulation.hpp"
#include "k8s/model/codec.hpp"
#include "k8s/model/json_codec.hpp"
#include "k8s/model/time.hpp"
#include "tools/kai-sim/sim_report.hpp"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

fs::path scenarios_dir() {
  // The environment wins (ctest sets it); the build's source tree is the default, which test discovery uses.
  const char* root = std::getenv("KAI_SOURCE_DIR");
  return fs::path(root ? root : KAI_DEFAULT_SOURCE_DIR) / "tests" / "scenarios";
}

std::vector<std::string> scenario_files() {
  std::vector<std::string> files;
  if (!fs::exists(scenarios_dir())) return files;
  for (const auto& e : fs::recursive_directory_iterator(scenarios_dir())) {
    if (e.is_regular_file() && e.path().extension() == ".yaml") {
      files.push_back(fs::relative(e.path(), scenarios_dir()).string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

/// Splits a multi-document YAML file into the Scenario document and the rest (the snapshot).
bool split(const std::string& text, json& scenario, std::string& snapshot, std::string& error) {
  std::vector<std::string> docs(1);
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("---", 0) == 0 && line.find_first_not_of("- \t\r") == std::string::npos) {
      docs.emplace_back();
    } else {
      docs.back() += line + "\n";
    }
  }
  bool found = false;
  for (const auto& d : docs) {
    auto j = kai::model::yaml_to_json(d);
    if (!j) {
      error = j.message();
      return false;
    }
    if (j->is_object() && j->value("kind", "") == "Scenario") {
      scenario = *j;
      found = true;
    } else if (!j->is_null()) {
      snapshot += "---\n" + d;
    }
  }
  if (!found) error = "no document of kind Scenario";
  return found;
}

/// Expects `got` to hold `want`'s value of `field`, when `want` names one.
void expect_field(const json& got, const json& want, const std::string& field, const std::string& context) {
  if (want.contains(field)) {
    EXPECT_EQ(got[field], want[field]) << context;
  }
}

class ScenarioTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ScenarioTest, MatchesExpectation) {
  const fs::path path = scenarios_dir() / GetParam();
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  json scenario;
  std::string snapshot, error;
  ASSERT_TRUE(split(ss.str(), scenario, snapshot, error)) << path << ": " << error;
  SCOPED_TRACE(scenario.value("description", ""));
  auto objects = kai::model::decode_snapshot(snapshot);
  ASSERT_TRUE(objects) << objects.message();

  kai::core::SessionOptions options;
  if (scenario.contains("config")) {
    auto config = kai::core::parse_scheduler_config(scenario["config"].dump());
    ASSERT_TRUE(config) << config.message();
    options.config = std::move(config).value();
  }
  options.config.actions = kai::core::split_actions(scenario.value("actions", std::string("allocate")));
  options.seed = scenario.value("seed", 1);
  options.now = 1767225600;
  if (scenario.contains("now")) {
    auto now = kai::model::parse_rfc3339(scenario["now"].get<std::string>());
    ASSERT_TRUE(now) << now.message();
    options.now = *now;
  }
  int64_t now_step = 0;
  if (scenario.contains("nowStep")) {
    auto step = kai::model::parse_go_duration_ns(scenario["nowStep"].get<std::string>());
    ASSERT_TRUE(step) << step.message();
    now_step = *step / 1'000'000'000;
  }
  const auto sim = kai::core::simulate(std::move(objects).value(), options, scenario.value("rounds", 1), now_step);
  ASSERT_TRUE(sim.skipped_actions.empty()) << "action not available: " << sim.skipped_actions.front();
  const json result = json::parse(kai::sim::render_json(*sim.session, &sim.decisions));
  std::map<std::string, json> pods, groups;
  for (const auto& p : result["pods"])
    pods[p["namespace"].get<std::string>() + "/" + p["name"].get<std::string>()] = p;
  for (const auto& g : result["podGroups"]) {
    groups[g["namespace"].get<std::string>() + "/" + g["name"].get<std::string>()] = g;
  }
  const json& expect = scenario["expect"];
  if (expect.contains("pods")) {
    for (const auto& [key, want] : expect["pods"].items()) {
      if (want.value("status", "") == "Deleted") {
        EXPECT_FALSE(pods.count(key)) << "pod " << key << " should be gone: " << pods[key].dump();
        continue;
      }
      ASSERT_TRUE(pods.count(key)) << "pod " << key << " is not in the result";
      const json& got = pods[key];
      const std::string context = "pod " + key + " -> " + got.dump();
      expect_field(got, want, "status", context);
      expect_field(got, want, "node", context);
      if (want.contains("gpuGroups")) {
        EXPECT_EQ(got["gpuGroups"].size(), want["gpuGroups"].get<size_t>()) << context;
      }
      if (want.contains("sameGpuGroupAs")) {
        const std::string other = want["sameGpuGroupAs"].get<std::string>();
        ASSERT_TRUE(pods.count(other)) << other;
        EXPECT_FALSE(got["gpuGroups"].empty()) << context;
        EXPECT_EQ(got["gpuGroups"], pods[other]["gpuGroups"]) << context;
      }
      if (want.contains("differentGpuGroupFrom")) {
        const std::string other = want["differentGpuGroupFrom"].get<std::string>();
        ASSERT_TRUE(pods.count(other)) << other;
        EXPECT_NE(got["gpuGroups"], pods[other]["gpuGroups"]) << context;
      }
    }
  }
  if (expect.contains("podGroups")) {
    for (const auto& [key, want] : expect["podGroups"].items()) {
      ASSERT_TRUE(groups.count(key)) << "pod group " << key << " is not in the result";
      const json& got = groups[key];
      const std::string context = "pod group " + key + " -> " + got.dump();
      expect_field(got, want, "unschedulable", context);
      if (want.contains("reason")) {
        bool any = false;
        for (const auto& r : got["reasons"]) any = any || r["reason"] == want["reason"];
        EXPECT_TRUE(any) << context;
      }
      if (want.contains("messageContains")) {
        bool any = false;
        for (const auto& r : got["reasons"]) {
          any = any || r["message"].get<std::string>().find(want["messageContains"].get<std::string>()) !=
                           std::string::npos;
        }
        EXPECT_TRUE(any) << context;
      }
    }
  }
  if (expect.contains("decisionsContain")) {
    for (const auto& want : expect["decisionsContain"]) {
      bool found = false;
      for (const auto& d : result["decisions"]) {
        bool match = true;
        for (const char* k : {"action", "kind", "pod", "node", "by"}) {
          if (want.contains(k) && d[k] != want[k]) match = false;
        }
        if (want.contains("reasonContains") &&
            d["reason"].get<std::string>().find(want["reasonContains"].get<std::string>()) ==
                std::string::npos) {
          match = false;
        }
        found = found || match;
      }
      EXPECT_TRUE(found) << "no decision matches " << want.dump() << " in " << result["decisions"].dump();
    }
  }
  if (expect.contains("queues")) {
    std::map<std::string, json> queues;
    for (const auto& q : result["queues"]) queues[q["name"].get<std::string>()] = q;
    for (const auto& [name, want] : expect["queues"].items()) {
      ASSERT_TRUE(queues.count(name)) << "queue " << name << " is not in the result";
      for (const auto& [field, values] : want.items()) {
        for (const auto& [resource, value] : values.items()) {
          const json& got = queues[name][field][resource];
          ASSERT_TRUE(got.is_number()) << name << "." << field << "." << resource;
          EXPECT_NEAR(got.get<double>(), value.get<double>(), 1e-6)
              << "queue " << name << " " << field << "." << resource << " -> " << queues[name].dump();
        }
      }
    }
  }
  if (expect.contains("decisions")) {
    EXPECT_EQ(result["decisions"].size(), expect["decisions"].get<size_t>()) << result["decisions"].dump();
  }
}

std::string test_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = info.param;
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Scenarios, ScenarioTest, ::testing::ValuesIn(scenario_files()), test_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(ScenarioTest);

TEST(ScenarioCorpus, HasAtLeastFortyScenarios) {
  EXPECT_GE(scenario_files().size(), 40u);
}

}  // namespace
