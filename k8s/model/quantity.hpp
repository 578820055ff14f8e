#pragma once
// Kubernetes resource quantities (Kubernetes' resource.Quantity) as integer milli-units.
//
// Grammar:  <quantity> ::= <signedNumber><suffix>
//           <suffix>   ::= Ki | Mi | Gi | Ti | Pi | Ei | n | u | m | "" | k | M | G | T | P | E
//                        | (e|E)<signedNumber>
// A value is rounded up to the next milli-unit, as Quantity.MilliValue() does ("0.1m" -> 1).

#include <cstdint>
#include <string>
#include <string_view>

#include "k8s/model/status.hpp"

namespace kai::model {

/// Parses `text` into milli-units: "100m" -> 100, "1.5" -> 1500, "4Gi" -> 4294967296000,
/// "1e3" -> 1000000. Fails on bad syntax and on values beyond int64 milli-units.
Result<int64_t> parse_quantity_milli(std::string_view text);

/// Formats milli-units as a canonical Kubernetes quantity ("1500m" -> "1500m", 2000 -> "2").
std::string format_quantity_milli(int64_t milli);

}  // namespace kai::model
