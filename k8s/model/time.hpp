#pragma once
// RFC 3339 timestamps as Kubernetes writes them ("2024-01-02T03:04:05Z", fractional seconds and
// numeric offsets accepted), to and from unix seconds.

#include <cstdint>
#include <string>
#include <string_view>

#include "k8s/model/status.hpp"

namespace kai::model {

/// Parses an RFC 3339 timestamp to unix seconds (fractions are dropped: Kubernetes keeps seconds).
Result<int64_t> parse_rfc3339(std::string_view text);

/// Formats unix seconds as "YYYY-MM-DDTHH:MM:SSZ".
std::string format_rfc3339(int64_t unix_seconds);

/// Formats unix microseconds as a Kubernetes MicroTime, "YYYY-MM-DDTHH:MM:SS.ffffffZ" (the API
/// server refuses Lease and events.k8s.io times with fewer fractional digits).
std::string format_micro_time(int64_t unix_us);
/// Parses an RFC 3339 timestamp to unix microseconds (fractions beyond six digits are dropped).
Result<int64_t> parse_micro_time(std::string_view text);

/// Formats nanoseconds the way Go's Duration.String() does ("1h30m0s", "500ms", "1.5s").
std::string format_go_duration(int64_t ns);

/// Parses a Go time.Duration string ("1m30s", "2h", "500ms", "-1.5h", "0") into nanoseconds.
Result<int64_t> parse_go_duration_ns(std::string_view text);

}  // namespace kai::model
