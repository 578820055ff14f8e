#pragma once
// What the daemon's end-to-end tests (cluster_fixture.hpp) and bench/daemon_e2e_bench.cpp share, free
// of GoogleTest: where the sources are, kai-apiserver's settings with the project's CRDs, and the
// options of an in-process daemon against it.

#include <cstdlib>
#include <string>

#include "actors/daemon/daemon.hpp"
#include "k8s/apiserver/api_server.hpp"

namespace kai::e2e {

/// The source tree: $KAI_SOURCE_DIR, else the one the binary was configured from.
inline std::string source_dir() {
  const char* env = std::getenv("KAI_SOURCE_DIR");
  return env != nullptr ? env : KAI_DEFAULT_SOURCE_DIR;
}

/// kai-apiserver with the CRDs of deploy/crds and the kubelet stand-in on (bound pods start, graceful
/// deletions are confirmed); everything else is the server's default.
inline apiserver::ServerOptions test_server_options() {
  apiserver::ServerOptions o;
  o.crd_dir = source_dir() + "/deploy/crds";
  o.kubelet = true;
  return o;
}

/// An in-process daemon against `kubeconfig` with its event log in `log_dir` and no metrics port (tests
/// run in parallel); everything else is the daemon's default.
inline daemon::DaemonOptions in_process_daemon_options(const std::string& kubeconfig,
                                                       const std::string& log_dir) {
  daemon::DaemonOptions o;
  o.kubeconfig = kubeconfig;
  o.log_dir = log_dir;
  o.metrics_port = 0;
  return o;
}

}  // namespace kai::e2e
