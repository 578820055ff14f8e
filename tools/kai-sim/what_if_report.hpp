#pragma once
// kai-sim --what-if's answer as text for a person (the default) or as JSON (--format json) with the
// same facts (docs/what-if.md "Output"). Byte-identical for the same answer.

#include <cstdint>
#include <string>

#include "tools/kai-sim/what_if.hpp"

namespace kai::sim {

std::string render_what_if_text(const WhatIfAnswer& answer);
std::string render_what_if_json(const WhatIfAnswer& answer);

/// A span of seconds as "2h10m", "45s", "1h0m5s"; "0s" for none.
std::string format_span(int64_t seconds);

}  // namespace kai::sim
