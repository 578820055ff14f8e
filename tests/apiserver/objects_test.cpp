// Object semantics over real HTTPS requests: create / get / list / update / patch / delete, the
// status subresource, selectors, pagination, bindings, evictions and the real server's traps.

#include "tests/apiserver/fixture.hpp"

namespace kai::apiserver {
namespace {

using Objects = ApiServerTest;

/// An object of `kind` named `name`, with nothing else yet.
Json named(const std::string& api_version, const std::string& kind, const std::string& name) {
  return {{"apiVersion", api_version}, {"kind", kind}, {"metadata", {{"name", name}}}};
}

TEST_F(Objects, CreateAssignsMetadataAndPodDefaults) {
  Json p = pod("p1");
  p["status"] = {{"phase", "Running"}};  // ignored: pods have a status subresource
  auto r = post_pod(p);
  ASSERT_EQ(r.status, 201) << r.body;
  Json got = body(r);
  EXPECT_EQ(got["metadata"]["uid"].get<std::string>().size(), 36u);
  EXPECT_FALSE(got["metadata"]["creationTimestamp"].get<std::string>().empty());
  EXPECT_FALSE(got["metadata"].contains("generation"));
  EXPECT_EQ(got["status"]["phase"], "Pending");
  EXPECT_EQ(got["status"]["qosClass"], "BestEffort");
  EXPECT_EQ(got["spec"]["priority"], 0);
  EXPECT_EQ(got["spec"]["terminationGracePeriodSeconds"], 30);
  Json again = get("/api/v1/namespaces/default/pods/p1");
  EXPECT_EQ(again, got);
  // One global resourceVersion across kinds.
  auto cm = req("POST", "/api/v1/namespaces/default/configmaps",
                Json{{"metadata", {{"name", "c1"}}}, {"data", {{"k", "v"}}}});
  ASSERT_EQ(cm.status, 201);
  EXPECT_EQ(std::stoull(body(cm)["metadata"]["resourceVersion"].get<std::string>()),
            std::stoull(got["metadata"]["resourceVersion"].get<std::string>()) + 1);
}

TEST_F(Objects, CreateTraps) {
  ASSERT_EQ(create_pod("p1").status, 201);
  auto dup = create_pod("p1");
  EXPECT_EQ(dup.status, 409);
  EXPECT_EQ(body(dup)["reason"], "AlreadyExists");
  EXPECT_EQ(body(dup)["message"], "pods \"p1\" already exists");

  auto missing_ns = create_pod("p1", "nope");
  EXPECT_EQ(missing_ns.status, 404);
  EXPECT_EQ(body(missing_ns)["message"], "namespaces \"nope\" not found");

  auto bad_name = create_pod("Bad_Name");
  EXPECT_EQ(bad_name.status, 422);
  EXPECT_EQ(body(bad_name)["reason"], "Invalid");
  EXPECT_EQ(body(bad_name)["details"]["causes"][0]["field"], "metadata.name");
  EXPECT_NE(body(bad_name)["message"].get<std::string>().find("RFC 1123 subdomain"), std::string::npos);

  auto bad_ns = req("POST", "/api/v1/namespaces", Json{{"metadata", {{"name", "a.b"}}}});
  EXPECT_EQ(bad_ns.status, 422) << "namespaces are DNS-1123 labels";

  Json no_containers = pod("p2");
  no_containers["spec"].erase("containers");
  EXPECT_EQ(post_pod(no_containers).status, 422);

  Json gen = pod("");
  gen["metadata"].erase("name");
  gen["metadata"]["generateName"] = "worker-";
  auto g = post_pod(gen);
  ASSERT_EQ(g.status, 201);
  EXPECT_EQ(body(g)["metadata"]["name"].get<std::string>().size(), 12u);

  Json other_ns = pod("p3", "kube-system");
  EXPECT_EQ(post_pod(other_ns).status, 400);
}

TEST_F(Objects, PriorityAdmission) {
  ASSERT_EQ(req("POST", "/apis/scheduling.k8s.io/v1/priorityclasses",
                Json{{"metadata", {{"name", "high"}}}, {"value", 1000}, {"preemptionPolicy", "Never"}})
                .status,
            201);
  Json p = pod_with_spec("p1", "priorityClassName", "high");
  auto r = post_pod(p);
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(body(r)["spec"]["priority"], 1000);
  EXPECT_EQ(body(r)["spec"]["preemptionPolicy"], "Never");
  p["metadata"]["name"] = "p2";
  p["spec"]["priorityClassName"] = "missing";
  auto bad = post_pod(p);
  EXPECT_EQ(bad.status, 403);
  EXPECT_EQ(body(bad)["reason"], "Forbidden");
}

TEST_F(Objects, RuntimeClassAdmission) {
  Json p = pod_with_spec("p1", "runtimeClassName", "nvidia");
  auto missing = post_pod(p);
  EXPECT_EQ(missing.status, 403) << missing.body;
  EXPECT_EQ(body(missing)["reason"], "Forbidden");
  EXPECT_EQ(body(missing)["message"], "pods \"p1\" is forbidden: pod rejected: RuntimeClass \"nvidia\" not found");
  EXPECT_EQ(req("GET", "/api/v1/namespaces/default/pods/p1").status, 404) << "a rejected pod is not stored";

  // A RuntimeClass needs a handler that is a DNS-1123 label, and keeps it.
  const std::string rcs = "/apis/node.k8s.io/v1/runtimeclasses";
  auto no_handler = req("POST", rcs, Json{{"metadata", {{"name", "nvidia"}}}});
  EXPECT_EQ(no_handler.status, 422);
  EXPECT_EQ(body(no_handler)["details"]["causes"][0]["field"], "handler");
  EXPECT_EQ(req("POST", rcs, Json{{"metadata", {{"name", "nvidia"}}}, {"handler", "Not_A_Label"}}).status, 422);
  auto rc = req("POST", rcs, Json{{"metadata", {{"name", "nvidia"}}}, {"handler", "nvidia"}});
  ASSERT_EQ(rc.status, 201) << rc.body;
  EXPECT_EQ(body(rc)["kind"], "RuntimeClass");
  Json changed = body(rc);
  changed["handler"] = "runc";
  EXPECT_EQ(req("PUT", rcs + "/nvidia", changed).status, 422);

  auto ok = post_pod(p);
  ASSERT_EQ(ok.status, 201) << ok.body;
  EXPECT_EQ(body(ok)["spec"]["runtimeClassName"], "nvidia");

  // Pod overhead comes from the RuntimeClass; a pod may not bring its own.
  ASSERT_EQ(req("POST", rcs,
                Json{{"metadata", {{"name", "kata"}}},
                     {"handler", "kata"},
                     {"overhead", {{"podFixed", {{"cpu", "250m"}, {"memory", "120Mi"}}}}}})
                .status,
            201);
  Json k = pod_with_spec("p2", "runtimeClassName", "kata");
  auto with_overhead = post_pod(k);
  ASSERT_EQ(with_overhead.status, 201) << with_overhead.body;
  EXPECT_EQ(body(with_overhead)["spec"]["overhead"]["cpu"], "250m");
  Json own = pod_with_spec("p3", "runtimeClassName", "nvidia");
  own["spec"]["overhead"] = {{"cpu", "1"}};
  auto forbidden = post_pod(own);
  EXPECT_EQ(forbidden.status, 403);
  EXPECT_NE(body(forbidden)["message"].get<std::string>().find("Pod Overhead set without corresponding RuntimeClass"),
            std::string::npos)
      << forbidden.body;
}

TEST_F(Objects, UpdateConcurrencyAndImmutability) {
  Json p = body(create_pod("p1"));
  const std::string rv = p["metadata"]["resourceVersion"];
  p["metadata"]["labels"]["x"] = "1";
  auto ok = req("PUT", "/api/v1/namespaces/default/pods/p1", p);
  ASSERT_EQ(ok.status, 200) << ok.body;
  EXPECT_NE(body(ok)["metadata"]["resourceVersion"], rv);
  // Stale resourceVersion.
  auto stale = req("PUT", "/api/v1/namespaces/default/pods/p1", p);
  EXPECT_EQ(stale.status, 409);
  EXPECT_EQ(body(stale)["reason"], "Conflict");
  EXPECT_NE(body(stale)["message"].get<std::string>().find("the object has been modified"),
            std::string::npos);
  // A no-op update writes nothing.
  Json cur = body(ok);
  auto same = req("PUT", "/api/v1/namespaces/default/pods/p1", cur);
  EXPECT_EQ(body(same)["metadata"]["resourceVersion"], cur["metadata"]["resourceVersion"]);
  // Images may change, other spec fields may not.
  cur["spec"]["containers"][0]["image"] = "busybox:2";
  auto img = req("PUT", "/api/v1/namespaces/default/pods/p1", cur);
  ASSERT_EQ(img.status, 200) << img.body;
  cur = body(img);
  cur["spec"]["schedulerName"] = "other";
  auto imm = req("PUT", "/api/v1/namespaces/default/pods/p1", cur);
  EXPECT_EQ(imm.status, 422);
  EXPECT_NE(body(imm)["message"].get<std::string>().find("pod updates may not change fields"),
            std::string::npos);
  // Name mismatch and missing object.
  EXPECT_EQ(req("PUT", "/api/v1/namespaces/default/pods/other", cur).status, 400);
  Json ghost = cur;
  ghost["metadata"]["name"] = "ghost";
  ghost["metadata"].erase("resourceVersion");
  EXPECT_EQ(req("PUT", "/api/v1/namespaces/default/pods/ghost", ghost).status, 404);
}

TEST_F(Objects, StatusSubresource) {
  Json p = body(create_pod("p1"));
  p["status"]["phase"] = "Running";
  p["metadata"]["labels"]["via"] = "main";
  Json main = body(req("PUT", "/api/v1/namespaces/default/pods/p1", p));
  EXPECT_EQ(main["status"]["phase"], "Pending") << "status is ignored on a main-resource update";
  EXPECT_EQ(main["metadata"]["labels"]["via"], "main");
  main["status"]["phase"] = "Running";
  main["metadata"]["labels"]["via"] = "status";
  Json st = body(req("PUT", "/api/v1/namespaces/default/pods/p1/status", main));
  EXPECT_EQ(st["status"]["phase"], "Running");
  EXPECT_EQ(st["metadata"]["labels"]["via"], "main") << "a status update changes only status";
  auto patched = req("PATCH", "/api/v1/namespaces/default/pods/p1/status",
                     Json{{"status", {{"phase", "Succeeded"}}}}, "application/merge-patch+json");
  EXPECT_EQ(body(patched)["status"]["phase"], "Succeeded");
  // ConfigMaps have no status subresource.
  req("POST", "/api/v1/namespaces/default/configmaps", Json{{"metadata", {{"name", "c"}}}});
  EXPECT_EQ(req("GET", "/api/v1/namespaces/default/configmaps/c/status").status, 404);
}

TEST_F(Objects, GenerationCountsSpecChanges) {
  Json d = {{"apiVersion", "apps/v1"},
            {"kind", "Deployment"},
            {"metadata", {{"name", "d"}}},
            {"spec", {{"replicas", 1}}},
            {"status", {{"replicas", 5}}}};
  Json c = body(req("POST", "/apis/apps/v1/namespaces/default/deployments", d));
  EXPECT_EQ(c["metadata"]["generation"], 1);
  EXPECT_FALSE(c.contains("status") && c["status"].contains("replicas"));
  c["spec"]["replicas"] = 3;
  Json u = body(req("PUT", "/apis/apps/v1/namespaces/default/deployments/d", c));
  EXPECT_EQ(u["metadata"]["generation"], 2);
  u["status"] = {{"replicas", 3}};
  Json s = body(req("PUT", "/apis/apps/v1/namespaces/default/deployments/d/status", u));
  EXPECT_EQ(s["metadata"]["generation"], 2);
  EXPECT_EQ(s["status"]["replicas"], 3);
}

TEST_F(Objects, LabelAndFieldSelectors) {
  for (int i = 0; i < 6; ++i) {
    Json p = pod("p" + std::to_string(i));
    p["metadata"]["labels"] = {{"tier", i % 2 ? "web" : "db"}, {"idx", std::to_string(i)}};
    if (i == 5) p["metadata"]["labels"].erase("tier");
    ASSERT_EQ(post_pod(p).status, 201);
  }
  ASSERT_EQ(bind("p1", "n1").status, 201);
  auto names = [&](const std::string& q) {
    std::vector<std::string> out;
    const Json list = get("/api/v1/namespaces/default/pods?" + q);
    for (const auto& i : list["items"]) out.push_back(i["metadata"]["name"]);
    return out;
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(names("labelSelector=tier%3Dweb"), (V{"p1", "p3"}));
  EXPECT_EQ(names("labelSelector=tier%3D%3Ddb"), (V{"p0", "p2", "p4"}));
  EXPECT_EQ(names("labelSelector=tier!%3Ddb"), (V{"p1", "p3", "p5"}));
  EXPECT_EQ(names("labelSelector=idx+in+(1,2)"), (V{"p1", "p2"}));
  EXPECT_EQ(names("labelSelector=idx%20notin%20(1,2),tier"), (V{"p0", "p3", "p4"}));
  EXPECT_EQ(names("labelSelector=!tier"), (V{"p5"}));
  EXPECT_EQ(names("fieldSelector=spec.nodeName%3Dn1"), (V{"p1"}));
  EXPECT_EQ(names("fieldSelector=spec.nodeName%3D,metadata.name!%3Dp0"), (V{"p2", "p3", "p4", "p5"}));
  EXPECT_EQ(names("fieldSelector=status.phase%3DPending,spec.schedulerName%3Dkai-scheduler").size(), 6u);
  EXPECT_EQ(names("fieldSelector=metadata.namespace%3Ddefault").size(), 6u);
  auto bad = req("GET", "/api/v1/namespaces/default/pods?fieldSelector=spec.foo%3Dx");
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(body(bad)["message"], "field label not supported: spec.foo");
  EXPECT_EQ(req("GET", "/api/v1/namespaces/default/pods?labelSelector=a+in+(b").status, 400);
  // All namespaces.
  EXPECT_EQ(get("/api/v1/pods")["items"].size(), 6u);
}

TEST_F(Objects, Pagination) {
  for (int i = 0; i < 7; ++i) ASSERT_EQ(create_pod("p" + std::to_string(i)).status, 201);
  std::vector<std::string> seen;
  std::string cont;
  int pages = 0;
  do {
    Json page = get("/api/v1/namespaces/default/pods?limit=3" + (cont.empty() ? "" : "&continue=" + cont));
    for (const auto& i : page["items"]) seen.push_back(i["metadata"]["name"]);
    cont = page["metadata"].value("continue", "");
    if (pages == 0) {
      EXPECT_EQ(page["metadata"]["remainingItemCount"], 4);
    }
    ++pages;
  } while (!cont.empty() && pages < 10);
  EXPECT_EQ(pages, 3);
  EXPECT_EQ(seen, (std::vector<std::string>{"p0", "p1", "p2", "p3", "p4", "p5", "p6"}));
  Json all = get("/api/v1/namespaces/default/pods?limit=3&resourceVersion=0");
  EXPECT_EQ(all["items"].size(), 7u) << "resourceVersion=0 is served unpaginated";
  EXPECT_FALSE(all["metadata"].contains("continue"));
  EXPECT_EQ(req("GET", "/api/v1/namespaces/default/pods?limit=2&continue=%21%21").status, 400);
  // Later pages show the snapshot of the first page's resourceVersion, whatever changed since.
  Json first = get("/api/v1/namespaces/default/pods?limit=3");
  ASSERT_EQ(req("DELETE", "/api/v1/namespaces/default/pods/p4").status, 200);
  ASSERT_EQ(create_pod("p3a").status, 201);
  ASSERT_EQ(req("PATCH", "/api/v1/namespaces/default/pods/p5",
                Json{{"metadata", {{"labels", {{"new", "1"}}}}}}, "application/merge-patch+json")
                .status,
            200);
  Json rest = get("/api/v1/namespaces/default/pods?limit=10&continue=" +
                  first["metadata"]["continue"].get<std::string>());
  std::vector<std::string> later;
  for (const auto& i : rest["items"]) later.push_back(i["metadata"]["name"]);
  EXPECT_EQ(later, (std::vector<std::string>{"p3", "p4", "p5", "p6"}));
  EXPECT_FALSE(rest["items"][2]["metadata"]["labels"].contains("new"));
  EXPECT_EQ(rest["metadata"]["resourceVersion"], first["metadata"]["resourceVersion"]);
  // Smaller pages of the same snapshot count what remains of it, whatever changed since; a key
  // added after the first page and changed again stays out of it.
  ASSERT_EQ(req("PATCH", "/api/v1/namespaces/default/pods/p3a",
                Json{{"metadata", {{"labels", {{"new", "1"}}}}}}, "application/merge-patch+json")
                .status,
            200);
  ASSERT_EQ(create_pod("p9").status, 201);
  Json second = get("/api/v1/namespaces/default/pods?limit=2&continue=" +
                    first["metadata"]["continue"].get<std::string>());
  ASSERT_EQ(second["items"].size(), 2u);
  EXPECT_EQ(second["items"][0]["metadata"]["name"], "p3");
  EXPECT_EQ(second["items"][1]["metadata"]["name"], "p4");
  EXPECT_EQ(second["metadata"]["remainingItemCount"], 2);
  Json third = get("/api/v1/namespaces/default/pods?limit=2&continue=" +
                   second["metadata"]["continue"].get<std::string>());
  ASSERT_EQ(third["items"].size(), 2u);
  EXPECT_EQ(third["items"][0]["metadata"]["name"], "p5");
  EXPECT_EQ(third["items"][1]["metadata"]["name"], "p6");
  EXPECT_FALSE(third["metadata"].contains("continue"));
  EXPECT_FALSE(third["metadata"].contains("remainingItemCount"));
  // Filtered pages report no count (the real server cannot know it without reading them all).
  Json filtered = get("/api/v1/namespaces/default/pods?limit=1&labelSelector=new%21%3D1");
  EXPECT_EQ(filtered["items"].size(), 1u);
  EXPECT_TRUE(filtered["metadata"].contains("continue"));
  EXPECT_FALSE(filtered["metadata"].contains("remainingItemCount"));
  server_->compact_history();
  EXPECT_EQ(req("GET", "/api/v1/namespaces/default/pods?limit=10&continue=" +
                           first["metadata"]["continue"].get<std::string>())
                .status,
            410);
}

TEST_F(Objects, DeletePreconditionsGraceAndFinalizers) {
  Json p = body(create_pod("p1"));
  Json wrong_uid = {{"preconditions", {{"uid", "00000000-0000-0000-0000-000000000000"}}}};
  auto c = req("DELETE", "/api/v1/namespaces/default/pods/p1", wrong_uid);
  EXPECT_EQ(c.status, 409);
  EXPECT_NE(body(c)["message"].get<std::string>().find("Precondition failed: UID in precondition"),
            std::string::npos);
  auto c2 = req("DELETE", "/api/v1/namespaces/default/pods/p1",
                Json{{"preconditions", {{"resourceVersion", "1"}}}});
  EXPECT_EQ(c2.status, 409);
  // An unbound pod goes at once, whatever the grace period.
  auto d = req("DELETE", "/api/v1/namespaces/default/pods/p1",
               Json{{"preconditions", {{"uid", p["metadata"]["uid"]}}}});
  EXPECT_EQ(d.status, 200);
  EXPECT_EQ(req("GET", "/api/v1/namespaces/default/pods/p1").status, 404);
  EXPECT_EQ(req("DELETE", "/api/v1/namespaces/default/pods/p1").status, 404);

  // A bound pod deleted with a grace period stays terminating until confirmed.
  ASSERT_EQ(create_pod("p2").status, 201);
  ASSERT_EQ(bind("p2", "n1").status, 201);
  auto g = req("DELETE", "/api/v1/namespaces/default/pods/p2?gracePeriodSeconds=30");
  ASSERT_EQ(g.status, 200);
  Json term = get("/api/v1/namespaces/default/pods/p2");
  EXPECT_TRUE(term["metadata"].contains("deletionTimestamp"));
  EXPECT_EQ(term["metadata"]["deletionGracePeriodSeconds"], 30);
  EXPECT_EQ(req("DELETE", "/api/v1/namespaces/default/pods/p2", Json{{"gracePeriodSeconds", 0}}).status, 200);
  EXPECT_EQ(req("GET", "/api/v1/namespaces/default/pods/p2").status, 404);

  // Finalizers hold any object until they are removed.
  Json cm = {{"metadata", {{"name", "c"}, {"finalizers", {"example.com/hold"}}}}};
  ASSERT_EQ(req("POST", "/api/v1/namespaces/default/configmaps", cm).status, 201);
  ASSERT_EQ(req("DELETE", "/api/v1/namespaces/default/configmaps/c").status, 200);
  Json held = get("/api/v1/namespaces/default/configmaps/c");
  ASSERT_TRUE(held["metadata"].contains("deletionTimestamp"));
  held["metadata"]["finalizers"] = Json::array();
  EXPECT_EQ(req("PUT", "/api/v1/namespaces/default/configmaps/c", held).status, 200);
  EXPECT_EQ(req("GET", "/api/v1/namespaces/default/configmaps/c").status, 404);
}

TEST_F(Objects, BindingAndEviction) {
  ASSERT_EQ(create_pod("p1").status, 201);
  auto b = bind("p1", "node-a");
  ASSERT_EQ(b.status, 201) << b.body;
  EXPECT_EQ(body(b)["status"], "Success");
  Json p = get("/api/v1/namespaces/default/pods/p1");
  EXPECT_EQ(p["spec"]["nodeName"], "node-a");
  EXPECT_EQ(p["status"]["conditions"][0]["type"], "PodScheduled");
  auto again = bind("p1", "node-b");
  EXPECT_EQ(again.status, 409);
  EXPECT_EQ(body(again)["reason"], "Conflict");
  EXPECT_NE(body(again)["message"].get<std::string>().find("already assigned to node \"node-a\""),
            std::string::npos);
  EXPECT_EQ(bind("ghost", "node-a").status, 404);
  // Eviction deletes through the same grace rules.
  auto ev = req("POST", "/api/v1/namespaces/default/pods/p1/eviction",
                Json{{"apiVersion", "policy/v1"}, {"kind", "Eviction"}, {"metadata", {{"name", "p1"}}}});
  EXPECT_EQ(ev.status, 201) << ev.body;
  EXPECT_TRUE(get("/api/v1/namespaces/default/pods/p1")["metadata"].contains("deletionTimestamp"));
  ASSERT_EQ(create_pod("p2").status, 201);
  EXPECT_EQ(
      req("POST", "/api/v1/namespaces/default/pods/p2/eviction", Json{{"metadata", {{"name", "p2"}}}}).status,
      201);
  EXPECT_EQ(req("GET", "/api/v1/namespaces/default/pods/p2").status, 404);
  EXPECT_EQ(req("POST", "/api/v1/namespaces/default/pods/ghost/eviction", Json::object()).status, 404);
}

TEST_F(Objects, Patches) {
  ASSERT_EQ(create_pod("p1").status, 201);
  auto m =
      req("PATCH", "/api/v1/namespaces/default/pods/p1",
          Json{{"metadata", {{"labels", {{"app", nullptr}, {"x", "1"}}}}}}, "application/merge-patch+json");
  ASSERT_EQ(m.status, 200) << m.body;
  EXPECT_EQ(body(m)["metadata"]["labels"], (Json{{"x", "1"}}));
  auto jp = req("PATCH", "/api/v1/namespaces/default/pods/p1",
                Json::array({{{"op", "add"}, {"path", "/metadata/annotations"}, {"value", {{"a", "b"}}}}}),
                "application/json-patch+json");
  ASSERT_EQ(jp.status, 200) << jp.body;
  EXPECT_EQ(body(jp)["metadata"]["annotations"]["a"], "b");
  auto failed = req("PATCH", "/api/v1/namespaces/default/pods/p1",
                    Json::array({{{"op", "test"}, {"path", "/metadata/name"}, {"value", "other"}}}),
                    "application/json-patch+json");
  EXPECT_EQ(failed.status, 422);
  // Strategic merge: containers merge by name, env by name, $setElementOrder honoured.
  Json d = Json::parse(R"({"metadata":{"name":"d"},"spec":{"template":{"spec":{"containers":[
      {"name":"a","image":"i1","env":[{"name":"X","value":"1"}]},{"name":"b","image":"i2"}]}}}})");
  ASSERT_EQ(req("POST", "/apis/apps/v1/namespaces/default/deployments", d).status, 201);
  Json smp = Json::parse(R"({"spec":{"template":{"spec":{
      "$setElementOrder/containers":[{"name":"b"},{"name":"a"}],
      "containers":[{"name":"a","env":[{"name":"Y","value":"2"}]},{"name":"b","image":"i3"}]}}}})");
  auto s = req("PATCH", "/apis/apps/v1/namespaces/default/deployments/d", smp,
               "application/strategic-merge-patch+json");
  ASSERT_EQ(s.status, 200) << s.body;
  Json cs = body(s)["spec"]["template"]["spec"]["containers"];
  ASSERT_EQ(cs.size(), 2u);
  EXPECT_EQ(cs[0]["name"], "b");
  EXPECT_EQ(cs[0]["image"], "i3");
  EXPECT_EQ(cs[1]["image"], "i1");
  EXPECT_EQ(cs[1]["env"].size(), 2u);
  Json del = Json::parse(R"({"spec":{"template":{"spec":{"containers":[{"name":"b","$patch":"delete"}]}}}})");
  auto s2 = req("PATCH", "/apis/apps/v1/namespaces/default/deployments/d", del,
                "application/strategic-merge-patch+json");
  EXPECT_EQ(body(s2)["spec"]["template"]["spec"]["containers"].size(), 1u);
  // A resourceVersion in a patch is a precondition.
  auto stale = req("PATCH", "/api/v1/namespaces/default/pods/p1",
                   Json{{"metadata", {{"resourceVersion", "1"}}}}, "application/merge-patch+json");
  EXPECT_EQ(stale.status, 409);
  EXPECT_EQ(req("PATCH", "/api/v1/namespaces/default/pods/p1", Json::object(), "text/plain").status, 415);
  EXPECT_EQ(
      req("PATCH", "/api/v1/namespaces/default/pods/ghost", Json::object(), "application/merge-patch+json")
          .status,
      404);
}

TEST_F(Objects, MicroTimeAndEventRules) {
  Json lease = named("coordination.k8s.io/v1", "Lease", "l");
  lease["spec"] = {
      {"holderIdentity", "a"}, {"leaseDurationSeconds", 2}, {"renewTime", "2024-01-02T03:04:05Z"}};
  auto bad = req("POST", "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases", lease);
  EXPECT_EQ(bad.status, 400) << "the real server fails to decode a MicroTime without 6 fractional digits";
  lease["spec"]["renewTime"] = "2024-01-02T03:04:05.123456Z";
  EXPECT_EQ(req("POST", "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases", lease).status, 201);

  Json ev = {{"apiVersion", "events.k8s.io/v1"},
             {"kind", "Event"},
             {"metadata", {{"name", "e1"}}},
             {"reportingController", "kai"},
             {"reportingInstance", "kai-0"},
             {"action", "Binding"},
             {"reason", "Scheduled"},
             {"regarding", {{"kind", "Pod"}, {"name", "p"}, {"namespace", "default"}}}};
  auto no_time = req("POST", "/apis/events.k8s.io/v1/namespaces/default/events", ev);
  EXPECT_EQ(no_time.status, 422);
  EXPECT_EQ(body(no_time)["details"]["causes"][0]["field"], "eventTime");
  ev["eventTime"] = "2024-01-02T03:04:05.000000Z";
  EXPECT_EQ(req("POST", "/apis/events.k8s.io/v1/namespaces/default/events", ev).status, 201);
  // One stored Event, two API versions with their own field names.
  Json as_core = get("/api/v1/namespaces/default/events/e1");
  EXPECT_EQ(as_core["apiVersion"], "v1");
  EXPECT_EQ(as_core["involvedObject"]["name"], "p");
  EXPECT_EQ(as_core["reportingComponent"], "kai");
  Json as_new = get("/apis/events.k8s.io/v1/namespaces/default/events/e1");
  EXPECT_EQ(as_new["regarding"]["name"], "p");
  EXPECT_FALSE(as_new.contains("involvedObject"));
  Json core = {{"metadata", {{"name", "e2"}}},
               {"reason", "Scheduled"},
               {"message", "ok"},
               {"involvedObject", {{"kind", "Pod"}, {"name", "p"}, {"namespace", "default"}}}};
  EXPECT_EQ(req("POST", "/api/v1/namespaces/default/events", core).status, 201);
  // Lists render each stored Event in the version asked for, as gets do.
  Json new_list = get("/apis/events.k8s.io/v1/namespaces/default/events");
  EXPECT_EQ(new_list["kind"], "EventList");
  EXPECT_EQ(new_list["apiVersion"], "events.k8s.io/v1");
  ASSERT_EQ(new_list["items"].size(), 2u);
  EXPECT_EQ(new_list["items"][0], as_new);
  EXPECT_EQ(new_list["items"][1]["apiVersion"], "events.k8s.io/v1");
  EXPECT_EQ(new_list["items"][1]["regarding"]["name"], "p");
  Json core_list = get("/api/v1/namespaces/default/events");
  ASSERT_EQ(core_list["items"].size(), 2u);
  EXPECT_EQ(core_list["items"][0], as_core);
  EXPECT_EQ(core_list["items"][1]["apiVersion"], "v1");
  EXPECT_EQ(core_list["items"][1]["kind"], "Event");
}

TEST_F(Objects, CustomResourcesFromCrdFiles) {
  Json q = {{"apiVersion", "scheduling.run.ai/v2"},
            {"kind", "Queue"},
            {"metadata", {{"name", "team-a"}}},
            {"spec", {{"priority", 7}, {"unknownField", 1}}},
            {"status", {{"allocated", {{"gpu", "1"}}}}}};
  auto c = req("POST", "/apis/scheduling.run.ai/v2/queues", q);
  ASSERT_EQ(c.status, 201) << c.body;
  Json got = body(c);
  EXPECT_EQ(got["spec"]["priority"], 7);
  EXPECT_FALSE(got["spec"].contains("unknownField")) << "pruned by the structural schema";
  EXPECT_FALSE(got.contains("status")) << "status ignored on create";
  EXPECT_EQ(got["metadata"]["generation"], 1);
  Json bad_type = q;
  bad_type["metadata"]["name"] = "team-b";
  bad_type["spec"]["priority"] = "high";
  auto invalid = req("POST", "/apis/scheduling.run.ai/v2/queues", bad_type);
  EXPECT_EQ(invalid.status, 422) << invalid.body;
  EXPECT_EQ(body(invalid)["message"],
            "Queue.scheduling.run.ai \"team-b\" is invalid: spec.priority: Invalid value: \"string\": "
            "spec.priority in "
            "body must be of type integer: \"string\"");
  EXPECT_EQ(req("POST", "/apis/scheduling.run.ai/v2/namespaces/default/queues", q).status, 404)
      << "queues are cluster-scoped";
  Json pg = {{"apiVersion", "scheduling.run.ai/v2alpha2"},
             {"kind", "PodGroup"},
             {"metadata", {{"name", "g"}}},
             {"spec", {{"minMember", 2}, {"queue", "team-a"}}}};
  ASSERT_EQ(req("POST", "/apis/scheduling.run.ai/v2alpha2/namespaces/default/podgroups", pg).status, 201);
  EXPECT_EQ(req("POST", "/apis/scheduling.run.ai/v2alpha2/namespaces/nope/podgroups", pg).status, 404);
  EXPECT_EQ(req("PATCH", "/apis/scheduling.run.ai/v2alpha2/namespaces/default/podgroups/g", Json::object(),
                "application/strategic-merge-patch+json")
                .status,
            415);
  auto st = req("PATCH", "/apis/scheduling.run.ai/v2alpha2/namespaces/default/podgroups/g/status",
                Json{{"status", {{"phase", "Running"}}}}, "application/merge-patch+json");
  EXPECT_EQ(st.status, 200) << st.body;
  EXPECT_EQ(get("/apis/scheduling.run.ai/v1alpha2/namespaces/default/bindrequests")["kind"],
            "BindRequestList");
}

// A schema pattern is checked as the real server checks it: a Topology level must name a label key.
TEST_F(Objects, CustomResourceStringsMustMatchTheirSchemaPattern) {
  auto topology = [](const std::string& name, const std::string& label) {
    return Json{{"apiVersion", "kai.scheduler/v1alpha1"},
                {"kind", "Topology"},
                {"metadata", {{"name", name}}},
                {"spec", {{"levels", Json::array({{{"nodeLabel", label}}})}}}};
  };
  EXPECT_EQ(req("POST", "/apis/kai.scheduler/v1alpha1/topologies", topology("good", "example.com/rack")).status, 201);
  auto bad = req("POST", "/apis/kai.scheduler/v1alpha1/topologies", topology("bad", "not a label"));
  EXPECT_EQ(bad.status, 422) << bad.body;
  EXPECT_NE(body(bad)["message"].get<std::string>().find(
                "spec.levels[0].nodeLabel: Invalid value: \"not a label\": spec.levels[0].nodeLabel in body should "
                "match '^("),
            std::string::npos)
      << bad.body;
}

// The one CEL rule kai-apiserver evaluates, as the real server does on an update: `self == oldSelf`.
// The Topology CRD's levels are immutable; its labels are not.
TEST_F(Objects, ACustomResourceFieldWhoseRuleIsSelfEqualsOldSelfCannotChange) {
  Json t = {{"apiVersion", "kai.scheduler/v1alpha1"},
            {"kind", "Topology"},
            {"metadata", {{"name", "layout"}}},
            {"spec", {{"levels", Json::array({{{"nodeLabel", "example.com/zone"}}})}}}};
  ASSERT_EQ(req("POST", "/apis/kai.scheduler/v1alpha1/topologies", t).status, 201);
  auto changed = req("PATCH", "/apis/kai.scheduler/v1alpha1/topologies/layout",
                     Json{{"spec", {{"levels", Json::array({{{"nodeLabel", "example.com/rack"}}})}}}},
                     "application/merge-patch+json");
  EXPECT_EQ(changed.status, 422) << changed.body;
  EXPECT_EQ(body(changed)["message"],
            "Topology.kai.scheduler \"layout\" is invalid: spec.levels: Invalid value: \"array\": levels are immutable");
  auto relabelled = req("PATCH", "/apis/kai.scheduler/v1alpha1/topologies/layout",
                        Json{{"metadata", {{"labels", {{"team", "infra"}}}}}}, "application/merge-patch+json");
  EXPECT_EQ(relabelled.status, 200) << relabelled.body;
  EXPECT_EQ(get("/apis/kai.scheduler/v1alpha1/topologies/layout")["spec"]["levels"][0]["nodeLabel"],
            "example.com/zone");
}

TEST_F(Objects, CrdAtRunTime) {
  Json crd = named("apiextensions.k8s.io/v1", "CustomResourceDefinition", "widgets.example.com");
  crd["spec"] = {
      {"group", "example.com"},
      {"scope", "Namespaced"},
      {"names",
       {{"plural", "widgets"}, {"singular", "widget"}, {"kind", "Widget"}, {"listKind", "WidgetList"}}},
      {"versions",
       {{{"name", "v1"},
         {"served", true},
         {"storage", true},
         {"schema",
          {{"openAPIV3Schema", {{"type", "object"}, {"x-kubernetes-preserve-unknown-fields", true}}}}}}}}};
  EXPECT_EQ(req("GET", "/apis/example.com/v1/namespaces/default/widgets").status, 404);
  auto c = req("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd);
  ASSERT_EQ(c.status, 201) << c.body;
  EXPECT_EQ(body(c)["status"]["conditions"][1]["type"], "Established");
  Json w = {{"apiVersion", "example.com/v1"}, {"kind", "Widget"}, {"metadata", {{"name", "w"}}}, {"size", 3}};
  ASSERT_EQ(req("POST", "/apis/example.com/v1/namespaces/default/widgets", w).status, 201);
  EXPECT_EQ(get("/apis/example.com/v1/namespaces/default/widgets/w")["size"], 3);
  bool listed = false;
  const Json groups = get("/apis");
  for (const auto& g : groups["groups"]) listed |= g["name"] == "example.com";
  EXPECT_TRUE(listed);
  crd["metadata"]["name"] = "wrong.example.com";
  EXPECT_EQ(req("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd).status, 422);
  ASSERT_EQ(
      req("DELETE", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com").status,
      200);
  EXPECT_EQ(req("GET", "/apis/example.com/v1/namespaces/default/widgets/w").status, 404);
}

TEST_F(Objects, NamespaceDeletionRemovesContents) {
  ASSERT_EQ(req("POST", "/api/v1/namespaces", Json{{"metadata", {{"name", "team"}}}}).status, 201);
  Json ns = get("/api/v1/namespaces/team");
  EXPECT_EQ(ns["status"]["phase"], "Active");
  EXPECT_EQ(ns["metadata"]["labels"]["kubernetes.io/metadata.name"], "team");
  ASSERT_EQ(create_pod("p", "team").status, 201);
  ASSERT_EQ(req("DELETE", "/api/v1/namespaces/team").status, 200);
  EXPECT_EQ(req("GET", "/api/v1/namespaces/team/pods/p").status, 404);
  EXPECT_EQ(create_pod("p2", "team").status, 404);
}

TEST_F(Objects, DryRunStoresNothing) {
  auto r = req("POST", "/api/v1/namespaces/default/pods?dryRun=All", pod("p1"));
  EXPECT_EQ(r.status, 201);
  EXPECT_EQ(req("GET", "/api/v1/namespaces/default/pods/p1").status, 404);
  EXPECT_EQ(req("POST", "/api/v1/namespaces/default/pods?dryRun=Some", pod("p1")).status, 400);
}

TEST_F(Objects, NodesAreClusterScopedAndKeepStatusOnCreate) {
  Json n = {
      {"metadata", {{"name", "n1"}}},
      {"status", {{"capacity", {{"nvidia.com/gpu", "8"}}}, {"allocatable", {{"nvidia.com/gpu", "8"}}}}}};
  auto r = req("POST", "/api/v1/nodes", n);
  ASSERT_EQ(r.status, 201);
  EXPECT_EQ(body(r)["status"]["capacity"]["nvidia.com/gpu"], "8");
  EXPECT_EQ(req("GET", "/api/v1/namespaces/default/nodes/n1").status, 404);
  auto cordon = req("PATCH", "/api/v1/nodes/n1", Json{{"spec", {{"unschedulable", true}}}},
                    "application/strategic-merge-patch+json");
  EXPECT_EQ(body(cordon)["spec"]["unschedulable"], true);
  EXPECT_EQ(get("/api/v1/nodes?fieldSelector=spec.unschedulable%3Dtrue")["items"].size(), 1u);
}

}  // namespace
}  // namespace kai::apiserver
