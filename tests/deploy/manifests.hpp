#pragma once
// The objects of deploy/'s kustomize base as the tests read them (without kustomize): shared by the
// manifest tests and the daemon's RBAC test.

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "k8s/model/json_codec.hpp"

namespace kai::deploy {

namespace fs = std::filesystem;
using Json = nlohmann::json;

inline std::string read_file(const fs::path& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// The objects of a kustomization that only lists resources (files or directories with their own
/// kustomization). Anything else would need kustomize itself: the test says so instead of guessing.
inline void collect_resources(const fs::path& dir, std::vector<Json>& out) {
  const fs::path file = dir / "kustomization.yaml";
  auto docs = model::yaml_documents_to_json(read_file(file));
  ASSERT_TRUE(docs.is_ok()) << file << ": " << docs.message();
  ASSERT_EQ(docs.value().size(), 1u) << file;
  const Json& k = docs.value()[0];
  for (const auto& [key, value] : k.items()) {
    const bool known = key == "apiVersion" || key == "kind" || key == "resources" || key == "labels";
    ASSERT_TRUE(known) << file << ": field " << key << " needs kustomize; keep bases to resources";
  }
  for (const auto& r : k.value("resources", Json::array())) {
    const fs::path path = dir / r.get<std::string>();
    if (fs::is_directory(path)) {
      collect_resources(path, out);
      continue;
    }
    auto objects = model::yaml_documents_to_json(read_file(path));
    ASSERT_TRUE(objects.is_ok()) << path << ": " << objects.message();
    for (auto& o : objects.value()) {
      if (!o.is_null()) out.push_back(std::move(o));
    }
  }
}

/// The order kubectl applies kinds in: namespaces and CRDs before what depends on them.
inline int apply_rank(const Json& o) {
  const std::string kind = o.value("kind", "");
  if (kind == "Namespace") return 0;
  if (kind == "CustomResourceDefinition") return 1;
  return 2;
}

/// deploy/base's objects in the order kubectl applies them.
inline void base_objects(const fs::path& source_dir, std::vector<Json>& out) {
  collect_resources(source_dir / "deploy" / "base", out);
  std::stable_sort(out.begin(), out.end(), [](const Json& a, const Json& b) { return apply_rank(a) < apply_rank(b); });
}

}  // namespace kai::deploy
