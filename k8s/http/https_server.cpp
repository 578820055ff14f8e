// The serving Beast translation unit (docs/build-and-ci.md "Translation units"): HTTPS and HTTP listeners, one session per
// connection, keep-alive, chunked streams. What to answer is the handlers' business.
//
// Threading: one io_context thread runs every session. Producers push stream chunks from any thread
// through net::post, so a session's state is only touched on the io thread and the chunks of one
// stream keep their order.

#include "k8s/http/https_server.hpp"

#include <atomic>
#include <cstdio>
#include <deque>
#include <optional>
#include <thread>

#include "k8s/http/beast.hpp"

namespace kai::http {
namespace {

using namespace beast_names;

using PlainStream = beast::tcp_stream;
using TlsStream = beast::ssl_stream<beast::tcp_stream>;

tcp::socket& raw_socket(PlainStream& s) {
  return s.socket();
}
tcp::socket& raw_socket(TlsStream& s) {
  return beast::get_lowest_layer(s).socket();
}

bool peer_is_loopback(tcp::socket& socket) {
  beast::error_code ec;
  const net::ip::address a = socket.remote_endpoint(ec).address();
  if (ec) return false;
  // A dual-stack listener sees IPv4 peers as ::ffff:a.b.c.d.
  if (a.is_v6() && a.to_v6().is_v4_mapped())
    return net::ip::make_address_v4(net::ip::v4_mapped, a.to_v6()).is_loopback();
  return a.is_loopback();
}

/// One connection. Holds itself alive through pending operations and, while a watch streams, through
/// the store's sink (an idle watch has no pending write that would keep the connection alive).
template <class Stream>
class Session : public std::enable_shared_from_this<Session<Stream>> {
 public:
  Session(Stream stream, const Handlers& handlers, size_t max_body, std::shared_ptr<std::atomic<size_t>> open)
      : stream_(std::move(stream)),
        handlers_(handlers),
        max_body_(max_body),
        timer_(stream_.get_executor()),
        open_(std::move(open)) {
    ++*open_;
  }
  ~Session() { --*open_; }
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  void start() {
    if constexpr (std::is_same_v<Stream, TlsStream>) {
      beast::get_lowest_layer(stream_).expires_after(std::chrono::seconds(10));
      stream_.async_handshake(ssl::stream_base::server,
                              [self = this->shared_from_this()](beast::error_code ec) {
                                if (!ec) self->read();
                              });
    } else {
      read();
    }
  }

 private:
  void read() {
    parser_.emplace();
    parser_->body_limit(boost::none);  // checked against Content-Length below
    parser_->header_limit(64 * 1024);
    beast::get_lowest_layer(stream_).expires_after(std::chrono::seconds(300));
    too_large_ = false;
    http::async_read_header(
        stream_, buffer_, *parser_, [self = this->shared_from_this()](beast::error_code ec, size_t) {
          if (ec) return self->close();
          // A body over the limit is still read (and dropped) before the 413, so that a client that
          // writes its whole body before reading gets the answer instead of a reset connection.
          const auto length = self->parser_->content_length();
          if (length && *length > self->max_body_) {
            if (*length > 16 * self->max_body_) return self->close();
            self->too_large_ = true;
          } else if (!length) {
            self->parser_->body_limit(self->max_body_);  // chunked: Beast counts as it reads
          }
          http::async_read(self->stream_, self->buffer_, *self->parser_,
                           [self](beast::error_code ec2, size_t) { self->on_read(ec2); });
        });
  }

  void on_read(beast::error_code ec) {
    if (ec == http::error::body_limit || (!ec && too_large_)) {
      HttpResponse r;
      if (handlers_.too_large) {
        r = handlers_.too_large(max_body_);
      } else {
        r.status = 413;
        r.content_type = "text/plain";
        r.body = "request entity too large: limit is " + std::to_string(max_body_) + " bytes\n";
      }
      keep_alive_ = false;
      write(std::move(r));
      return;
    }
    if (ec) return close();
    auto& msg = parser_->get();
    keep_alive_ = msg.keep_alive();
    req_.method = std::string(msg.method_string());
    req_.target = std::string(msg.target());
    req_.body = std::move(msg.body());
    req_.content_type = std::string(msg[http::field::content_type]);
    req_.authorization = std::string(msg[http::field::authorization]);
    req_.accept = std::string(msg[http::field::accept]);
    req_.from_loopback = peer_is_loopback(raw_socket(stream_));
    const auto delay = handlers_.delay_for ? handlers_.delay_for(req_) : std::chrono::microseconds(0);
    if (delay.count() > 0) {
      timer_.expires_after(delay);
      timer_.async_wait([self = this->shared_from_this()](beast::error_code) { self->process(); });
    } else {
      process();
    }
  }

  void process() {
    HttpResponse r;
    try {
      r = handlers_.handle(req_);
    } catch (const std::exception& e) {
      // A handler must not throw; if one does, the client still gets an answer.
      r = HttpResponse{};
      r.status = 500;
      r.content_type = "text/plain";
      r.body = std::string("internal error: ") + e.what() + "\n";
    }
    if (r.start_stream) return start_watch(std::move(r));
    write(std::move(r));
  }

  void write(HttpResponse r) {
    if (r.close_without_answer) return close();
    auto res = std::make_shared<http::response<http::string_body>>(static_cast<http::status>(r.status), 11);
    res->set(http::field::content_type, r.content_type);
    res->set(http::field::cache_control, "no-cache, private");
    for (const auto& [k, v] : r.headers) res->set(k, v);
    res->keep_alive(keep_alive_ && !r.close_mid_body);
    if (r.close_mid_body) {
      // Announce the whole length, send half, close: the client sees a truncated body.
      const size_t full = r.body.size();
      res->body() = r.body.substr(0, full / 2);
      res->content_length(full);
      auto sr = std::make_shared<http::response_serializer<http::string_body>>(*res);
      http::async_write_header(stream_, *sr,
                               [self = this->shared_from_this(), res, sr](beast::error_code ec, size_t) {
                                 if (ec) return self->close();
                                 net::async_write(self->stream_, net::buffer(res->body()),
                                                  [self, res](beast::error_code, size_t) { self->close(); });
                               });
      return;
    }
    res->body() = std::move(r.body);
    res->prepare_payload();
    const bool close_after = r.close_after_answer;
    http::async_write(stream_, *res,
                      [self = this->shared_from_this(), res, close_after](beast::error_code ec, size_t) {
                        if (ec || !res->keep_alive() || close_after) return self->close();
                        self->read();
                      });
  }

  void close() {
    beast::error_code ignored;
    raw_socket(stream_).shutdown(tcp::socket::shutdown_both, ignored);
    raw_socket(stream_).close(ignored);
  }

  // ---------------------------------------------------------------------------------- watch
  void start_watch(HttpResponse r) {
    watch_hdr_.result(http::status::ok);
    watch_hdr_.version(11);
    watch_hdr_.set(http::field::content_type, "application/json");
    watch_hdr_.set(http::field::cache_control, "no-cache, private");
    watch_hdr_.chunked(true);
    watch_sr_.emplace(watch_hdr_);
    beast::get_lowest_layer(stream_).expires_never();
    watching_ = true;
    http::async_write_header(
        stream_, *watch_sr_,
        [self = this->shared_from_this(), r = std::move(r)](beast::error_code ec, size_t) {
          if (ec) return self->end_watch(false);
          self->begin_stream(r);
        });
  }

  void begin_stream(const HttpResponse& r) {
    auto self = this->shared_from_this();
    auto ex = stream_.get_executor();
    StreamSink sink;
    sink.push = [self, ex](std::shared_ptr<const std::string> line) {
      net::post(ex, [self, line = std::move(line)] { self->enqueue(line); });
    };
    sink.close = [self, ex] { net::post(ex, [self] { self->end_watch(false); }); };
    watch_id_ = r.start_stream(std::move(sink));
    if (r.stream_timeout_seconds > 0) {
      timer_.expires_after(std::chrono::seconds(r.stream_timeout_seconds));
      timer_.async_wait([self](beast::error_code ec) {
        if (!ec) self->end_watch(true);
      });
    }
    // A read that only completes when the client goes away.
    raw_socket(stream_).async_wait(tcp::socket::wait_read,
                                   [self](beast::error_code) { self->end_watch(false); });
  }

  void enqueue(std::shared_ptr<const std::string> line) {
    if (!watching_) return;
    queue_.push_back(std::move(line));
    if (!writing_) write_next();
  }

  void write_next() {
    if (queue_.empty()) {
      writing_ = false;
      if (finishing_) finish();
      return;
    }
    writing_ = true;
    net::async_write(stream_, http::make_chunk(net::buffer(*queue_.front())),
                     [self = this->shared_from_this()](beast::error_code ec, size_t) {
                       self->queue_.pop_front();
                       if (ec) {
                         self->queue_.clear();
                         self->writing_ = false;
                         return self->end_watch(false);
                       }
                       self->write_next();
                     });
  }

  /// Ends the stream: `graceful` sends the last chunk (timeout), otherwise the connection is cut
  /// (client gone, dropped by fault injection, 410).
  void end_watch(bool graceful) {
    if (!watching_) return;
    if (watch_id_ != 0 && handlers_.end_stream) handlers_.end_stream(watch_id_);
    watch_id_ = 0;
    timer_.cancel();
    if (graceful) {
      finishing_ = true;
      if (!writing_) finish();
      return;
    }
    if (writing_) {
      // Let queued events (e.g. a 410 ERROR event) go out first, then cut the connection.
      finishing_ = true;
      cut_after_ = true;
      return;
    }
    watching_ = false;
    close();
  }

  void finish() {
    watching_ = false;
    if (cut_after_) return close();
    net::async_write(stream_, http::make_chunk_last(),
                     [self = this->shared_from_this()](beast::error_code, size_t) { self->close(); });
  }

  Stream stream_;
  const Handlers& handlers_;
  size_t max_body_;
  net::steady_timer timer_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  HttpRequest req_;
  bool keep_alive_ = true;
  bool too_large_ = false;
  http::response<http::empty_body> watch_hdr_;
  std::optional<http::response_serializer<http::empty_body>> watch_sr_;
  std::deque<std::shared_ptr<const std::string>> queue_;
  uint64_t watch_id_ = 0;
  bool watching_ = false;
  bool writing_ = false;
  bool finishing_ = false;
  bool cut_after_ = false;
  std::shared_ptr<std::atomic<size_t>> open_;  ///< The server's count of open connections.
};

}  // namespace

struct HttpsServer::Impl {
  ServerOptions options;
  Handlers handlers;
  net::io_context ioc{1};
  ssl::context tls{ssl::context::tls_server};
  std::optional<tcp::acceptor> https_acceptor;
  std::optional<tcp::acceptor> http_acceptor;
  uint16_t https_port = 0;
  uint16_t http_port = 0;
  std::thread thread;
  bool started = false;
  /// Sessions alive; shared with them, as the last ones may end after stop() returned.
  std::shared_ptr<std::atomic<size_t>> open = std::make_shared<std::atomic<size_t>>(0);

  template <bool kTls>
  void accept(tcp::acceptor& acceptor) {
    acceptor.async_accept(net::make_strand(ioc), [this, &acceptor](beast::error_code ec, tcp::socket socket) {
      if (ec == net::error::operation_aborted) return;
      if (!ec) {
        socket.set_option(tcp::no_delay(true));
        if constexpr (kTls) {
          std::make_shared<Session<TlsStream>>(TlsStream(beast::tcp_stream(std::move(socket)), tls), handlers,
                                               options.max_body_bytes, open)
              ->start();
        } else {
          std::make_shared<Session<PlainStream>>(PlainStream(std::move(socket)), handlers,
                                                 options.max_body_bytes, open)
              ->start();
        }
      }
      accept<kTls>(acceptor);
    });
  }
};

HttpsServer::HttpsServer(ServerOptions options, Handlers handlers) : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
  impl_->handlers = std::move(handlers);
}

HttpsServer::~HttpsServer() {
  try {
    stop();
  } catch (const std::exception& e) {  // a failed join: nothing is left to do but say so
    std::fprintf(stderr, "https server: stopping failed: %s\n", e.what());
  }
}

model::Status HttpsServer::start() {
  Impl& m = *impl_;
  if (m.started) return model::Status::ok();
  if (!m.handlers.handle) return model::Status::error("HttpsServer: no request handler");
  if (!m.options.https && !m.options.http) return model::Status::error("HttpsServer: neither HTTPS nor HTTP is on");
  if (m.options.https) {
    try {
      m.tls.set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                        ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1);
      m.tls.use_certificate_chain_file(m.options.cert_file);
      m.tls.use_private_key_file(m.options.key_file, ssl::context::pem);
    } catch (const std::exception& e) {
      return model::Status::error("TLS setup failed (certificate " + m.options.cert_file + ", key " +
                                  m.options.key_file + "): " + e.what());
    }
  }
  try {
    auto open = [&](uint16_t port) {
      tcp::acceptor a(m.ioc);
      tcp::endpoint ep(net::ip::make_address(m.options.bind_address), port);
      a.open(ep.protocol());
      a.set_option(net::socket_base::reuse_address(true));
      a.bind(ep);
      a.listen(net::socket_base::max_listen_connections);
      return a;
    };
    if (m.options.https) {
      m.https_acceptor.emplace(open(m.options.https_port));
      m.https_port = m.https_acceptor->local_endpoint().port();
    }
    if (m.options.http) {
      m.http_acceptor.emplace(open(m.options.http_port));
      m.http_port = m.http_acceptor->local_endpoint().port();
    }
  } catch (const std::exception& e) {
    return model::Status::error("cannot listen on " + m.options.bind_address + ": " + e.what());
  }
  if (m.https_acceptor) m.accept<true>(*m.https_acceptor);
  if (m.http_acceptor) m.accept<false>(*m.http_acceptor);
  m.thread = std::thread([&m] { m.ioc.run(); });
  m.started = true;
  return model::Status::ok();
}

void HttpsServer::stop() {
  Impl& m = *impl_;
  if (!m.started) return;
  m.started = false;
  net::post(m.ioc, [&m] {
    beast::error_code ec;
    if (m.https_acceptor) m.https_acceptor->close(ec);
    if (m.http_acceptor) m.http_acceptor->close(ec);
  });
  m.ioc.stop();
  if (m.thread.joinable()) m.thread.join();
}

uint16_t HttpsServer::https_port() const { return impl_->https_port; }
uint16_t HttpsServer::http_port() const { return impl_->http_port; }
size_t HttpsServer::connections() const {
  return impl_->open->load();
}

}  // namespace kai::http
