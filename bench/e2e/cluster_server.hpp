#pragma once
// The end-to-end benchmark's API-server process: kai-apiserver (in-process, with its cost model) loaded
// with a kai-gen cluster, which on command creates the cluster's pending pods and times each one from
// creation to bind through its own watch. It runs apart from the daemon so that the daemon's CPU time
// (getrusage RUSAGE_SELF) and resident memory are the benchmark process's own: the server's stored
// JSON alone is about 1 GB at 150,000 pods.
//
// Protocol, one line per message, the child's answers on its stdout:
//   child:  ready <kubeconfig> <nodes> <running pods> <pending pods> <pending groups> <bytes per pod> <load
//   ms> parent: counts                 child: calls <n> <verb resource>... end      (counters then reset)
//   parent: go <pods/s> <quiet ms>  (0 pods/s: all at once)
//   child:  progress <bound> <steady ns>...                                      (when the count grows)
//           done <created> <bound> <first create ns> <last bind ns> <p50 us> <p99 us> <max us> <create us>
//           calls <n> <verb resource>... end
//   parent: churn <live> <interval ms>  (a bare CPU-only pod comes each interval, the one <live>
//           intervals older goes)   ...   parent: stop   child: churned <pods created>
// The run ends when every pod is bound, or `quiet ms` after the last bind or creation. End of input
// stops the server. Times are CLOCK_MONOTONIC (steady_clock), which both processes share.

#include <cstdint>
#include <string>
#include <vector>

namespace kai::bench {

/// argv[1] that turns the benchmark binary into the API-server process.
inline constexpr const char* kClusterServerFlag = "--e2e-cluster-server";

struct ClusterServerSettings {
  /// kai-gen scale in per-mille of the 5,000-node default mix. Default: 200 (1,000 nodes).
  int64_t per_mille = 200;
  /// Cost model: service time per request (µs) and requests served at once. Default: 1 ms, 8.
  int64_t service_us = 1000;
  int64_t max_in_flight = 8;
  /// Kubelet stand-in delay before a bound pod runs. Default: 50 ms (kai-apiserver's).
  int64_t kubelet_delay_ms = 50;
  /// The pending groups as batch Jobs (made at load, each pod owned by its Job, batch-min-member the
  /// gang size) instead of PodGroups the client makes: the daemon's pod grouper then writes every
  /// PodGroup and pod-group-name annotation. Default: false.
  bool as_jobs = false;
  /// Instead of kai-gen's cluster: this many nodes of 8 GPUs, empty, one queue `bench` without
  /// limits, and `uniform_pods` bare one-GPU pods (no PodGroup: the daemon's pod grouper makes one
  /// each) created on `go`, as the outside throughput check has them (bench/README.md "Binds at the
  /// ceiling"). Default: 0 (kai-gen).
  int64_t uniform_nodes = 0;
  int64_t uniform_pods = 0;
};

/// Namespace and node names of the uniform cluster, which the null client binds to by name.
inline constexpr const char* kUniformNamespace = "bench";
std::string uniform_node_name(int64_t i);

/// The arguments after kClusterServerFlag that carry `s`.
std::vector<std::string> cluster_server_args(const ClusterServerSettings& s);

/// Runs the API-server process: `argv` as cluster_server_args made it; commands on stdin.
int run_cluster_server(int argc, char** argv);

}  // namespace kai::bench
