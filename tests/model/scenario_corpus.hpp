#pragma once
// The objects of the scenario corpus (tests/scenarios/), as JSON, for the decoders' tests
// (tests/model/watch_decode_test.cpp, tests/events/state_codec_test.cpp).

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "k8s/model/json_codec.hpp"

namespace kai::scenario_corpus {

/// Calls `visit` with every object document of every scenario file, in directory order: every
/// document but the Scenario itself. Files that do not parse are passed over: the bad-input
/// scenarios include YAML that is meant to fail.
inline void for_each_object(const std::function<void(const nlohmann::json&)>& visit) {
  const char* env = std::getenv("KAI_SOURCE_DIR");
  const std::filesystem::path root = std::filesystem::path(env != nullptr ? env : KAI_DEFAULT_SOURCE_DIR);
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root / "tests" / "scenarios")) {
    if (entry.path().extension() != ".yaml") continue;
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    auto docs = model::yaml_documents_to_json(text.str());
    if (!docs) continue;
    for (const nlohmann::json& d : *docs) {
      if (d.is_object() && d.value("kind", "") != "Scenario") visit(d);
    }
  }
}

}  // namespace kai::scenario_corpus
