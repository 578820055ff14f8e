#pragma once
// Human- and jq-readable rendering of events (kai-log dump): one JSON object per line.

#include <string>

#include "events/event.hpp"

namespace kai::events {

/// One event as a single-line JSON object: {"seq","ts","v","kind",...payload fields}. Watch objects
/// are embedded as parsed JSON when they parse, as a string otherwise.
std::string to_json_line(const Event& e);

}  // namespace kai::events
