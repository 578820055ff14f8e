#pragma once
// The structural schema of a CustomResourceDefinition applied to a custom resource, as the real
// server does on every write: pruning of undeclared fields, then OpenAPI validation.

#include "k8s/apiserver/store.hpp"

namespace kai::apiserver {

/// Prunes and validates a custom resource against its CRD schema; throws 422 with every cause.
/// `old`, on an update, is the stored object, for the schema's `self == oldSelf` rules.
void check_custom(const ResourceInfo& r, Json& obj, const Json* old = nullptr);

}  // namespace kai::apiserver
