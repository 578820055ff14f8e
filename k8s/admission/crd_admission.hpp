#pragma once
// Validation of KAI's custom resources on create and update: a Queue must state its resources, and a
// PodGroup's subgroups must form a tree (docs/kai-compatibility.md "Custom resources").

#include <nlohmann/json.hpp>
#include <string>

namespace kai::admission {

/// "" when the Queue is valid, else why not.
std::string validate_queue(const nlohmann::json& queue);

/// "" when the PodGroup's `spec.subGroups` are valid (lower-case unique names, existing parents, no
/// cycle), else why not.
std::string validate_pod_group(const nlohmann::json& pod_group);

}  // namespace kai::admission
