#pragma once
// The scheduler configurations a log's cycles ran with, by the hash each CycleStart names: from the
// ConfigChange records read so far, else from the bodies the log keeps by hash in its meta (retention
// may have deleted the record). Shared by `kai-log replay` and its counterfactual form.

#include <cstdint>
#include <map>
#include <string>

#include "actors/scheduler/core/session.hpp"
#include "events/event.hpp"
#include "k8s/model/status.hpp"
#include "storage/event_log.hpp"

namespace kai::kailog {

/// One logged configuration: its body and session flags as logged, what they parse to, and the
/// behaviour version of the build that logged them.
struct LoggedConfig {
  std::string text;
  std::string flags;
  model::Result<core::SessionOptions> options;
  uint32_t behaviour_version = 0;
};

/// A configuration body (KAI's scheduler configuration, JSON or YAML) and encoded session flags as
/// the options of a session.
model::Result<core::SessionOptions> session_options(const std::string& text, const std::string& flags);

class LoggedConfigs {
 public:
  /// Starts with the defaults as a daemon without --config or flags logs them (its ConfigChange may
  /// be gone).
  LoggedConfigs();

  void record(const events::ConfigChange& change);

  /// The configuration `hash` names, or null when neither a record nor the log's meta holds it.
  const LoggedConfig* find(uint64_t hash, const storage::EventLog& log);

 private:
  std::map<uint64_t, LoggedConfig> by_hash_;
};

}  // namespace kai::kailog
