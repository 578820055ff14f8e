#pragma once
// The session options that come from the daemon's flags rather than from the configuration body
// (stale-gang grace, default queue, consolidation limit), as the text the log keeps with the
// configuration (events::ConfigChange::flags), so that replay runs each cycle with them too
// (docs/one-truth.md). Format: "key=value" pairs separated by ";", keys in a fixed order.

#include <string>
#include <string_view>

#include "actors/scheduler/core/session.hpp"
#include "k8s/model/status.hpp"

namespace kai::core {

/// "all", "multi-pod" or "none", as --pod-group-objects takes it.
const char* to_string(PodGroupObjects which);
model::Result<PodGroupObjects> parse_pod_group_objects(std::string_view text);

/// The flags' text for `options`.
std::string encode_session_flags(const SessionOptions& options);

/// Sets the options `text` names (an empty text leaves the defaults). An unknown key or a bad value
/// is an error naming it.
model::Status apply_session_flags(std::string_view text, SessionOptions& options);

}  // namespace kai::core
