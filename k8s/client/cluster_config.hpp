#pragma once
// Where the API server is and how to authenticate: a kubeconfig (--kubeconfig, $KUBECONFIG,
// ~/.kube/config; current-context; certificate-authority(-data), client-certificate(-data),
// client-key(-data), token, insecure-skip-tls-verify) or the in-cluster service account
// (KUBERNETES_SERVICE_HOST/PORT, the token file re-read as it rotates, the CA file).

#include <string>

#include "k8s/http/http_client.hpp"
#include "k8s/model/status.hpp"

namespace kai::k8s {

struct ClusterConfig {
  http::Endpoint endpoint;
  std::string default_namespace = "default";
  std::string source;  ///< "kubeconfig /path (context x)" or "in-cluster", for logs (never the token).
};

/// Reads a kubeconfig file. Errors name the file and the field; a tokenFile that cannot be read is one.
model::Result<ClusterConfig> load_kubeconfig(const std::string& path, const std::string& context = "");

/// Reads the kubeconfig files of a ':'-separated list ($KUBECONFIG) and merges them as kubectl does:
/// the first file to set a cluster, context or user name, or current-context, wins; relative paths
/// stay relative to the file that holds them. Listed files that do not exist are skipped; none
/// existing is an error.
model::Result<ClusterConfig> load_kubeconfig_list(const std::string& paths, const std::string& context = "");

/// The in-cluster configuration; `root` replaces "/" in the service-account paths (tests).
model::Result<ClusterConfig> in_cluster_config(const std::string& root = "");

/// --kubeconfig when given, else $KUBECONFIG (merged, see load_kubeconfig_list), else in-cluster when
/// KUBERNETES_SERVICE_HOST is set, else ~/.kube/config.
model::Result<ClusterConfig> resolve_cluster_config(const std::string& kubeconfig_flag);

}  // namespace kai::k8s
