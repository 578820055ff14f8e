#pragma once
// The HTTP semantics of the test API server without any transport: paths, verbs, query parameters,
// authentication, discovery, OpenAPI, test controls (/debug/...), counters, faults and the cost
// model. The shared HTTPS transport (k8s/http) feeds it requests and streams the watches it starts.

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "k8s/apiserver/api_server.hpp"
#include "k8s/apiserver/store.hpp"
#include "k8s/http/http_message.hpp"

namespace kai::apiserver {

using HttpRequest = http::HttpRequest;
using HttpResponse = http::HttpResponse;

/// Routes requests to the store. Thread-safe.
class Router {
 public:
  Router(ServerOptions options, std::string token);

  Store& store() { return store_; }
  const Store& store() const { return store_; }

  /// How long the transport waits before calling handle(): injected delay plus the cost model's
  /// queueing and service time. Also the place where a request is admitted to a cost-model server.
  std::chrono::microseconds delay_for(const HttpRequest& req);
  /// Answers a request. Never throws.
  HttpResponse handle(const HttpRequest& req);
  /// Ends a watch started by a response's start_stream.
  void unwatch(uint64_t id) { store_.unwatch(id); }

  void set_faults(const Faults& f);
  void set_cost_model(const CostModel& c);
  std::map<std::string, uint64_t> counts() const;
  std::vector<RequestAttributes> requests_seen() const;
  void reset_counts();
  /// The server's own host:port, for /api's serverAddressByClientCIDRs.
  void set_address(std::string address) { address_ = std::move(address); }

 private:
  HttpResponse dispatch(const HttpRequest& req, const std::string& path,
                        const std::map<std::string, std::string>& query);
  HttpResponse debug(const HttpRequest& req, const std::string& path);
  HttpResponse discovery(const std::string& path, bool& handled);
  HttpResponse openapi(const std::string& path, bool& handled);
  bool fault_applies(const std::string& path) const;
  void count(const std::string& verb, const ResourceInfo& r, const std::string& sub, const std::string& ns,
             const std::string& name);

  ServerOptions options_;
  std::string token_;
  std::string address_;
  Store store_;
  mutable std::mutex mu_;  // faults_, cost_, slots_, counts_
  Faults faults_;
  CostModel cost_;
  std::vector<std::chrono::steady_clock::time_point> slots_;
  std::map<std::string, uint64_t> counts_;
  std::set<RequestAttributes> seen_;
};

}  // namespace kai::apiserver
