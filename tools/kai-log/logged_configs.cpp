#include "tools/kai-log/logged_configs.hpp"

#include "actors/scheduler/core/behaviour_version.hpp"
#include "actors/scheduler/core/scheduler_config.hpp"
#include "actors/scheduler/core/session_flags.hpp"

namespace kai::kailog {

model::Result<core::SessionOptions> session_options(const std::string& text, const std::string& flags) {
  auto config = core::parse_scheduler_config(text);
  if (!config) return config.status();
  core::SessionOptions o;
  o.config = std::move(config).value();
  if (auto s = core::apply_session_flags(flags, o); !s) return s;
  return o;
}

LoggedConfigs::LoggedConfigs() {
  const std::string flags = core::encode_session_flags(core::SessionOptions{});
  by_hash_.emplace(events::config_hash("", core::kBehaviourVersion, flags),
                   LoggedConfig{"", flags, session_options("", flags), core::kBehaviourVersion});
}

void LoggedConfigs::record(const events::ConfigChange& change) {
  by_hash_.insert_or_assign(change.hash, LoggedConfig{change.text, change.flags,
                                                      session_options(change.text, change.flags),
                                                      change.behaviour_version});
}

const LoggedConfig* LoggedConfigs::find(uint64_t hash, const storage::EventLog& log) {
  auto it = by_hash_.find(hash);
  if (it != by_hash_.end()) return &it->second;
  const std::string key = std::to_string(hash);
  auto body = log.get_meta("config/" + key);
  if (!body || body->empty()) return nullptr;
  auto version = log.get_meta("config_behaviour/" + key);
  auto flags = log.get_meta("config_flags/" + key);
  const uint32_t v = version && !version->empty() ? static_cast<uint32_t>(std::stoul(*version)) : 0;
  std::string flag_text = flags ? *flags : "";
  LoggedConfig config{*body, flag_text, session_options(*body, flag_text), v};
  return &by_hash_.insert_or_assign(hash, std::move(config)).first->second;
}

}  // namespace kai::kailog
