#pragma once
// A small synchronous HTTP(S) client for tests and benchmarks of kai-apiserver: keep-alive requests
// and line-by-line watch streams, TLS verified against a CA file. Not the project's Kubernetes client
// (k8s/client): it knows nothing of Kubernetes. Beast stays inside test_client.cpp.

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

namespace kai::apiserver::testing {

/// Where and how to connect.
struct Endpoint {
  std::string host = "127.0.0.1";
  uint16_t port = 0;
  bool tls = true;
  /// PEM file the server certificate is verified against (TLS only; verification is always on).
  std::string ca_file;
  /// Bearer token; "" sends no Authorization header.
  std::string token;
};

/// One response. `status` is 0 when the request failed on the wire (see `error`).
struct Reply {
  int status = 0;
  std::string body;
  std::map<std::string, std::string> headers;  ///< Lower-case names.
  std::string error;
};

/// Sends requests over one keep-alive connection (reconnecting when the server closed it).
class HttpClient {
 public:
  explicit HttpClient(Endpoint endpoint);
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  /// Sends one request and reads the whole response. Times out after 30 s.
  Reply request(const std::string& method, const std::string& target, const std::string& body = "",
                const std::string& content_type = "application/json");

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// A watch: GETs `target` on its own connection and collects the streamed lines on a thread.
class WatchStream {
 public:
  WatchStream(Endpoint endpoint, std::string target);
  ~WatchStream();
  WatchStream(const WatchStream&) = delete;
  WatchStream& operator=(const WatchStream&) = delete;

  /// The response status, waiting up to `timeout` for the headers (0 on failure or timeout).
  int status(std::chrono::milliseconds timeout = std::chrono::seconds(10));
  /// The next line (one JSON event), or nullopt after `timeout` or once the stream ended and every
  /// line was taken.
  std::optional<std::string> next(std::chrono::milliseconds timeout = std::chrono::seconds(10));
  /// True once the server ended the stream (last chunk or closed connection) or it failed.
  bool ended() const;
  /// True when the stream ended with the final chunk (a clean end), false when it was cut.
  bool ended_cleanly() const;
  /// Closes the connection.
  void stop();

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace kai::apiserver::testing
