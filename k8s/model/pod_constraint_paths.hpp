#pragma once
// The paths a decoded Pod lists in Pod::unsupported_constraints for the fields the scheduler refuses
// (resource claims). The decoder records them; the encoder writes a placeholder at the same path, so
// decode(encode(x)) == x. Internal to the JSON codec (json_decode.cpp, json_encode.cpp).

#include <string_view>

namespace kai::model::json_detail {

/// Whole-field paths, recorded when the field is set at all.
constexpr std::string_view kResourceClaimsPath = "spec.resourceClaims";

}  // namespace kai::model::json_detail
