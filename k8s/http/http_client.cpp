// The client Beast unit. Requests run as async operations driven by io_context::run_for, so that a
// server that never answers fails the call instead of hanging it (a blocking read would wait for
// such a server forever).

#include "k8s/http/http_client.hpp"

#include <openssl/ssl.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstdio>
#include <condition_variable>
#include <deque>
#include <limits>
#include <mutex>
#include <thread>
#include <variant>
#include <vector>

#include "k8s/http/beast.hpp"

namespace kai::http {
namespace {

using namespace beast_names;

/// A Beast rate policy that limits nothing and counts the bytes the socket accepted for sending.
/// It lets a failed request tell "not one byte left this host" (safe to send again, whatever the
/// method) from "some of it may have reached the server": ssl_stream reports 0 bytes for every
/// failed write, whatever its lower layer had already sent.
class SentBytes {
 public:
  uint64_t sent = 0;

 private:
  friend class beast::rate_policy_access;
  size_t available_read_bytes() const noexcept { return std::numeric_limits<size_t>::max(); }
  size_t available_write_bytes() const noexcept { return std::numeric_limits<size_t>::max(); }
  void transfer_read_bytes(size_t) noexcept {}
  void transfer_write_bytes(size_t n) noexcept { sent += n; }
  void on_timer() noexcept {}
};

using Tcp = beast::basic_stream<tcp, net::any_io_executor, SentBytes>;
using Plain = Tcp;
using Tls = beast::ssl_stream<Tcp>;

/// A connected plain or TLS stream.
struct Conn {
  net::io_context ioc{1};
  ssl::context ctx{ssl::context::tls_client};
  std::variant<std::monostate, Plain, Tls> stream;
  beast::flat_buffer buffer;

  Tcp& lowest() {
    if (auto* p = std::get_if<Plain>(&stream)) return *p;
    return beast::get_lowest_layer(std::get<Tls>(stream));
  }
  tcp::socket& socket() { return lowest().socket(); }

  /// True when this idle kept-alive connection can no longer carry a request: the server closed or
  /// reset it, or sent something unasked (leftover bytes, a TLS alert) since the last answer. Checked
  /// before a request is written, so that no request is sent on a connection already known dead.
  /// It cannot see a close that is still on its way: that race is what the retry rules are for.
  bool idle_connection_lost() {
    if (std::holds_alternative<std::monostate>(stream)) return true;
    if (buffer.size() > 0) return true;
    if (auto* t = std::get_if<Tls>(&stream); t != nullptr && SSL_pending(t->native_handle()) > 0) return true;
    char byte;
    for (;;) {
      const ssize_t n = ::recv(socket().native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
      if (n < 0 && errno == EINTR) continue;
      // 0: the server closed it; > 0: unasked bytes; an error other than "nothing yet": reset.
      return !(n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK));
    }
  }

  /// Runs one asynchronous step (`start(handler)`) until it completes or `timeout` passes; a step
  /// still pending then is cancelled by closing the socket and reported as timed out. Synchronous
  /// connect and handshake would hang forever on a peer that accepts and never answers.
  template <class Start>
  beast::error_code run_step(tcp::socket& sock, std::chrono::milliseconds timeout, Start start) {
    beast::error_code result = net::error::timed_out;
    bool done = false;
    start([&](beast::error_code ec) {
      result = ec;
      done = true;
    });
    ioc.restart();
    ioc.run_for(timeout);
    if (!done) {
      beast::error_code ignored;
      sock.close(ignored);
      ioc.restart();
      ioc.run_for(std::chrono::seconds(1));  // lets the cancelled handler run before `result` goes away
      result = net::error::timed_out;
    }
    ioc.restart();
    return result;
  }

  /// Connects (and handshakes) within the endpoint's timeout; returns an error message or "".
  std::string connect(const Endpoint& ep) {
    beast::error_code ec;
    buffer.clear();
    std::vector<tcp::endpoint> targets;
    const auto ip = net::ip::make_address(ep.host, ec);
    if (!ec) {
      targets.emplace_back(ip, ep.port);
    } else {
      tcp::resolver resolver(ioc);
      auto results = resolver.resolve(ep.host, std::to_string(ep.port), ec);
      if (ec) return "cannot resolve " + ep.host + ": " + ec.message();
      for (const auto& r : results) targets.push_back(r.endpoint());
    }
    auto connect_socket = [&](tcp::socket& socket) -> std::string {
      beast::error_code last = net::error::host_not_found;
      for (const auto& t : targets) {
        socket.close(ec);
        last = run_step(socket, ep.timeout, [&](auto handler) { socket.async_connect(t, handler); });
        if (!last) return "";
      }
      return "cannot connect to " + ep.host + ":" + std::to_string(ep.port) + ": " + last.message();
    };
    if (!ep.tls) {
      stream.emplace<Plain>(ioc);
      return connect_socket(std::get<Plain>(stream).socket());
    }
    if (ep.insecure_skip_verify) {
      ctx.set_verify_mode(ssl::verify_none);
    } else {
      ctx.set_verify_mode(ssl::verify_peer);
      if (!ep.ca_pem.empty()) {
        ctx.add_certificate_authority(net::buffer(ep.ca_pem), ec);
        if (ec) return "cannot load the certificate authority (PEM data): " + ec.message();
      } else if (!ep.ca_file.empty()) {
        ctx.load_verify_file(ep.ca_file, ec);
        if (ec) return "cannot load the certificate authority " + ep.ca_file + ": " + ec.message();
      } else {
        ctx.set_default_verify_paths(ec);
      }
    }
    if (!ep.client_cert_pem.empty()) {
      ctx.use_certificate_chain(net::buffer(ep.client_cert_pem), ec);
      if (!ec) ctx.use_private_key(net::buffer(ep.client_key_pem), ssl::context::pem, ec);
      if (ec) return "cannot load the client certificate or key: " + ec.message();
    }
    auto& s = stream.emplace<Tls>(ioc, ctx);
    if (!ep.insecure_skip_verify) s.set_verify_callback(ssl::host_name_verification(ep.host));
    beast::error_code is_ip;
    net::ip::make_address(ep.host, is_ip);
    if (is_ip) SSL_set_tlsext_host_name(s.native_handle(), ep.host.c_str());  // SNI for names only
    if (std::string err = connect_socket(beast::get_lowest_layer(s).socket()); !err.empty()) return err;
    ec = run_step(beast::get_lowest_layer(s).socket(), ep.timeout,
                  [&](auto handler) { s.async_handshake(ssl::stream_base::client, handler); });
    if (ec) {
      return "TLS handshake with " + ep.host + ":" + std::to_string(ep.port) + " failed: " + ec.message() +
             (ec.message().find("certificate verify failed") != std::string::npos
                  ? " (the server's certificate is not signed by the configured certificate authority)"
                  : "");
    }
    return "";
  }

  void close() {
    beast::error_code ec;
    if (std::holds_alternative<std::monostate>(stream)) return;
    socket().shutdown(tcp::socket::shutdown_both, ec);
    socket().close(ec);
  }
};

http::request<http::string_body> make_request(const Endpoint& ep, const std::string& method,
                                              const std::string& target, const std::string& body,
                                              const std::string& content_type) {
  http::request<http::string_body> req;
  req.method_string(method);
  req.target(target);
  req.version(11);
  req.set(http::field::host, ep.host + ":" + std::to_string(ep.port));
  req.set(http::field::accept, "application/json");
  req.set(http::field::user_agent, "kai-scheduler");
  const std::string token = ep.token_source ? ep.token_source() : ep.token;
  if (!token.empty()) req.set(http::field::authorization, "Bearer " + token);
  if (!body.empty() || method == "POST" || method == "PUT" || method == "PATCH") {
    req.set(http::field::content_type, content_type);
    req.body() = body;
  }
  req.keep_alive(true);
  req.prepare_payload();
  return req;
}

}  // namespace

// ------------------------------------------------------------------------------------ HttpClient

namespace {

/// What one attempt of a request did on the wire, for the retry rule in HttpClient::request.
struct Attempt {
  bool reused = false;     ///< It went out on a kept-alive connection (which may have died idle).
  uint64_t sent = 0;       ///< Bytes of the request the socket accepted.
  bool answered = false;   ///< A response header arrived: the server processed the request.
  bool timed_out = false;  ///< The endpoint's timeout ended it: a slow server, not a lost connection.
};

/// RFC 9110 §9.2.2: sending these twice has the effect of sending them once.
bool idempotent(const std::string& method) {
  return method == "GET" || method == "HEAD" || method == "OPTIONS" || method == "TRACE" || method == "PUT" ||
         method == "DELETE";
}

/// Whether a request that failed on the wire (status 0) is sent once more, on a new connection.
///
/// Only a failure on a reused connection is retried: a kept-alive connection may have been closed
/// by the server while idle, which says nothing about the server; a new connection that fails
/// does. A request that got a response header, or that ran out of time, is never retried here.
/// Otherwise, after the request was (partly or wholly) written, the server may have received and
/// processed it before the connection died: nothing on the client can tell, so only an idempotent
/// method may be sent again. A POST or PATCH may be sent again only when not one byte of it left
/// this host (the socket accepted nothing: see SentBytes). A request found to be headed for a
/// connection already closed is not a retry at all: it goes out on a new connection at once
/// (Conn::idle_connection_lost).
bool may_retry(const std::string& method, const Attempt& a) {
  if (!a.reused || a.answered || a.timed_out) return false;
  return idempotent(method) || a.sent == 0;
}

}  // namespace

struct HttpClient::Impl {
  Endpoint ep;
  std::unique_ptr<Conn> conn;

  Reply once(const std::string& method, const std::string& target, const std::string& body,
             const std::string& content_type, Attempt& attempt) {
    attempt = Attempt{};
    Reply reply;
    if (conn && conn->idle_connection_lost()) conn.reset();
    if (!conn) {
      conn = std::make_unique<Conn>();
      if (std::string err = conn->connect(ep); !err.empty()) {
        conn.reset();
        reply.error = err;
        return reply;
      }
    } else {
      attempt.reused = true;
    }
    auto req = make_request(ep, method, target, body, content_type);
    http::response_parser<http::string_body> parser;
    parser.body_limit(boost::none);
    beast::error_code result = net::error::timed_out;
    bool done = false;
    auto on_read = [&](beast::error_code ec, size_t) {
      result = ec;
      done = true;
    };
    auto on_write = [&](beast::error_code ec, size_t) {
      if (ec) {
        result = ec;
        done = true;
        return;
      }
      std::visit(
          [&](auto& s) {
            if constexpr (!std::is_same_v<std::decay_t<decltype(s)>, std::monostate>) {
              http::async_read(s, conn->buffer, parser, on_read);
            }
          },
          conn->stream);
    };
    conn->lowest().rate_policy().sent = 0;
    std::visit(
        [&](auto& s) {
          if constexpr (!std::is_same_v<std::decay_t<decltype(s)>, std::monostate>) {
            http::async_write(s, req, on_write);
          }
        },
        conn->stream);
    conn->ioc.restart();
    conn->ioc.run_for(ep.timeout);
    if (!done) {
      conn->close();
      conn->ioc.restart();
      conn->ioc.run_for(std::chrono::seconds(1));
      result = net::error::timed_out;
      attempt.timed_out = true;
    }
    attempt.sent = conn->lowest().rate_policy().sent;
    attempt.answered = parser.is_header_done();
    if (result) {
      reply.error = result.message();
      if (attempt.answered) {
        // The answer began and was cut short: a transport failure (status 0), never a truncated
        // success. The request reached the server, so it is not replayed blindly here.
        reply.error = "the response (HTTP " + std::to_string(parser.get().result_int()) +
                      ") was cut short: " + result.message();
      }
      conn.reset();
      return reply;
    }
    auto& res = parser.get();
    reply.status = static_cast<int>(res.result_int());
    reply.body = std::move(res.body());
    for (const auto& f : res) {
      std::string name(f.name_string());
      for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      reply.headers[name] = std::string(f.value());
    }
    if (!res.keep_alive()) conn.reset();
    return reply;
  }
};

HttpClient::HttpClient(Endpoint endpoint) : impl_(std::make_unique<Impl>()) {
  impl_->ep = std::move(endpoint);
}
HttpClient::~HttpClient() = default;

Reply HttpClient::request(const std::string& method, const std::string& target, const std::string& body,
                          const std::string& content_type) {
  Attempt attempt;
  Reply r = impl_->once(method, target, body, content_type, attempt);
  if (r.status == 0 && may_retry(method, attempt))
    r = impl_->once(method, target, body, content_type, attempt);
  return r;
}

// ------------------------------------------------------------------------------------ WatchStream

struct WatchStream::Impl : std::enable_shared_from_this<WatchStream::Impl> {
  Endpoint ep;
  std::string target;
  Conn conn;
  http::request<http::string_body> req;
  http::response_parser<http::empty_body> parser;
  std::string pending;
  std::function<size_t(uint64_t, std::string_view, beast::error_code&)> on_chunk;
  std::thread thread;
  std::mutex stop_mu;  ///< stop() may be called from two threads at once (a reflector and its owner).
  mutable std::mutex mu;
  std::condition_variable cv;
  std::deque<std::string> lines;
  int status = 0;
  std::map<std::string, std::string> headers;
  bool header_done = false;
  bool ended = false;
  bool clean = false;
  std::string error;

  void run() {
    std::string err = conn.connect(ep);
    if (!err.empty()) {
      {
        std::lock_guard lock(mu);
        error = err;
      }
      return finish(false);
    }
    req = make_request(ep, "GET", target, "", "");
    parser.body_limit(boost::none);
    on_chunk = [this](uint64_t, std::string_view data, beast::error_code&) {
      pending.append(data.data(), data.size());
      size_t nl;
      std::lock_guard lock(mu);
      while ((nl = pending.find('\n')) != std::string::npos) {
        lines.push_back(pending.substr(0, nl));
        pending.erase(0, nl + 1);
      }
      cv.notify_all();
      return data.size();
    };
    parser.on_chunk_body(on_chunk);
    std::visit(
        [&](auto& s) {
          if constexpr (!std::is_same_v<std::decay_t<decltype(s)>, std::monostate>) {
            http::async_write(s, req, [this, &s](beast::error_code ec, size_t) {
              if (ec) return finish(false);
              http::async_read_header(s, conn.buffer, parser, [this, &s](beast::error_code ec2, size_t) {
                if (ec2) return finish(false);
                {
                  std::lock_guard lock(mu);
                  status = static_cast<int>(parser.get().result_int());
                  for (const auto& f : parser.get()) {
                    std::string name(f.name_string());
                    for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
                    headers[name] = std::string(f.value());
                  }
                  header_done = true;
                  cv.notify_all();
                }
                read_more(s);
              });
            });
          }
        },
        conn.stream);
    conn.ioc.run();
  }

  template <class S>
  void read_more(S& s) {
    if (parser.is_done()) return finish(true);
    http::async_read_some(s, conn.buffer, parser, [this, &s](beast::error_code ec, size_t) {
      if (ec) return finish(false);
      read_more(s);
    });
  }

  void finish(bool cleanly) {
    std::lock_guard lock(mu);
    ended = true;
    clean = cleanly;
    header_done = true;
    cv.notify_all();
  }
};

WatchStream::WatchStream(Endpoint endpoint, std::string target) : impl_(std::make_shared<Impl>()) {
  impl_->ep = std::move(endpoint);
  impl_->target = std::move(target);
  impl_->thread = std::thread([impl = impl_] { impl->run(); });
}

WatchStream::~WatchStream() {
  try {
    stop();
  } catch (const std::exception& e) {  // a failed join: nothing is left to do but say so
    std::fprintf(stderr, "watch stream: stopping failed: %s\n", e.what());
  }
}

void WatchStream::stop() {
  // The second caller waits for the first one's join, then finds nothing left to join.
  std::lock_guard stop_lock(impl_->stop_mu);
  if (!impl_->thread.joinable()) return;
  // A raw pointer: the join below keeps Impl alive, and a handler left queued (the stream already
  // ended and run() returned) must not own the Impl that owns its io_context.
  net::post(impl_->conn.ioc, [impl = impl_.get()] { impl->conn.close(); });
  impl_->thread.join();
}

int WatchStream::status(std::chrono::milliseconds timeout) {
  std::unique_lock lock(impl_->mu);
  impl_->cv.wait_for(lock, timeout, [&] { return impl_->header_done; });
  return impl_->status;
}

std::optional<std::string> WatchStream::next(std::chrono::milliseconds timeout) {
  std::unique_lock lock(impl_->mu);
  impl_->cv.wait_for(lock, timeout, [&] { return !impl_->lines.empty() || impl_->ended; });
  if (impl_->lines.empty()) return std::nullopt;
  std::string line = std::move(impl_->lines.front());
  impl_->lines.pop_front();
  return line;
}

bool WatchStream::ended() const {
  std::lock_guard lock(impl_->mu);
  return impl_->ended;
}

std::map<std::string, std::string> WatchStream::headers() const {
  std::lock_guard lock(impl_->mu);
  return impl_->headers;
}

std::string WatchStream::error_body() const {
  std::lock_guard lock(impl_->mu);
  if (impl_->status == 200) return "";
  std::string body;
  for (const auto& l : impl_->lines) body += l;
  return body;
}

std::string WatchStream::error() const {
  std::lock_guard lock(impl_->mu);
  return impl_->error;
}

bool WatchStream::ended_cleanly() const {
  std::lock_guard lock(impl_->mu);
  return impl_->ended && impl_->clean;
}

}  // namespace kai::http
