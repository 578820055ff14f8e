#include "actors/scheduler/core/session_flags.hpp"

#include <charconv>

namespace kai::core {
namespace {

model::Status parse_bool(std::string_view key, std::string_view value, bool& out) {
  if (value != "true" && value != "false")
    return model::Status::error("session flag " + std::string(key) + ": not true or false: " + std::string(value));
  out = value == "true";
  return model::Status::ok();
}

model::Status parse_int(std::string_view key, std::string_view value, int64_t& out) {
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), out);
  if (ec != std::errc() || end != value.data() + value.size())
    return model::Status::error("session flag " + std::string(key) + ": not an integer: " + std::string(value));
  return model::Status::ok();
}

}  // namespace

const char* to_string(PodGroupObjects which) {
  switch (which) {
    case PodGroupObjects::kAll: return "all";
    case PodGroupObjects::kMultiPod: return "multi-pod";
    case PodGroupObjects::kNone: return "none";
  }
  return "all";
}

model::Result<PodGroupObjects> parse_pod_group_objects(std::string_view text) {
  if (text == "all") return PodGroupObjects::kAll;
  if (text == "multi-pod") return PodGroupObjects::kMultiPod;
  if (text == "none") return PodGroupObjects::kNone;
  return model::Status::error("\"" + std::string(text) + "\" is not one of all, multi-pod, none");
}

std::string encode_session_flags(const SessionOptions& options) {
  return "stale-grace-seconds=" + std::to_string(options.stale_grace_period_seconds) +
         ";default-queue=" + options.default_queue +
         ";max-consolidation-preemptees=" + std::to_string(options.max_consolidation_preemptees) +
         ";pod-group-objects=" + to_string(options.pod_group_objects) +
         ";search-legacy-pg=" + (options.grouper.search_legacy_pod_groups ? "true" : "false") +
         ";knative-gang-schedule=" + (options.grouper.knative_gang_schedule ? "true" : "false");
}

model::Status apply_session_flags(std::string_view text, SessionOptions& options) {
  while (!text.empty()) {
    const size_t semi = text.find(';');
    const std::string_view pair = text.substr(0, semi);
    text = semi == std::string_view::npos ? std::string_view{} : text.substr(semi + 1);
    const size_t eq = pair.find('=');
    if (eq == std::string_view::npos) return model::Status::error("session flag without '=': " + std::string(pair));
    const std::string_view key = pair.substr(0, eq), value = pair.substr(eq + 1);
    int64_t n = 0;
    if (key == "stale-grace-seconds") {
      if (auto s = parse_int(key, value, n); !s) return s;
      options.stale_grace_period_seconds = n;
    } else if (key == "default-queue") {
      options.default_queue = std::string(value);
    } else if (key == "max-consolidation-preemptees") {
      if (auto s = parse_int(key, value, n); !s) return s;
      options.max_consolidation_preemptees = static_cast<int32_t>(n);
    } else if (key == "pod-group-objects") {
      auto which = parse_pod_group_objects(value);
      if (!which) return model::Status::error("session flag pod-group-objects: " + which.status().message());
      options.pod_group_objects = which.value();
    } else if (key == "search-legacy-pg") {
      if (auto s = parse_bool(key, value, options.grouper.search_legacy_pod_groups); !s) return s;
    } else if (key == "knative-gang-schedule") {
      if (auto s = parse_bool(key, value, options.grouper.knative_gang_schedule); !s) return s;
    } else {
      return model::Status::error("unknown session flag " + std::string(key));
    }
  }
  return model::Status::ok();
}

}  // namespace kai::core
