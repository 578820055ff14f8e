#pragma once
// The reflectors of the workload owners the pod grouper reads (docs/pod-grouping.md "Owners"): one per
// owner kind the API server serves (API discovery, k8s/client/owner_discovery.hpp), each logging
// only the fields the groupers read (model::owner_for_log), and a watch of the
// CustomResourceDefinitions that discovers again when one changes, so that an operator installed
// while the scheduler runs has its kind watched from then on.

#include <boost/core/noncopyable.hpp>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "k8s/client/owner_discovery.hpp"
#include "k8s/client/reflector.hpp"

namespace kai::daemon {

class OwnerWatch : private boost::noncopyable {
 public:
  using Deliver = std::function<void(k8s::ReflectorEvent)>;
  using Known = std::map<std::string, std::string>;

  OwnerWatch(k8s::KubeClient& client, Deliver deliver);
  ~OwnerWatch();

  /// Asks the API server which owner kinds it serves (blocking); returns their watch kinds
  /// ("Kind.group"). A failed discovery is logged and leaves the kinds found before.
  std::vector<std::string> discover();
  /// Starts a reflector per discovered kind, diffed against `known[kind]` (what the log holds) and
  /// resuming its watch from `positions[kind]` (Reflector::start), and the CRD watch.
  void start(std::map<std::string, Known>& known, const std::map<std::string, std::string>& positions = {});
  /// Lists `kind` again (the ingest lost some of its events); false when it is not an owner kind here.
  bool relist(const std::string& kind, Known known);
  void stop();

 private:
  void start_kind_locked(const k8s::OwnerResource& r, Known known, const std::string& resume_from = "");
  void on_crd_event(const k8s::ReflectorEvent& ev);

  k8s::KubeClient& client_;
  Deliver deliver_;
  std::mutex mu_;
  std::vector<k8s::OwnerResource> resources_;                      ///< guarded by mu_
  std::map<std::string, std::unique_ptr<k8s::Reflector>> reflectors_;  ///< guarded by mu_
  bool started_ = false;                                           ///< guarded by mu_
  bool crds_listed_ = false;  ///< The CRD watch's thread only.
  std::unique_ptr<k8s::Reflector> crd_watch_;
};

}  // namespace kai::daemon
