// Beast unit of the test client. Requests run as async operations driven by io_context::run_for, so
// that a server that never answers makes a test fail instead of hanging it (toolchain.md pitfall 9).

#include "k8s/apiserver/test_client.hpp"

#include <openssl/ssl.h>

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <variant>

namespace kai::apiserver::testing {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = net::ssl;
using tcp = net::ip::tcp;

using Plain = beast::tcp_stream;
using Tls = beast::ssl_stream<beast::tcp_stream>;

/// A connected plain or TLS stream.
struct Conn {
  net::io_context ioc{1};
  ssl::context ctx{ssl::context::tls_client};
  std::variant<std::monostate, Plain, Tls> stream;
  beast::flat_buffer buffer;

  tcp::socket& socket() {
    if (auto* p = std::get_if<Plain>(&stream)) return p->socket();
    return beast::get_lowest_layer(std::get<Tls>(stream)).socket();
  }

  /// Connects (and handshakes); returns an error message or "".
  std::string connect(const Endpoint& ep) {
    beast::error_code ec;
    tcp::endpoint target(net::ip::make_address(ep.host, ec), ep.port);
    if (ec) return "bad host " + ep.host;
    buffer.clear();
    if (!ep.tls) {
      stream.emplace<Plain>(ioc);
      std::get<Plain>(stream).socket().connect(target, ec);
      return ec ? ec.message() : "";
    }
    ctx.set_verify_mode(ssl::verify_peer);
    if (!ep.ca_file.empty()) ctx.load_verify_file(ep.ca_file, ec);
    if (ec) return "cannot load " + ep.ca_file + ": " + ec.message();
    auto& s = stream.emplace<Tls>(ioc, ctx);
    s.set_verify_callback(ssl::host_name_verification(ep.host));
    beast::get_lowest_layer(s).socket().connect(target, ec);
    if (ec) return ec.message();
    s.handshake(ssl::stream_base::client, ec);
    return ec ? "TLS handshake: " + ec.message() : "";
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
  if (!ep.token.empty()) req.set(http::field::authorization, "Bearer " + ep.token);
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

struct HttpClient::Impl {
  Endpoint ep;
  std::unique_ptr<Conn> conn;

  Reply once(const std::string& method, const std::string& target, const std::string& body,
             const std::string& content_type, bool& retryable) {
    retryable = false;
    Reply reply;
    if (!conn) {
      conn = std::make_unique<Conn>();
      if (std::string err = conn->connect(ep); !err.empty()) {
        conn.reset();
        reply.error = err;
        return reply;
      }
    } else {
      retryable = true;  // a reused connection may have been closed by the server
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
    std::visit(
        [&](auto& s) {
          if constexpr (!std::is_same_v<std::decay_t<decltype(s)>, std::monostate>) {
            http::async_write(s, req, on_write);
          }
        },
        conn->stream);
    conn->ioc.restart();
    conn->ioc.run_for(std::chrono::seconds(30));
    if (!done) {
      conn->close();
      conn->ioc.restart();
      conn->ioc.run_for(std::chrono::seconds(1));
    }
    if (result) {
      reply.error = result.message();
      if (parser.is_header_done()) {
        reply.status = static_cast<int>(parser.get().result_int());
        reply.body = parser.get().body();
        retryable = false;
      }
      conn.reset();
      return reply;
    }
    retryable = false;
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
  bool retryable = false;
  Reply r = impl_->once(method, target, body, content_type, retryable);
  if (r.status == 0 && retryable) r = impl_->once(method, target, body, content_type, retryable);
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
  mutable std::mutex mu;
  std::condition_variable cv;
  std::deque<std::string> lines;
  int status = 0;
  bool header_done = false;
  bool ended = false;
  bool clean = false;

  void run() {
    std::string err = conn.connect(ep);
    if (!err.empty()) return finish(false);
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
  stop();
}

void WatchStream::stop() {
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

bool WatchStream::ended_cleanly() const {
  std::lock_guard lock(impl_->mu);
  return impl_->ended && impl_->clean;
}

}  // namespace kai::apiserver::testing
