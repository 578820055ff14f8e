#pragma once
// The plugin interface (kube-scheduler framework/interface.go, KAI framework/plugins.go): a plugin
// registers the hooks it implements on the session when the session opens.

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "actors/scheduler/core/scheduler_config.hpp"

namespace kai::core {

class Session;

class Plugin {
 public:
  virtual ~Plugin() = default;
  virtual std::string_view name() const = 0;
  /// Registers this plugin's hooks on `ssn`.
  virtual void on_session_open(Session& ssn) = 0;
};

using PluginFactory = std::function<std::unique_ptr<Plugin>(const PluginConfig& config)>;

/// Plugin factories by name.
class PluginRegistry {
 public:
  void add(std::string name, PluginFactory factory) { factories_[std::move(name)] = std::move(factory); }
  const PluginFactory* find(std::string_view name) const {
    auto it = factories_.find(std::string(name));
    return it == factories_.end() ? nullptr : &it->second;
  }

 private:
  std::map<std::string, PluginFactory> factories_;
};

/// Registers every built-in plugin. Explicit on purpose: static self-registration is dropped by the
/// linker from static libraries.
void register_builtin_plugins(PluginRegistry& registry);

/// The registry with the built-in plugins.
const PluginRegistry& builtin_plugins();

}  // namespace kai::core
