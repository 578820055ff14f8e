#pragma once
// Plain HTTP messages between the Beast transport (https_server.cpp) and whoever answers requests:
// the test API server's router, the daemon's metrics / health / webhook endpoints. No Beast here.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace kai::http {

/// One request as read from the wire.
struct HttpRequest {
  std::string method;
  std::string target;  ///< Path and query.
  std::string body;
  std::string content_type;
  std::string authorization;
  std::string accept;
  /// The peer connected from a loopback address (127.0.0.0/8, ::1): a process on this host or, in a
  /// pod, `kubectl port-forward` / `kubectl exec`. Servers use it to keep local-only paths local.
  bool from_loopback = false;
};

/// Where a streamed response's chunks go. Both functions may be called from any thread.
struct StreamSink {
  std::function<void(std::shared_ptr<const std::string> chunk)> push;  ///< One chunk, sent in order.
  std::function<void()> close;  ///< The producer ends the stream by cutting the connection.
};

/// The answer to a request: a whole body, or a chunked stream.
struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
  /// Fault injection for test servers: send the headers and half of the body, then close.
  bool close_mid_body = false;
  /// Fault injection for test servers: close the connection instead of answering (the request was
  /// handled), as when a server or a proxy dies between reading a request and answering it.
  bool close_without_answer = false;
  /// Fault injection for test servers: answer as usual (keep-alive as asked), then close the
  /// connection, as a server does with a kept-alive connection that it ends while idle.
  bool close_after_answer = false;
  /// Set for a stream (a watch): the transport sends 200 with a chunked body, then calls this with a
  /// sink; it returns a stream id for HttpsServer::Handlers::end_stream (0 when the stream already
  /// ended, e.g. with a 410 ERROR event).
  std::function<uint64_t(StreamSink)> start_stream;
  /// Stream only: end it cleanly (last chunk) after this many seconds (0 = never).
  int64_t stream_timeout_seconds = 0;
};

}  // namespace kai::http
