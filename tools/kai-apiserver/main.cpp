// kai-apiserver: the test Kubernetes API server as a standalone process (for kubectl, the demo and
// SIGKILL failover tests). Serves until SIGINT or SIGTERM.

#include <CLI/CLI.hpp>
#include <csignal>
#include <cstdio>
#include <iostream>

#include "k8s/apiserver/api_server.hpp"
#include "tools/common/guarded_main.hpp"
#include "tools/common/stop_signals.hpp"

static int run_tool(int argc, char** argv) {
  kai::apiserver::ServerOptions opt;
  opt.crd_dir = "deploy/crds";
  int64_t service_us = 0;
  int max_in_flight = 0;
  int64_t kubelet_delay_ms = 50;
  CLI::App app{"kai-apiserver: an in-process Kubernetes API server for tests and kubectl"};
  app.add_option("--https-port", opt.https_port, "HTTPS port on 127.0.0.1 (0 = ephemeral)")
      ->capture_default_str();
  app.add_option("--http-port", opt.http_port, "plain HTTP port on 127.0.0.1 (0 = ephemeral)")
      ->capture_default_str();
  app.add_flag("!--no-http", opt.http, "do not serve plain HTTP");
  app.add_option("--data-dir", opt.data_dir,
                 "directory for the certificate and kubeconfig (default: a temp dir)");
  app.add_option("--crd-dir", opt.crd_dir, "directory of CustomResourceDefinition YAML files (\"\" = none)")
      ->capture_default_str();
  app.add_option("--token", opt.token,
                 "bearer token clients must send (default: random; written to the kubeconfig)");
  app.add_flag("--kubelet", opt.kubelet,
               "kubelet stand-in: bound pods become Running, graceful deletes confirmed");
  app.add_option("--kubelet-delay-ms", kubelet_delay_ms, "delay of each kubelet stand-in action")
      ->capture_default_str();
  app.add_option("--history", opt.history_limit, "watch events kept for resuming watches")
      ->capture_default_str();
  app.add_option("--service-time-us", service_us, "cost model: service time per request (µs)")
      ->capture_default_str();
  app.add_option("--max-in-flight", max_in_flight, "cost model: requests served at once (0 = unlimited)")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  opt.kubelet_delay = std::chrono::milliseconds(kubelet_delay_ms);
  opt.cost.service_time = std::chrono::microseconds(service_us);
  opt.cost.max_in_flight = max_in_flight;

  const kai::tools::StopSignals stop_signals;

  kai::apiserver::ApiServer server(opt);
  if (auto s = server.start(); !s) {
    std::cerr << "kai-apiserver: " << s.message() << "\n";
    return 1;
  }
  std::cout << "kubeconfig: " << server.kubeconfig_path() << "\n"
            << "https: " << server.https_url() << "\n";
  if (opt.http) std::cout << "http: " << server.http_url() << "\n";
  std::cout << "ca: " << server.ca_path() << std::endl;
  const int sig = stop_signals.wait();
  std::cerr << "kai-apiserver: stopping on signal " << sig << "\n";
  server.stop();
  return 0;
}

int main(int argc, char** argv) {
  return kai::tools::guarded_main("kai-apiserver", [&] { return run_tool(argc, argv); });
}
