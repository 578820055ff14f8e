#pragma once
// Per-kind JSON decoding and encoding with nlohmann. Include only from codec translation units.

#include <nlohmann/json.hpp>
#include <string_view>
#include <vector>

#include "k8s/model/kinds.hpp"
#include "k8s/model/objects.hpp"
#include "k8s/model/status.hpp"

namespace kai::model {

// The per-kind decoders (decode_node, decode_pod, ...) are declared with the kinds table
// (kinds.hpp). They never throw and fail only when `j` is not an object; bad fields go to `errors`.

// Encoders write the decoded fields back with their apiVersion and kind; decode(encode(x)) == x.
nlohmann::json encode(const Node& x);
nlohmann::json encode(const Pod& x);
nlohmann::json encode(const Queue& x);
nlohmann::json encode(const PodGroup& x);
nlohmann::json encode(const PriorityClass& x);
nlohmann::json encode(const Topology& x);
nlohmann::json encode(const Namespace& x);
nlohmann::json encode(const BindRequest& x);
nlohmann::json encode(const WorkloadOwner& x);
/// allocated, allocatedNonPreemptible and requested, each only when it has a resource.
nlohmann::json encode(const ResourcesStatus& x);
nlohmann::json encode(const SchedulingCondition& x);

/// Adds one decoded object of any known kind to `out` (unknown kinds go to out.skipped).
Status decode_object_into(const nlohmann::json& j, ClusterObjects& out);

/// Converts a YAML document to the equivalent JSON value (scalars typed as YAML 1.2 core schema).
Result<nlohmann::json> yaml_to_json(std::string_view yaml_document);

/// Converts every non-empty document of a multi-document YAML stream, in order.
Result<std::vector<nlohmann::json>> yaml_documents_to_json(std::string_view yaml_stream);

}  // namespace kai::model
