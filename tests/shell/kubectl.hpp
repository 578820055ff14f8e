#pragma once
// Whether the tests that drive kubectl (tests/apiserver/kubectl_test.cpp,
// tests/deploy/manifests_test.cpp) can run here: they skip, with this reason, where they cannot.

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/shell/run_command.hpp"

namespace kai::test_shell {

/// Runs `command` with its standard error joined to its output.
inline CommandRun run(const std::string& command) { return run_command(command + " 2>&1"); }

/// Why kubectl cannot be used, or "" when it can: it must be installed and at least 1.27.
inline std::string kubectl_unusable() {
  CommandRun v = run("kubectl version --client -o json");
  if (v.code != 0 || v.out.find('{') == std::string::npos) return "kubectl is not installed";
  nlohmann::json j = nlohmann::json::parse(v.out.substr(v.out.find('{')), nullptr, false);
  if (j.is_discarded()) return "kubectl version output unreadable";
  const std::string minor = j["clientVersion"].value("minor", "0");
  if (j["clientVersion"].value("major", "0") != "1" || std::atoi(minor.c_str()) < 27) {
    return "kubectl 1." + minor + " is older than 1.27";
  }
  return "";
}

}  // namespace kai::test_shell
