#pragma once
// The three patch formats of the real server: JSON merge patch (RFC 7386), JSON patch (RFC 6902) and
// strategic merge patch for core kinds.
//
// Strategic merge patch covers what `kubectl apply` and controllers send: lists of objects merged by
// their merge key (containers / initContainers / ephemeralContainers / env / volumes /
// imagePullSecrets / resourceClaims / schedulingGates by `name`, volumeMounts by `mountPath`,
// volumeDevices by `devicePath`, ports by `containerPort`, conditions and addresses by `type`,
// ownerReferences by `uid`, hostAliases by `ip`); `finalizers` merged as a set; `null` deletes a key;
// directives `$patch: replace|delete|merge` on maps and list items, `$retainKeys`,
// `$setElementOrder/<list>` (listed items first, in that order) and
// `$deleteFromPrimitiveList/<list>`. Every other list is replaced, as for fields without a patch
// strategy. Merge keys are chosen by field name, not by the full schema path.

#include "k8s/apiserver/api_error.hpp"

namespace kai::apiserver {

/// Applies an RFC 7386 merge patch. Throws ApiError 400 when the patch is not a JSON object.
Json apply_merge_patch(const Json& target, const Json& patch);

/// Applies an RFC 6902 JSON patch. Throws ApiError 400 for a malformed patch, 422 when an operation
/// fails (missing path, failed test).
Json apply_json_patch(const Json& target, const Json& patch);

/// Applies a strategic merge patch (see the file comment for what is covered).
Json apply_strategic_merge_patch(const Json& target, const Json& patch);

}  // namespace kai::apiserver
