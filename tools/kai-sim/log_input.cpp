#include "tools/kai-sim/log_input.hpp"

#include "storage/event_log.hpp"
#include "storage/restore.hpp"

namespace kai::sim {

model::Result<LogInput> read_log_input(const std::string& dir, uint64_t at) {
  storage::EventLogOptions options;
  options.read_only = true;  // beside the live writer: never a write
  auto log = storage::EventLog::open(dir, options);
  if (!log) return model::Status::error("event log " + dir + ": " + log.message());
  auto restored = storage::restore_state(*log.value(), at);
  if (!restored) return model::Status::error("event log " + dir + ": " + restored.message());
  LogInput in;
  in.at_seq = restored->state.seq;
  in.objects = restored->state.to_objects();
  in.records = std::move(restored.value().state.records);
  // The configuration the daemon runs with: the last one logged, kept by its hash in the log's meta.
  auto hash = log.value()->get_meta("config_hash");
  if (hash && !hash->empty()) {
    auto body = log.value()->get_meta("config/" + *hash);
    auto flags = log.value()->get_meta("config_flags/" + *hash);
    if (body) {
      in.config_text = *body;
      in.flags = flags ? *flags : "";
      in.has_config = true;
    }
  }
  return in;
}

}  // namespace kai::sim
