// events.k8s.io/v1 <-> core/v1 conversion of Events (event_versions.hpp).
#include "k8s/apiserver/event_versions.hpp"

#include <utility>
#include <vector>

namespace kai::apiserver {
namespace {

// events.k8s.io/v1 <-> core/v1 Event field names (the two API versions of one stored object).
const std::vector<std::pair<const char*, const char*>> kEventFields = {
    {"regarding", "involvedObject"},
    {"note", "message"},
    {"deprecatedSource", "source"},
    {"deprecatedFirstTimestamp", "firstTimestamp"},
    {"deprecatedLastTimestamp", "lastTimestamp"},
    {"deprecatedCount", "count"},
    {"reportingController", "reportingComponent"}};

}  // namespace

void event_to_core(Json& e) {
  for (const auto& [from, to] : kEventFields) {
    if (e.contains(from)) {
      e[to] = e[from];
      e.erase(from);
    }
  }
  e["apiVersion"] = "v1";
}

Json event_from_core(Json e) {
  for (const auto& [to, from] : kEventFields) {
    if (e.contains(from)) {
      e[to] = e[from];
      e.erase(from);
    }
  }
  e["apiVersion"] = "events.k8s.io/v1";
  return e;
}

}  // namespace kai::apiserver
