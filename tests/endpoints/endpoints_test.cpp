// The daemon's endpoints over real HTTP and HTTPS: /metrics parses as Prometheus text and moves,
// /healthz, /readyz follows the readiness callback, /get-snapshot, and the admission webhooks.

#include "actors/endpoints/endpoints.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>

#include <atomic>
#include <cctype>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string_view>

#include "k8s/http/http_client.hpp"
#include "k8s/http/certificate.hpp"
#include "tests/endpoints/fraction_pod_review.hpp"

namespace kai::endpoints {
namespace {

using Json = nlohmann::json;
using http::Endpoint;
using http::HttpClient;

// A hand-written checker rather than std::regex: g++ 12 reports false maybe-uninitialized warnings
// inside <regex> under the sanitizers at -O1 (CI builds with -Werror).
bool metric_name_char(char c, bool first) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == ':' ||
         (!first && std::isdigit(static_cast<unsigned char>(c)));
}

/// Consumes a metric or label name at `pos`; false when there is none.
bool take_name(const std::string& line, std::size_t& pos, bool allow_colon) {
  std::size_t start = pos;
  while (pos < line.size() && metric_name_char(line[pos], pos == start) && (allow_colon || line[pos] != ':')) ++pos;
  return pos > start;
}

/// `{name="value",...}` with escapes in values and an optional trailing comma.
bool take_labels(const std::string& line, std::size_t& pos) {
  if (pos >= line.size() || line[pos] != '{') return true;
  ++pos;
  while (pos < line.size() && line[pos] != '}') {
    if (!take_name(line, pos, false) || line.compare(pos, 2, "=\"") != 0) return false;
    pos += 2;
    while (pos < line.size() && line[pos] != '"') pos += line[pos] == '\\' ? 2 : 1;
    if (pos >= line.size()) return false;
    ++pos;
    if (pos < line.size() && line[pos] == ',') ++pos;
  }
  if (pos >= line.size()) return false;
  ++pos;
  return true;
}

bool is_sample_value(const std::string& v) {
  if (v == "+Inf" || v == "-Inf" || v == "NaN") return true;
  if (v.empty()) return false;
  for (char c : v) {
    if (!std::isdigit(static_cast<unsigned char>(c)) && std::string_view(".eE+-").find(c) == std::string_view::npos) return false;
  }
  return true;
}

/// Every sample line of a Prometheus text exposition: `name{labels} value [timestamp]`; comments are
/// # HELP / # TYPE. Returns the first bad line, or "".
std::string bad_prometheus_line(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    std::size_t pos = 0;
    if (line[0] == '#') {
      bool help_or_type = line.rfind("# HELP ", 0) == 0 || line.rfind("# TYPE ", 0) == 0;
      pos = 7;
      if (!help_or_type || !take_name(line, pos, true) || pos >= line.size() || line[pos] != ' ') return line;
      continue;
    }
    if (!take_name(line, pos, true) || !take_labels(line, pos) || pos >= line.size() || line[pos] != ' ') return line;
    std::istringstream rest(line.substr(pos + 1));
    std::string value, timestamp, extra;
    rest >> value >> timestamp >> extra;
    if (!is_sample_value(value) || !extra.empty()) return line;
    if (!timestamp.empty() && timestamp.find_first_not_of("0123456789") != std::string::npos) return line;
  }
  return "";
}

double sample_value(const std::string& text, const std::string& series) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(series + " ", 0) == 0) return std::stod(line.substr(series.size() + 1));
  }
  return -1;
}

class EndpointsTest : public ::testing::Test {
 protected:
  /// Serves on `bind_address` and connects to `host` (a non-loopback peer when it is one of this
  /// host's other addresses).
  void start(EndpointsOptions options, const std::string& bind_address = "127.0.0.1",
             const std::string& host = "127.0.0.1") {
    options.bind_address = bind_address;
    options.port = 0;
    EndpointsCallbacks callbacks;
    callbacks.readiness = [this] { return Readiness{ready_.load(), ready_.load() ? "synced; leader" : "waiting for the initial lists"}; };
    callbacks.snapshot = [] { return model::Result<std::string>(std::string(R"({"apiVersion":"v1","kind":"List","items":[]})")); };
    endpoints_ = std::make_unique<DaemonEndpoints>(options, callbacks, metrics_);
    auto s = endpoints_->start();
    ASSERT_TRUE(s.is_ok()) << s.message();
    Endpoint ep;
    ep.host = host;
    ep.port = endpoints_->port();
    ep.tls = endpoints_->tls();
    ep.ca_file = options.cert_file;
    client_ = std::make_unique<HttpClient>(ep);
  }
  SchedulerMetrics metrics_;
  std::atomic<bool> ready_{false};
  std::unique_ptr<DaemonEndpoints> endpoints_;
  std::unique_ptr<HttpClient> client_;
};

TEST(PrometheusTextChecker, AcceptsTheFormatAndRefusesBrokenLines) {
  EXPECT_EQ(bad_prometheus_line("# HELP kai_x A help text.\n# TYPE kai_x counter\nkai_x 3\n"
                                "kai_y{a=\"1\",b=\"q\\\"x\"} 2.5e-3 1700000000\nkai_z_bucket{le=\"+Inf\"} +Inf\n"),
            "");
  EXPECT_EQ(bad_prometheus_line("kai_x{a=1} 2\n"), "kai_x{a=1} 2");
  EXPECT_EQ(bad_prometheus_line("kai_x{a=\"1\" 2\n"), "kai_x{a=\"1\" 2");
  EXPECT_EQ(bad_prometheus_line("9kai 1\n"), "9kai 1");
  EXPECT_EQ(bad_prometheus_line("kai_x one\n"), "kai_x one");
  EXPECT_EQ(bad_prometheus_line("# COMMENT free text\n"), "# COMMENT free text");
}

TEST_F(EndpointsTest, MetricsParseAsPrometheusTextAndMove) {
  start({});
  metrics_.observe_cycle(3.5, 1.0, 0.5, {{"allocate", 1.2}, {"reclaim", 0.3}});
  metrics_.podgroup_scheduled("allocate");
  metrics_.api_call("create", "pods/binding", 201);
  metrics_.set_queue_shares({{"team-a", "Team A", 10, 64, 4, 0.25, 0.5, 0.75}});
  metrics_.pod_group_evicted_pods("pg-1", "ns1", "u-1", "default", "reclaim", 3);
  auto r = client_->request("GET", "/metrics");
  ASSERT_EQ(r.status, 200) << r.error;
  EXPECT_NE(r.headers["content-type"].find("text/plain"), std::string::npos);
  EXPECT_EQ(bad_prometheus_line(r.body), "");
  EXPECT_EQ(sample_value(r.body, "kai_e2e_scheduling_latency_milliseconds"), 3.5);
  EXPECT_EQ(sample_value(r.body, "kai_action_scheduling_latency_milliseconds{action=\"allocate\"}"), 1.2);
  EXPECT_EQ(sample_value(r.body, "kai_podgroups_scheduled_by_action{action=\"allocate\"}"), 1);
  const std::string labels = "{queue_display_name=\"Team A\",queue_metadata_name=\"team-a\",queue_name=\"team-a\"}";
  EXPECT_EQ(sample_value(r.body, "kai_queue_fair_share_gpu" + labels), 4);
  EXPECT_EQ(sample_value(r.body, "kai_queue_gpu_usage" + labels), 0.75);
  EXPECT_EQ(sample_value(r.body, "kai_cycle_latency_milliseconds_count"), 1);
  EXPECT_NE(r.body.find("kai_pod_group_evicted_pods_total{"), std::string::npos);

  metrics_.podgroup_scheduled("allocate");
  metrics_.api_call("create", "pods/binding", 201);
  metrics_.set_queue_shares({});  // a queue gone loses its series, as KAI resets them each cycle
  r = client_->request("GET", "/metrics");
  EXPECT_EQ(r.body.find("kai_queue_gpu_usage{"), std::string::npos);
  EXPECT_EQ(sample_value(r.body, "kai_podgroups_scheduled_by_action{action=\"allocate\"}"), 2);
  EXPECT_EQ(sample_value(r.body, "kai_api_calls_total{code=\"201\",resource=\"pods/binding\",verb=\"create\"}"), 2);
}

// The queue series are kept by queue between cycles (metrics.cpp set_queue_series): each cycle sets
// the values; a queue given another display name moves to its new series, a queue gone loses its.
TEST(QueueMetrics, TheSeriesFollowTheQueuesFromCycleToCycle) {
  SchedulerMetrics metrics;
  auto figures = [](const std::string& name, const std::string& display, double allocated_gpus) {
    core::QueueControllerFigures q;
    q.name = name;
    q.display_name = display;
    q.deserved_gpus = 8;
    q.allocated_gpus = allocated_gpus;
    return q;
  };
  auto labels = [](const std::string& name, const std::string& display) {
    return "{queue_display_name=\"" + display + "\",queue_metadata_name=\"" + name + "\",queue_name=\"" +
           name + "\"}";
  };
  metrics.set_queue_controller({figures("team-a", "Team A", 1), figures("team-b", "Team B", 2)});
  metrics.set_queue_controller({figures("team-a", "Team A", 3), figures("team-b", "Team B", 2)});
  std::string text = metrics.text();
  EXPECT_EQ(bad_prometheus_line(text), "");
  EXPECT_EQ(sample_value(text, "kai_queue_allocated_gpus" + labels("team-a", "Team A")), 3);
  EXPECT_EQ(sample_value(text, "kai_queue_deserved_gpus" + labels("team-b", "Team B")), 8);

  metrics.set_queue_controller({figures("team-a", "Research", 4)});
  text = metrics.text();
  EXPECT_EQ(sample_value(text, "kai_queue_allocated_gpus" + labels("team-a", "Research")), 4);
  EXPECT_EQ(sample_value(text, "kai_queue_info" + labels("team-a", "Research")), 1);
  EXPECT_EQ(text.find("Team A"), std::string::npos) << "the series under the old display name is gone";
  EXPECT_EQ(text.find("team-b"), std::string::npos) << "the queue gone lost its series";

  metrics.set_queue_controller({figures("team-b", "Team B", 5)});
  text = metrics.text();
  EXPECT_EQ(sample_value(text, "kai_queue_allocated_gpus" + labels("team-b", "Team B")), 5);
  EXPECT_EQ(text.find("team-a"), std::string::npos);
}

TEST_F(EndpointsTest, HealthReadinessAndSnapshot) {
  start({});
  EXPECT_EQ(client_->request("GET", "/healthz").status, 200);
  auto r = client_->request("GET", "/readyz");
  EXPECT_EQ(r.status, 503);
  EXPECT_NE(r.body.find("waiting for the initial lists"), std::string::npos);
  ready_ = true;
  r = client_->request("GET", "/readyz");
  EXPECT_EQ(r.status, 200);
  EXPECT_NE(r.body.find("leader"), std::string::npos);
  r = client_->request("GET", "/get-snapshot");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(Json::parse(r.body)["kind"], "List");
  EXPECT_EQ(client_->request("GET", "/nope").status, 404);
  EXPECT_EQ(client_->request("DELETE", "/metrics").status, 405);
}

TEST_F(EndpointsTest, AdmissionWebhooksOverVerifiedHttps) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("kai-endpoints-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  ASSERT_TRUE(http::write_self_signed_certificate((dir / "tls.crt").string(), (dir / "tls.key").string()).is_ok());
  EndpointsOptions options;
  options.cert_file = (dir / "tls.crt").string();
  options.key_file = (dir / "tls.key").string();
  options.admission.gpu_sharing = false;
  options.webhooks = true;
  start(options);
  ASSERT_TRUE(endpoints_->tls());

  Json review = webhook_fixtures::fraction_pod_review("abc");
  auto r = client_->request("POST", "/validate-pods", review.dump());
  ASSERT_EQ(r.status, 200) << r.error << r.body;
  Json out = Json::parse(r.body);
  EXPECT_EQ(out["response"]["uid"], "abc");
  EXPECT_EQ(out["response"]["allowed"], false);
  EXPECT_NE(out["response"]["status"]["message"].get<std::string>().find("GPU sharing is disabled"), std::string::npos);

  EXPECT_EQ(client_->request("POST", "/mutate-pods", "not json").status, 400);
  EXPECT_EQ(client_->request("GET", "/mutate-pods").status, 405);
  Json queue = {{"apiVersion", "admission.k8s.io/v1"},
                {"kind", "AdmissionReview"},
                {"request", {{"uid", "q"}, {"operation", "CREATE"}, {"object", {{"metadata", {{"name", "team"}}}, {"spec", Json::object()}}}}}};
  r = client_->request("POST", "/validate-queues", queue.dump());
  EXPECT_EQ(Json::parse(r.body)["response"]["allowed"], false);
  fs::remove_all(dir);
}

TEST(EndpointsOptions, HalfATlsConfigurationIsRefused) {
  SchedulerMetrics metrics;
  EndpointsOptions options;
  options.port = 0;
  options.cert_file = "/nonexistent.crt";
  DaemonEndpoints e(options, {}, metrics);
  auto s = e.start();
  EXPECT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("both a certificate and a key"), std::string::npos);
  options.key_file = "/nonexistent.key";
  DaemonEndpoints e2(options, {}, metrics);
  s = e2.start();
  EXPECT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("/nonexistent.crt"), std::string::npos) << s.message();
}

TEST_F(EndpointsTest, AdmissionWebhookPathsAreNotServedOnThePlainPort) {
  start({});  // the metrics port: plain HTTP, webhooks off
  for (const char* path : {"/mutate-pods", "/validate-pods", "/validate-queues", "/validate-podgroups"}) {
    auto r = client_->request("POST", path, "{}");
    EXPECT_EQ(r.status, 405) << path << ": " << r.body;  // only GETs are served on the plain port
    EXPECT_EQ(r.body, "only GET is served here\n") << path;
  }
}

/// One of this host's IPv4 addresses that is not loopback, or "".
std::string non_loopback_address() {
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return "";
  std::string out;
  for (ifaddrs* a = list; a != nullptr && out.empty(); a = a->ifa_next) {
    if (a->ifa_addr == nullptr || a->ifa_addr->sa_family != AF_INET || (a->ifa_flags & IFF_LOOPBACK))
      continue;
    char text[INET_ADDRSTRLEN] = {};
    const auto* in = reinterpret_cast<const sockaddr_in*>(a->ifa_addr);
    if (::inet_ntop(AF_INET, &in->sin_addr, text, sizeof text) != nullptr) out = text;
  }
  ::freeifaddrs(list);
  return out;
}

TEST_F(EndpointsTest, SnapshotAnswersOnlyLoopbackPeersByDefault) {
  const std::string address = non_loopback_address();
  if (address.empty()) GTEST_SKIP() << "no non-loopback IPv4 address to connect from";
  start({}, "0.0.0.0", address);
  auto r = client_->request("GET", "/get-snapshot");
  EXPECT_EQ(r.status, 403) << r.body;
  EXPECT_NE(r.body.find("--expose-snapshot"), std::string::npos) << r.body;
  EXPECT_EQ(client_->request("GET", "/metrics").status, 200);
  Endpoint local;
  local.port = endpoints_->port();
  local.tls = false;
  EXPECT_EQ(HttpClient(local).request("GET", "/get-snapshot").status, 200);
}

TEST_F(EndpointsTest, ExposedSnapshotAnswersEveryPeer) {
  const std::string address = non_loopback_address();
  if (address.empty()) GTEST_SKIP() << "no non-loopback IPv4 address to connect from";
  EndpointsOptions options;
  options.expose_snapshot = true;
  start(options, "0.0.0.0", address);
  auto r = client_->request("GET", "/get-snapshot");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Json::parse(r.body)["kind"], "List");
}

}  // namespace
}  // namespace kai::endpoints
