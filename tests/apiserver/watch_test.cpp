// Watches, concurrency, fault injection, counters, the cost model and the kubelet stand-in.

#include <atomic>
#include <thread>

#include "tests/apiserver/fixture.hpp"

namespace kai::apiserver {
namespace {

using Watches = ApiServerTest;
using std::chrono::milliseconds;

Json next_event(http::WatchStream& w, milliseconds timeout = milliseconds(5000)) {
  auto line = w.next(timeout);
  if (!line) return nullptr;
  return Json::parse(*line, nullptr, false);
}

/// Next event that is not a BOOKMARK.
Json next_change(http::WatchStream& w) {
  for (int i = 0; i < 100; ++i) {
    Json e = next_event(w);
    if (e.is_null() || e["type"] != "BOOKMARK") return e;
  }
  return nullptr;
}

TEST_F(Watches, InitialStateThenChangesInOrder) {
  ASSERT_EQ(create_pod("a").status, 201);
  http::WatchStream w(endpoint(), "/api/v1/namespaces/default/pods?watch=true");
  ASSERT_EQ(w.status(), 200);
  Json e = next_event(w);
  EXPECT_EQ(e["type"], "ADDED");
  EXPECT_EQ(e["object"]["metadata"]["name"], "a");
  ASSERT_EQ(create_pod("b").status, 201);
  ASSERT_EQ(bind("b", "n1").status, 201);
  ASSERT_EQ(req("DELETE", "/api/v1/namespaces/default/pods/a").status, 200);
  Json e1 = next_event(w), e2 = next_event(w), e3 = next_event(w);
  EXPECT_EQ(e1["type"], "ADDED");
  EXPECT_EQ(e2["type"], "MODIFIED");
  EXPECT_EQ(e2["object"]["spec"]["nodeName"], "n1");
  EXPECT_EQ(e3["type"], "DELETED");
  EXPECT_EQ(e3["object"]["metadata"]["name"], "a");
  // Other namespaces and kinds are not delivered.
  ASSERT_EQ(create_pod("x", "kube-system").status, 201);
  EXPECT_FALSE(w.next(milliseconds(200)).has_value());
}

TEST_F(Watches, ResumeFromResourceVersionAndGone) {
  const std::string rv = body(create_pod("a"))["metadata"]["resourceVersion"];
  ASSERT_EQ(create_pod("b").status, 201);
  ASSERT_EQ(create_pod("c").status, 201);
  http::WatchStream w(endpoint(), "/api/v1/namespaces/default/pods?watch=1&resourceVersion=" + rv);
  EXPECT_EQ(next_event(w)["object"]["metadata"]["name"], "b");
  EXPECT_EQ(next_event(w)["object"]["metadata"]["name"], "c");
  w.stop();
  server_->compact_history();
  ASSERT_EQ(create_pod("d").status, 201);
  http::WatchStream old(endpoint(), "/api/v1/namespaces/default/pods?watch=1&resourceVersion=" + rv);
  ASSERT_EQ(old.status(), 200);
  Json err = next_event(old);
  EXPECT_EQ(err["type"], "ERROR");
  EXPECT_EQ(err["object"]["code"], 410);
  EXPECT_EQ(err["object"]["reason"], "Expired");
  EXPECT_FALSE(old.next(milliseconds(2000)).has_value());
  EXPECT_TRUE(old.ended());
}

TEST_F(Watches, BoundedHistoryGivesGone) {
  server_.reset();
  options_.history_limit = 5;
  server_ = std::make_unique<ApiServer>(options_);
  ASSERT_TRUE(server_->start().is_ok());
  client_ = std::make_unique<http::HttpClient>(endpoint());
  const std::string rv = body(create_pod("a"))["metadata"]["resourceVersion"];
  for (int i = 0; i < 10; ++i) ASSERT_EQ(create_pod("p" + std::to_string(i)).status, 201);
  http::WatchStream w(endpoint(), "/api/v1/namespaces/default/pods?watch=1&resourceVersion=" + rv);
  EXPECT_EQ(next_event(w)["object"]["code"], 410);
}

TEST_F(Watches, BookmarksWhenAllowed) {
  http::WatchStream w(endpoint(),
                         "/api/v1/namespaces/default/pods?watch=1&allowWatchBookmarks=true&resourceVersion=" +
                             std::to_string(server_->resource_version()));
  Json e = next_event(w);
  EXPECT_EQ(e["type"], "BOOKMARK");
  EXPECT_EQ(e["object"]["kind"], "Pod");
  EXPECT_FALSE(e["object"]["metadata"]["resourceVersion"].get<std::string>().empty());
  http::WatchStream plain(endpoint(), "/api/v1/namespaces/default/pods?watch=1&resourceVersion=" +
                                             std::to_string(server_->resource_version()));
  EXPECT_FALSE(plain.next(milliseconds(400)).has_value());
}

TEST_F(Watches, SelectorTransitionsAndTimeout) {
  ASSERT_EQ(create_pod("a").status, 201);
  http::WatchStream w(endpoint(),
                         "/api/v1/pods?watch=1&fieldSelector=spec.nodeName%3Dn1&timeoutSeconds=2");
  ASSERT_EQ(w.status(), 200);
  ASSERT_EQ(bind("a", "n1").status, 201);
  Json e = next_event(w);
  EXPECT_EQ(e["type"], "ADDED") << "entering the selector is an ADDED event";
  ASSERT_EQ(req("DELETE", "/api/v1/namespaces/default/pods/a?gracePeriodSeconds=0").status, 200);
  EXPECT_EQ(next_event(w)["type"], "DELETED");
  EXPECT_FALSE(w.next(milliseconds(4000)).has_value());
  EXPECT_TRUE(w.ended_cleanly()) << "timeoutSeconds ends the stream with its last chunk";
  // Watching one object by name, as kubectl does.
  ASSERT_EQ(create_pod("b").status, 201);
  http::WatchStream one(endpoint(),
                           "/api/v1/namespaces/default/pods?watch=1&fieldSelector=metadata.name%3Db");
  EXPECT_EQ(next_event(one)["object"]["metadata"]["name"], "b");
  EXPECT_EQ(req("GET", "/api/v1/pods?watch=1&labelSelector=%3D%3D").status, 400);
}

TEST_F(Watches, ConcurrentWritersAndWatchersSeeEveryChangeOnceInOrder) {
  constexpr int kWriters = 4;
  constexpr int kPerWriter = 40;
  std::vector<std::unique_ptr<http::WatchStream>> watchers;
  const std::string from = std::to_string(server_->resource_version());
  for (int i = 0; i < 3; ++i) {
    watchers.push_back(std::make_unique<http::WatchStream>(
        endpoint(i % 2 == 0), "/api/v1/namespaces/default/pods?watch=1&resourceVersion=" + from));
    ASSERT_EQ(watchers.back()->status(), 200);
  }
  std::vector<std::thread> writers;
  std::atomic<int> failures{0};
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back([&, w] {
      http::HttpClient c(endpoint(w % 2 == 0));
      for (int i = 0; i < kPerWriter; ++i) {
        const std::string name = "w" + std::to_string(w) + "-" + std::to_string(i);
        if (c.request("POST", "/api/v1/namespaces/default/pods", pod(name).dump()).status != 201) ++failures;
        if (c.request("PATCH", "/api/v1/namespaces/default/pods/" + name,
                      R"({"metadata":{"labels":{"n":"1"}}})", "application/merge-patch+json")
                .status != 200) {
          ++failures;
        }
      }
    });
  }
  for (auto& t : writers) t.join();
  ASSERT_EQ(failures.load(), 0);
  const size_t expected = kWriters * kPerWriter * 2;
  for (auto& w : watchers) {
    std::set<std::pair<std::string, std::string>> seen;
    uint64_t last = 0;
    for (size_t i = 0; i < expected; ++i) {
      Json e = next_event(*w);
      ASSERT_FALSE(e.is_null()) << "missing event " << i;
      const uint64_t rv = std::stoull(e["object"]["metadata"]["resourceVersion"].get<std::string>());
      EXPECT_GT(rv, last);
      last = rv;
      EXPECT_TRUE(seen.emplace(e["type"], e["object"]["metadata"]["name"]).second)
          << "duplicate " << e.dump();
    }
    EXPECT_FALSE(w->next(milliseconds(100)).has_value()) << "no extra events";
  }
}

TEST_F(Watches, FaultInjection) {
  Faults f;
  f.too_many_requests = 1;
  f.retry_after_seconds = 3;
  server_->set_faults(f);
  auto r = req("GET", "/api/v1/namespaces/default/pods");
  EXPECT_EQ(r.status, 429);
  EXPECT_EQ(r.headers["retry-after"], "3");
  EXPECT_EQ(body(r)["reason"], "TooManyRequests");
  EXPECT_EQ(req("GET", "/api/v1/namespaces/default/pods").status, 200);

  f = Faults{};
  f.internal_errors = 1;
  f.match = "/configmaps";
  server_->set_faults(f);
  EXPECT_EQ(req("GET", "/api/v1/namespaces/default/pods").status, 200);
  EXPECT_EQ(req("GET", "/api/v1/namespaces/default/configmaps").status, 500);

  f = Faults{};
  f.expire_watches = 1;
  server_->set_faults(f);
  {
    http::WatchStream w(endpoint(), "/api/v1/namespaces/default/pods?watch=1");
    EXPECT_EQ(next_event(w)["object"]["code"], 410);
  }

  f = Faults{};
  f.close_mid_body = 1;
  server_->set_faults(f);
  auto cut = req("GET", "/api/v1/namespaces");
  EXPECT_FALSE(cut.error.empty()) << "a body cut in the middle is an error on the client";
  EXPECT_EQ(req("GET", "/api/v1/namespaces").status, 200);

  f = Faults{};
  f.delay = milliseconds(150);
  server_->set_faults(f);
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(req("GET", "/api/v1/namespaces").status, 200);
  EXPECT_GE(std::chrono::steady_clock::now() - t0, milliseconds(150));
  server_->set_faults(Faults{});

  // Dropped watch streams are cut, not finished.
  http::WatchStream w(endpoint(), "/api/v1/namespaces/default/pods?watch=1");
  ASSERT_EQ(w.status(), 200);
  for (int i = 0; i < 50 && server_->watch_count() == 0; ++i) std::this_thread::sleep_for(milliseconds(10));
  server_->drop_watches();
  EXPECT_FALSE(w.next(milliseconds(3000)).has_value());
  EXPECT_TRUE(w.ended());
  EXPECT_FALSE(w.ended_cleanly());

  // The same controls over HTTP.
  EXPECT_EQ(req("POST", "/debug/faults", Json{{"tooManyRequests", 1}}).status, 200);
  EXPECT_EQ(req("GET", "/api/v1/nodes").status, 429);
  EXPECT_EQ(req("POST", "/debug/drop-watches").status, 200);
}

TEST_F(Watches, CountersAndCostModel) {
  server_->reset_request_counts();
  ASSERT_EQ(create_pod("a").status, 201);
  ASSERT_EQ(bind("a", "n1").status, 201);
  req("GET", "/api/v1/namespaces/default/pods");
  req("GET", "/apis/scheduling.run.ai/v2/queues");
  auto counts = server_->request_counts();
  EXPECT_EQ(counts["create pods"], 1u);
  EXPECT_EQ(counts["create pods/binding"], 1u);
  EXPECT_EQ(counts["list pods"], 1u);
  EXPECT_EQ(counts["list queues.scheduling.run.ai"], 1u);
  EXPECT_EQ(counts["total"], 4u);
  Json http_counts = get("/debug/counters");
  EXPECT_EQ(http_counts["create pods"], 1);
  EXPECT_EQ(req("DELETE", "/debug/counters").status, 200);
  EXPECT_TRUE(server_->request_counts().empty());

  // One server, 20 ms per request: four concurrent requests take at least 80 ms in all.
  server_->set_cost_model(CostModel{std::chrono::milliseconds(20), 1});
  auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> ts;
  for (int i = 0; i < 4; ++i) {
    ts.emplace_back([&] { http::HttpClient(endpoint()).request("GET", "/api/v1/namespaces"); });
  }
  for (auto& t : ts) t.join();
  EXPECT_GE(std::chrono::steady_clock::now() - t0, milliseconds(80));
  server_->set_cost_model(CostModel{});
}

class Kubelet : public ApiServerTest {
  void customize(ServerOptions& o) override {
    o.kubelet = true;
    o.kubelet_delay = milliseconds(20);
  }
};

TEST_F(Kubelet, MarksBoundPodsRunningAndConfirmsDeletion) {
  ASSERT_EQ(create_pod("a").status, 201);
  http::WatchStream w(endpoint(), "/api/v1/namespaces/default/pods?watch=1&resourceVersion=" +
                                         std::to_string(server_->resource_version()));
  ASSERT_EQ(bind("a", "n1").status, 201);
  EXPECT_EQ(next_change(w)["object"]["spec"]["nodeName"], "n1");
  Json running = next_change(w);
  EXPECT_EQ(running["object"]["status"]["phase"], "Running");
  EXPECT_EQ(running["object"]["status"]["conditions"][1]["type"], "Ready");
  ASSERT_EQ(req("DELETE", "/api/v1/namespaces/default/pods/a").status, 200);
  Json terminating = next_change(w);
  EXPECT_EQ(terminating["type"], "MODIFIED");
  EXPECT_TRUE(terminating["object"]["metadata"].contains("deletionTimestamp"));
  EXPECT_EQ(next_change(w)["type"], "DELETED");
}

TEST_F(ApiServerTest, InProcessListAndDelete) {
  ASSERT_TRUE(server_->create_object(R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"team-a"}})").is_ok());
  ASSERT_TRUE(server_->create_object(
      R"({"apiVersion":"scheduling.run.ai/v2","kind":"Queue","metadata":{"name":"q1"},"spec":{}})").is_ok());
  ASSERT_TRUE(server_->create_object(
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"team-a"},"spec":{"containers":[{"name":"c","image":"i"}]}})").is_ok());
  auto queues = server_->list_objects("scheduling.run.ai/v2", "Queue");
  ASSERT_TRUE(queues.is_ok()) << queues.message();
  EXPECT_EQ(Json::parse(queues.value())["items"][0]["metadata"]["name"], "q1");
  auto pods = server_->list_objects("v1", "Pod", "team-a");
  ASSERT_TRUE(pods.is_ok());
  EXPECT_EQ(Json::parse(pods.value())["items"].size(), 1u);
  EXPECT_TRUE(server_->delete_object("v1", "Pod", "team-a", "p").is_ok());
  EXPECT_EQ(Json::parse(server_->list_objects("v1", "Pod", "").value())["items"].size(), 0u);
  EXPECT_FALSE(server_->delete_object("v1", "Pod", "team-a", "p").is_ok());
  EXPECT_FALSE(server_->list_objects("v9", "Nope").is_ok());
}

TEST_F(Kubelet, ReservationPodsGetDistinctGpusOfTheirNode) {
  ASSERT_EQ(req("POST", "/api/v1/nodes",
                {{"metadata", {{"name", "gpu-1"}}}, {"status", {{"allocatable", {{"nvidia.com/gpu", "2"}}}}}})
                .status,
            201);
  ASSERT_EQ(req("POST", "/api/v1/namespaces", {{"metadata", {{"name", "kai-resource-reservation"}}}}).status, 201);
  auto reservation = [&](const std::string& name) {
    return req("POST", "/api/v1/namespaces/kai-resource-reservation/pods",
               {{"metadata", {{"name", name}, {"labels", {{"app", "kai-resource-reservation"}}}}},
                {"spec", {{"nodeName", "gpu-1"}, {"containers", Json::array({{{"name", "r"}, {"image", "i"}}})}}}});
  };
  auto uuid_of = [&](const std::string& name) -> std::string {
    for (int i = 0; i < 200; ++i) {
      Json p = body(req("GET", "/api/v1/namespaces/kai-resource-reservation/pods/" + name));
      if (p["status"].value("phase", "") == "Running") {
        return p["metadata"].value("annotations", Json::object()).value("run.ai/reserve_for_gpu_index", "");
      }
      std::this_thread::sleep_for(milliseconds(10));
    }
    return "timeout";
  };
  ASSERT_EQ(reservation("r1").status, 201);
  ASSERT_EQ(reservation("r2").status, 201);
  const std::string a = uuid_of("r1"), b = uuid_of("r2");
  EXPECT_EQ(a.rfind("GPU-", 0), 0u) << a;
  EXPECT_EQ(b.rfind("GPU-", 0), 0u) << b;
  EXPECT_NE(a, b);
  // Both devices are held: a third reservation runs but gets no device, as on a full node.
  ASSERT_EQ(reservation("r3").status, 201);
  EXPECT_EQ(uuid_of("r3"), "");
  // Off: no annotation at all (the binder's reservation then times out).
  server_->set_kubelet_reserves_gpus(false);
  ASSERT_EQ(req("DELETE", "/api/v1/namespaces/kai-resource-reservation/pods/r1?gracePeriodSeconds=0").status, 200);
  ASSERT_EQ(reservation("r4").status, 201);
  EXPECT_EQ(uuid_of("r4"), "");
}

}  // namespace
}  // namespace kai::apiserver
