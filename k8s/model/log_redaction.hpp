#pragma once
// What the event log keeps of an object: the object as received minus what scheduling never reads and
// what may hold secrets (docs: README.md "Operations", the event log's contents).

#include <string>

namespace kai::model {

/// `object_json` without metadata.managedFields, the kubectl last-applied-configuration annotation (a
/// copy of the whole object as applied) and the values of the containers' environment variables (their
/// names and valueFrom references stay). Text that is not a JSON object, or holds none of these, is
/// returned unchanged, byte for byte.
std::string redact_for_log(std::string object_json);

}  // namespace kai::model

namespace kai::model {

/// What the log keeps of a workload owner of watch kind `group_kind` ("Job.batch"): only the fields
/// the pod grouper reads (objects.hpp WorkloadOwner), written by its encoder, with `api_version` when
/// the object came without one (a list item). Text that does not decode is returned unchanged, so
/// that the projection reports it as it would any bad object.
std::string owner_for_log(const std::string& object_json, const std::string& group_kind,
                          const std::string& api_version);

}  // namespace kai::model
