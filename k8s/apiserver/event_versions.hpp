#pragma once
// The two API versions of one stored Event: events.k8s.io/v1 objects are stored as core/v1 Events
// (as on a real server) and converted on the way in and out.

#include "k8s/apiserver/api_error.hpp"

namespace kai::apiserver {

/// Renames the events.k8s.io/v1 fields of `e` to their core/v1 names, in place.
void event_to_core(Json& e);
/// The events.k8s.io/v1 form of the stored core/v1 Event `e`.
Json event_from_core(Json e);

}  // namespace kai::apiserver
