#pragma once
// An HTTPS (and optionally plain HTTP) server: one io thread, keep-alive, request body limit, chunked
// streams. The only Beast translation unit that serves (docs/build-and-ci.md "Translation units"); the test API server and
// the daemon's endpoints (metrics, health, snapshot, admission webhooks) both run on it.

#include <boost/core/noncopyable.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "k8s/http/http_message.hpp"
#include "k8s/model/status.hpp"

namespace kai::http {

/// Settings. Every field has a usable default.
struct ServerOptions {
  /// Address to listen on. Default: "127.0.0.1" (in a pod: "0.0.0.0").
  std::string bind_address = "127.0.0.1";
  /// Serve HTTPS. Default: true.
  bool https = true;
  /// HTTPS port. Default: 0 (ephemeral).
  uint16_t https_port = 0;
  /// PEM certificate chain and private key of the HTTPS listener. Required when https is on.
  std::string cert_file;
  std::string key_file;
  /// Serve plain HTTP too. Default: false.
  bool http = false;
  /// Plain HTTP port. Default: 0 (ephemeral).
  uint16_t http_port = 0;
  /// Largest request body; larger ones get `too_large`'s answer. Default: 3 MiB.
  size_t max_body_bytes = 3 * 1024 * 1024;
};

/// What the server calls. Only `handle` is required; every callback runs on the io thread and must
/// not block for long (long work belongs elsewhere; answer from a cache).
struct Handlers {
  std::function<HttpResponse(const HttpRequest&)> handle;
  /// How long to wait before handling a request (cost models, injected latency). Default: none.
  std::function<std::chrono::microseconds(const HttpRequest&)> delay_for;
  /// A stream started by HttpResponse::start_stream ended (client gone, timeout, cut).
  std::function<void(uint64_t stream_id)> end_stream;
  /// The answer to a request whose body exceeds max_body_bytes. Default: 413 with a plain message.
  std::function<HttpResponse(size_t limit)> too_large;
};

class HttpsServer : private boost::noncopyable {
 public:
  HttpsServer(ServerOptions options, Handlers handlers);
  ~HttpsServer();

  /// Loads the certificate, binds the ports and starts the io thread.
  model::Status start();
  /// Closes the listeners and every connection, and joins the io thread. Idempotent.
  void stop();

  uint16_t https_port() const;
  uint16_t http_port() const;  ///< 0 when plain HTTP is off.
  /// Client connections open now (accepted and not yet closed), for tests.
  size_t connections() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kai::http
