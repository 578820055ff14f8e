#pragma once
// The tests' and benchmarks' names for the product HTTP client (k8s/http/http_client.hpp).

#include "k8s/http/http_client.hpp"

namespace kai::apiserver::testing {
using Endpoint = http::Endpoint;
using Reply = http::Reply;
using HttpClient = http::HttpClient;
using WatchStream = http::WatchStream;
}  // namespace kai::apiserver::testing
