// The only Beast translation unit of kai_apiserver: HTTPS and HTTP listeners, one session per
// connection, chunked watch streams. All API semantics live in router.cpp / store.cpp.
//
// Threading: one io_context thread runs every session. The store pushes watch events from whichever
// thread made the change (or its bookmark thread) through net::post, so a session's state is only
// touched on the io thread and the events of one watch keep their order.

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <deque>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <thread>

#include "k8s/apiserver/api_server.hpp"
#include "k8s/apiserver/certificate.hpp"
#include "k8s/apiserver/router.hpp"
#include "k8s/model/json_codec.hpp"

namespace kai::apiserver {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = net::ssl;
using tcp = net::ip::tcp;

using PlainStream = beast::tcp_stream;
using TlsStream = beast::ssl_stream<beast::tcp_stream>;

tcp::socket& raw_socket(PlainStream& s) {
  return s.socket();
}
tcp::socket& raw_socket(TlsStream& s) {
  return beast::get_lowest_layer(s).socket();
}

/// One connection. Holds itself alive through pending operations and, while a watch streams, through
/// the store's sink (toolchain.md pitfall 7: an idle watch has no pending write).
template <class Stream>
class Session : public std::enable_shared_from_this<Session<Stream>> {
 public:
  Session(Stream stream, Router& router, size_t max_body)
      : stream_(std::move(stream)), router_(router), max_body_(max_body), timer_(stream_.get_executor()) {}

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
      r.status = 413;
      r.body = ApiError(413, "RequestEntityTooLarge",
                        "Request entity too large: limit is " + std::to_string(max_body_))
                   .status()
                   .dump();
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
    const auto delay = router_.delay_for(req_);
    if (delay.count() > 0) {
      timer_.expires_after(delay);
      timer_.async_wait([self = this->shared_from_this()](beast::error_code) { self->process(); });
    } else {
      process();
    }
  }

  void process() {
    HttpResponse r = router_.handle(req_);
    if (r.start_watch) return start_watch(std::move(r));
    write(std::move(r));
  }

  void write(HttpResponse r) {
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
    http::async_write(stream_, *res, [self = this->shared_from_this(), res](beast::error_code ec, size_t) {
      if (ec || !res->keep_alive()) return self->close();
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
    WatchSink sink;
    sink.push = [self, ex](std::shared_ptr<const std::string> line) {
      net::post(ex, [self, line = std::move(line)] { self->enqueue(line); });
    };
    sink.close = [self, ex] { net::post(ex, [self] { self->end_watch(false); }); };
    watch_id_ = r.start_watch(std::move(sink));
    if (r.watch_timeout_seconds > 0) {
      timer_.expires_after(std::chrono::seconds(r.watch_timeout_seconds));
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
    if (watch_id_ != 0) router_.unwatch(watch_id_);
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
  Router& router_;
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
};

std::string random_token() {
  static const char* kChars = "abcdefghijklmnopqrstuvwxyz0123456789";
  std::random_device rd;
  std::string t;
  for (int i = 0; i < 40; ++i) t += kChars[rd() % 36];
  return t;
}

}  // namespace

struct ApiServer::Impl {
  ServerOptions options;
  std::string token;
  std::string dir;
  bool own_dir = false;
  std::unique_ptr<Router> router;
  net::io_context ioc{1};
  ssl::context tls{ssl::context::tls_server};
  std::optional<tcp::acceptor> https_acceptor;
  std::optional<tcp::acceptor> http_acceptor;
  uint16_t https_port = 0;
  uint16_t http_port = 0;
  std::thread thread;
  bool started = false;

  template <bool kTls>
  void accept(tcp::acceptor& acceptor) {
    acceptor.async_accept(net::make_strand(ioc), [this, &acceptor](beast::error_code ec, tcp::socket socket) {
      if (ec == net::error::operation_aborted) return;
      if (!ec) {
        socket.set_option(tcp::no_delay(true));
        if constexpr (kTls) {
          std::make_shared<Session<TlsStream>>(TlsStream(beast::tcp_stream(std::move(socket)), tls), *router,
                                               options.max_body_bytes)
              ->start();
        } else {
          std::make_shared<Session<PlainStream>>(PlainStream(std::move(socket)), *router,
                                                 options.max_body_bytes)
              ->start();
        }
      }
      accept<kTls>(acceptor);
    });
  }
};

ApiServer::ApiServer(ServerOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
  impl_->token = impl_->options.token.empty() ? random_token() : impl_->options.token;
}

ApiServer::~ApiServer() {
  stop();
  if (impl_->own_dir && !impl_->dir.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(impl_->dir, ec);
  }
}

model::Status ApiServer::start() {
  Impl& m = *impl_;
  if (m.started) return model::Status::ok();
  namespace fs = std::filesystem;
  std::error_code ec;
  if (m.options.data_dir.empty()) {
    std::string tmpl = (fs::temp_directory_path(ec) / "kai-apiserver-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) return model::Status::error("cannot create a temporary directory");
    m.dir = tmpl;
    m.own_dir = true;
  } else {
    m.dir = m.options.data_dir;
    fs::create_directories(m.dir, ec);
    if (ec) return model::Status::error("cannot create " + m.dir + ": " + ec.message());
  }
  const std::string cert = m.dir + "/apiserver.crt";
  const std::string key = m.dir + "/apiserver.key";
  if (auto s = write_self_signed_certificate(cert, key); !s) return s;
  try {
    m.tls.set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                      ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1);
    m.tls.use_certificate_chain_file(cert);
    m.tls.use_private_key_file(key, ssl::context::pem);
  } catch (const std::exception& e) {
    return model::Status::error(std::string("TLS setup failed: ") + e.what());
  }

  m.router = std::make_unique<Router>(m.options, m.token);
  if (!m.options.crd_dir.empty()) {
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(m.options.crd_dir, ec)) {
      const auto ext = e.path().extension();
      if (ext == ".yaml" || ext == ".yml") files.push_back(e.path());
    }
    if (ec) return model::Status::error("cannot read " + m.options.crd_dir + ": " + ec.message());
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
      std::ifstream in(f);
      std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      auto docs = model::yaml_documents_to_json(text);
      if (!docs.is_ok()) return model::Status::error(f.string() + ": " + docs.message());
      for (const auto& d : docs.value()) {
        if (d.value("kind", "") != "CustomResourceDefinition") continue;
        try {
          m.router->store().create_crd(d);
        } catch (const ApiError& e) {
          return model::Status::error(f.string() + ": " + e.message);
        }
      }
    }
  }

  try {
    auto open = [&](uint16_t port) {
      tcp::acceptor a(m.ioc);
      tcp::endpoint ep(net::ip::make_address("127.0.0.1"), port);
      a.open(ep.protocol());
      a.set_option(net::socket_base::reuse_address(true));
      a.bind(ep);
      a.listen(net::socket_base::max_listen_connections);
      return a;
    };
    m.https_acceptor.emplace(open(m.options.https_port));
    m.https_port = m.https_acceptor->local_endpoint().port();
    if (m.options.http) {
      m.http_acceptor.emplace(open(m.options.http_port));
      m.http_port = m.http_acceptor->local_endpoint().port();
    }
  } catch (const std::exception& e) {
    return model::Status::error(std::string("cannot listen: ") + e.what());
  }
  m.router->set_address("127.0.0.1:" + std::to_string(m.https_port));

  // The kubeconfig carries the token, so it is private to the user.
  const std::string kubeconfig = kubeconfig_path();
  {
    std::ofstream out(kubeconfig);
    out << "apiVersion: v1\nkind: Config\nclusters:\n- name: kai\n  cluster:\n    server: " << https_url()
        << "\n    certificate-authority: " << fs::absolute(cert).string()
        << "\ncontexts:\n- name: kai\n  context:\n    cluster: kai\n    user: kai\n    namespace: default\n"
        << "current-context: kai\nusers:\n- name: kai\n  user:\n    token: " << m.token << "\n";
    if (!out) return model::Status::error("cannot write " + kubeconfig);
  }
  fs::permissions(kubeconfig, fs::perms::owner_read | fs::perms::owner_write, ec);

  m.router->store().start();
  m.accept<true>(*m.https_acceptor);
  if (m.http_acceptor) m.accept<false>(*m.http_acceptor);
  m.thread = std::thread([&m] { m.ioc.run(); });
  m.started = true;
  return model::Status::ok();
}

void ApiServer::stop() {
  Impl& m = *impl_;
  if (!m.started) return;
  m.started = false;
  m.router->store().stop();
  net::post(m.ioc, [&m] {
    beast::error_code ec;
    if (m.https_acceptor) m.https_acceptor->close(ec);
    if (m.http_acceptor) m.http_acceptor->close(ec);
  });
  m.ioc.stop();
  if (m.thread.joinable()) m.thread.join();
}

std::string ApiServer::https_url() const {
  return "https://127.0.0.1:" + std::to_string(impl_->https_port);
}
std::string ApiServer::http_url() const {
  return impl_->http_port == 0 ? "" : "http://127.0.0.1:" + std::to_string(impl_->http_port);
}
uint16_t ApiServer::https_port() const {
  return impl_->https_port;
}
uint16_t ApiServer::http_port() const {
  return impl_->http_port;
}
std::string ApiServer::kubeconfig_path() const {
  return impl_->dir + "/kubeconfig";
}
std::string ApiServer::ca_path() const {
  return impl_->dir + "/apiserver.crt";
}
const std::string& ApiServer::token() const {
  return impl_->token;
}
void ApiServer::set_faults(const Faults& faults) {
  impl_->router->set_faults(faults);
}
void ApiServer::drop_watches() {
  impl_->router->store().drop_watches();
}
void ApiServer::set_cost_model(const CostModel& cost) {
  impl_->router->set_cost_model(cost);
}
void ApiServer::set_kubelet(bool on) {
  impl_->router->store().set_kubelet(on);
}
void ApiServer::compact_history() {
  impl_->router->store().compact_history();
}
std::map<std::string, uint64_t> ApiServer::request_counts() const {
  return impl_->router->counts();
}
void ApiServer::reset_request_counts() {
  impl_->router->reset_counts();
}
uint64_t ApiServer::resource_version() const {
  return impl_->router->store().resource_version();
}
size_t ApiServer::watch_count() const {
  return impl_->router->store().watch_count();
}
size_t ApiServer::object_count() const {
  return impl_->router->store().object_count();
}

model::Result<std::string> ApiServer::create_object(const std::string& document) {
  auto j = model::yaml_to_json(document);
  if (!j.is_ok()) return model::Status::error(j.message());
  const Json& obj = j.value();
  const std::string api_version = obj.value("apiVersion", "");
  const std::string kind = obj.value("kind", "");
  const size_t slash = api_version.find('/');
  const std::string group = slash == std::string::npos ? "" : api_version.substr(0, slash);
  const std::string version = slash == std::string::npos ? api_version : api_version.substr(slash + 1);
  for (const auto& r : impl_->router->store().resources()) {
    if (r->group != group || r->version != version || r->kind != kind) continue;
    try {
      const std::string ns =
          r->namespaced && obj.contains("metadata") ? obj["metadata"].value("namespace", "default") : "";
      return impl_->router->store().create(*r, ns, obj).dump();
    } catch (const ApiError& e) {
      return model::Status::error(e.message);
    }
  }
  return model::Status::error("no resource serves " + api_version + " " + kind);
}

}  // namespace kai::apiserver
