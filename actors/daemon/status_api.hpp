#pragma once
// The writes the status writer (status_writer.hpp) makes, as a narrow port: the daemon implements it
// with the Kubernetes client (kube_writer_apis.hpp), tests with an in-memory fake. Called from the
// writer's one thread. The writes are advisory: the writer does not act on a failure (the next cycle
// writes a status that still holds again), but the port reports it with a model::Code all the same.

#include <string>

#include "k8s/model/status.hpp"

namespace kai::daemon {

/// An events.k8s.io/v1 Event about an object.
struct EventNote {
  std::string ns;
  std::string kind;         ///< "Pod"
  std::string api_version;  ///< "v1"
  std::string name;
  std::string uid;
  std::string type;    ///< "Normal" or "Warning"
  std::string reason;  ///< "Scheduled", "Evict", "Unschedulable", ...
  std::string note;
  std::string action;  ///< "Binding", "Evicting", "Scheduling"
  bool operator==(const EventNote&) const = default;
};

class StatusApi {
 public:
  virtual ~StatusApi() = default;

  /// Sets one condition of pod `ns/name` (keyed by `type`; lastTransitionTime is now).
  virtual model::Status set_pod_condition(const std::string& ns, const std::string& name, const std::string& type,
                                          const std::string& status, const std::string& reason,
                                          const std::string& message) = 0;
  /// Creates an Event.
  virtual model::Status create_event(const EventNote& event) = 0;
};

}  // namespace kai::daemon
