#pragma once
// A small synchronous HTTP(S) client: keep-alive requests and line-by-line streams (watches), TLS
// verified against a CA by default, bearer tokens, client certificates, timeouts on every operation.
// It knows nothing of Kubernetes (k8s/client builds the API on it). Beast stays inside
// http_client.cpp. One HttpClient is one connection: use one per thread, or a pool.

#include <boost/core/noncopyable.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

namespace kai::http {

/// Where and how to connect.
struct Endpoint {
  std::string host = "127.0.0.1";  ///< IP literal or DNS name.
  uint16_t port = 0;
  bool tls = true;
  /// PEM file or PEM text the server certificate is verified against. Both empty: the system's CAs.
  std::string ca_file;
  std::string ca_pem;
  /// Only when a kubeconfig says `insecure-skip-tls-verify: true`.
  bool insecure_skip_verify = false;
  /// Client certificate and key (PEM text), for kubeconfigs that authenticate that way.
  std::string client_cert_pem;
  std::string client_key_pem;
  /// Bearer token; "" sends no Authorization header. `token_source`, when set, is asked before every
  /// request instead (rotated service-account tokens).
  std::string token;
  std::function<std::string()> token_source;
  /// Timeout of connect + request + response. Default: 30 s.
  std::chrono::milliseconds timeout{30000};
};

/// One response. `status` is 0 when the request failed on the wire (see `error`).
struct Reply {
  int status = 0;
  std::string body;
  std::map<std::string, std::string> headers;  ///< Lower-case names.
  std::string error;
};

/// Sends requests over one keep-alive connection (reconnecting when the server closed it).
class HttpClient : private boost::noncopyable {
 public:
  explicit HttpClient(Endpoint endpoint);
  ~HttpClient();

  /// Sends one request and reads the whole response, within the endpoint's timeout. A request about
  /// to go out on a kept-alive connection the server has closed goes out on a new one instead. When
  /// a reused connection is lost with no answer, the request is sent once more only if that cannot
  /// apply it twice: the method is idempotent (GET, HEAD, OPTIONS, PUT, DELETE), or not one byte of
  /// it left this host. A POST or PATCH that may have reached the server fails (status 0) instead.
  Reply request(const std::string& method, const std::string& target, const std::string& body = "",
                const std::string& content_type = "application/json");

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// A stream: GETs `target` on its own connection and collects the streamed lines on a thread.
class WatchStream : private boost::noncopyable {
 public:
  WatchStream(Endpoint endpoint, std::string target);
  ~WatchStream();

  /// The response status, waiting up to `timeout` for the headers (0 on failure or timeout).
  int status(std::chrono::milliseconds timeout = std::chrono::seconds(10));
  /// The response headers (lower-case names) once status() is known; empty before, or on failure.
  /// A 429 carries Retry-After here.
  std::map<std::string, std::string> headers() const;
  /// The next line (one JSON event), or nullopt after `timeout` or once the stream ended and every
  /// line was taken.
  std::optional<std::string> next(std::chrono::milliseconds timeout = std::chrono::seconds(10));
  /// True once the server ended the stream (last chunk or closed connection) or it failed.
  bool ended() const;
  /// True when the stream ended with the final chunk (a clean end), false when it was cut.
  bool ended_cleanly() const;
  /// The lines received with a non-200 answer that was streamed (usually empty: plain error bodies are
  /// not kept; the status code says what failed).
  std::string error_body() const;
  /// Why the connection failed ("" when it did not).
  std::string error() const;
  /// Closes the connection.
  void stop();

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace kai::http
