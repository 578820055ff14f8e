// The statuses the cycle asks to write (actors/scheduler/core/status_objects.hpp), as KAI's
// controllers write them: a pending gang's schedulingConditions set and cleared once it runs, a group's
// resourcesStatus through bind, eviction and deletion, a Queue's sums up the tree and its childQueues after
// re-parenting, nothing asked while the watched status already says it, the retry marks, the
// queue-controller figures.
#include "actors/scheduler/core/status_objects.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <nlohmann/json.hpp>

#include "actors/scheduler/core/cycle.hpp"
#include "events/projection.hpp"
#include "k8s/model/codec.hpp"

namespace kai::core {
namespace {

using Json = nlohmann::json;
constexpr int64_t kNow = 1'800'000'000;

Json node(const std::string& name, int gpus) {
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata", {{"name", name}, {"uid", "uid-" + name}}},
          {"status",
           {{"allocatable",
             {{"cpu", "32"}, {"memory", "256Gi"}, {"pods", "110"}, {"nvidia.com/gpu", std::to_string(gpus)}}},
            {"conditions", Json::array({{{"type", "Ready"}, {"status", "True"}}})}}}};
}

Json queue(const std::string& name, const std::string& parent, Json status = Json::object()) {
  Json r = {{"quota", -1}, {"limit", -1}, {"overQuotaWeight", 1}};
  Json q = {{"apiVersion", "scheduling.run.ai/v2"},
            {"kind", "Queue"},
            {"metadata", {{"name", name}, {"uid", "uid-" + name}}},
            {"spec", {{"displayName", "Team " + name}, {"resources", {{"gpu", r}, {"cpu", r}, {"memory", r}}}}}};
  if (!parent.empty()) q["spec"]["parentQueue"] = parent;
  if (!status.empty()) q["status"] = status;
  return q;
}

Json pod_group(const std::string& name, int min_member, const std::string& priority, Json status = Json::object()) {
  Json pg = {{"apiVersion", "scheduling.run.ai/v2alpha2"},
             {"kind", "PodGroup"},
             {"metadata", {{"name", name}, {"namespace", "ns"}, {"uid", "uid-" + name}}},
             {"spec", {{"minMember", min_member}, {"queue", "team"}, {"priorityClassName", priority}}}};
  if (!status.empty()) pg["status"] = status;
  return pg;
}

/// A pod of `group` asking `gpus` GPUs (none: CPU only) and 1 CPU; on `node` (Running) when given.
Json pod(const std::string& name, const std::string& group, int gpus, const std::string& node = "") {
  Json p = {{"apiVersion", "v1"},
            {"kind", "Pod"},
            {"metadata",
             {{"name", name},
              {"namespace", "ns"},
              {"uid", "uid-" + name},
              {"labels", {{"kai.scheduler/queue", "team"}}},
              {"annotations", {{"pod-group-name", group}}},
              {"creationTimestamp", "2027-01-15T08:00:00Z"}}},
            {"spec",
             {{"schedulerName", "kai-scheduler"},
              {"containers",
               Json::array({{{"name", "main"},
                             {"resources",
                              {{"requests", {{"cpu", "1"}}},
                               {"limits", gpus > 0 ? Json{{"nvidia.com/gpu", std::to_string(gpus)}}
                                                   : Json::object()}}}}})}}},
            {"status", {{"phase", "Pending"}}}};
  if (!node.empty()) {
    p["spec"]["nodeName"] = node;
    p["status"]["phase"] = "Running";
  }
  return p;
}

struct Cycle {
  model::ClusterObjects objects;
  CycleResult result;
  /// The write for `object` ("PodGroup ns/name", "Queue name"), parsed, or null.
  Json patch(const std::string& key) const {
    for (const auto& w : result.status_writes) {
      if (w.mark_key() == key && !w.settled) return Json::parse(w.patch_json);
    }
    return nullptr;
  }
};

std::unique_ptr<Cycle> run(const Json& items, const events::ScheduleRecords* records = nullptr, int64_t now = kNow) {
  auto c = std::make_unique<Cycle>();
  auto o = model::decode_snapshot(Json{{"apiVersion", "v1"}, {"kind", "List"}, {"items", items}}.dump());
  EXPECT_TRUE(o) << o.message();
  if (o) c->objects = std::move(o).value();
  CycleInput in;
  in.objects = model::ObjectRefs::of(c->objects);
  in.records = records;
  in.options.now = now;
  in.options.seed = 3;
  in.cycle_id = 5;
  c->result = run_cycle(in);
  return c;
}

void fold(events::ScheduleRecords& records, const CycleResult& r, int64_t now) {
  events::Event start;
  start.payload = events::CycleStart{5, 0, 0, now};
  events::apply_record(records, start);
  for (auto& p : cycle_records(r, 5, 0)) {
    events::Event e;
    e.payload = p;
    events::apply_record(records, e);
  }
}

TEST(StatusObjects, AGangThatCannotFitGetsItsConditionAndItsRequestsAndTheQueuesSumThem) {
  const auto c = run({node("n1", 4), queue("dept", ""), queue("team", "dept"), pod_group("big", 2, "train"),
                      pod("big-0", "big", 4), pod("big-1", "big", 4)});
  EXPECT_TRUE(c->result.decisions.empty());
  const Json pg = c->patch("PodGroup ns/big");
  ASSERT_TRUE(pg.is_object());
  const Json& cond = pg["status"]["schedulingConditions"][0];
  EXPECT_EQ(cond["type"], "UnschedulableOnNodePool");
  EXPECT_EQ(cond["nodePool"], "default");
  EXPECT_EQ(cond["reason"], "Unschedulable");
  EXPECT_EQ(cond["status"], "True");
  EXPECT_EQ(cond["transitionID"], "1");
  EXPECT_EQ(cond["lastTransitionTime"], "2027-01-15T08:00:00Z");
  EXPECT_FALSE(cond["message"].get<std::string>().empty());
  ASSERT_FALSE(cond["reasons"].empty());
  EXPECT_EQ(pg["status"]["resourcesStatus"]["requested"], (Json{{"cpu", "2"}, {"nvidia.com/gpu", "8"}}));
  EXPECT_FALSE(pg["status"]["resourcesStatus"].contains("allocated")) << "KAI omits an empty list";
  // The queue and its parent: the group's requests summed up the tree; the parent lists its child.
  EXPECT_EQ(c->patch("Queue team")["status"]["requested"], (Json{{"cpu", "2"}, {"nvidia.com/gpu", "8"}}));
  const Json dept = c->patch("Queue dept");
  EXPECT_EQ(dept["status"]["requested"], (Json{{"cpu", "2"}, {"nvidia.com/gpu", "8"}}));
  EXPECT_EQ(dept["status"]["childQueues"], Json::array({"team"}));
}

TEST(StatusObjects, ARunningGroupHasItsAllocationsAndLosesItsConditions) {
  const Json old_status = {
      {"schedulingConditions",
       Json::array({{{"type", "UnschedulableOnNodePool"}, {"nodePool", "default"}, {"reason", "Unschedulable"},
                     {"message", "was stuck"}, {"status", "True"}, {"transitionID", "4"}}})}};
  // inference (125) is non-preemptible: its allocation is also allocatedNonPreemptible.
  const auto c = run({node("n1", 4), queue("team", ""), pod_group("serve", 1, "inference", old_status),
                      pod("serve-0", "serve", 2, "n1")});
  const Json pg = c->patch("PodGroup ns/serve");
  ASSERT_TRUE(pg.is_object());
  EXPECT_TRUE(pg["status"]["schedulingConditions"].is_null()) << "cleared: " << pg.dump();
  const Json want = {{"cpu", "1"}, {"nvidia.com/gpu", "2"}};
  EXPECT_EQ(pg["status"]["resourcesStatus"]["allocated"], want);
  EXPECT_EQ(pg["status"]["resourcesStatus"]["allocatedNonPreemptible"], want);
  EXPECT_EQ(pg["status"]["resourcesStatus"]["requested"], want);
  const Json q = c->patch("Queue team");
  EXPECT_EQ(q["status"]["allocated"], want);
  EXPECT_EQ(q["status"]["allocatedNonPreemptible"], want);

  const std::vector<QueueControllerFigures>& figures = c->result.queue_statuses;
  ASSERT_EQ(figures.size(), 1u);
  EXPECT_EQ(figures[0].display_name, "Team team");
  EXPECT_EQ(figures[0].allocated_gpus, 2);
  EXPECT_EQ(figures[0].allocated_cpu_cores, 1);
  EXPECT_EQ(figures[0].deserved_gpus, -1);
  EXPECT_EQ(figures[0].quota_memory_bytes, -1);
}

TEST(StatusObjects, AStatusTheWatchAlreadyShowsIsNotWrittenAndADeletedPodIsRemovedWithNull) {
  const Json rs = {{"resourcesStatus",
                    {{"allocated", {{"cpu", "1"}, {"nvidia.com/gpu", "2"}}},
                     {"requested", {{"cpu", "1"}, {"nvidia.com/gpu", "2"}}}}}};
  const Json qs = {{"allocated", {{"cpu", "1"}, {"nvidia.com/gpu", "2"}}},
                   {"requested", {{"cpu", "1"}, {"nvidia.com/gpu", "2"}}}};
  auto c = run({node("n1", 4), queue("team", "", qs), pod_group("job", 1, "train", rs), pod("job-0", "job", 2, "n1")});
  EXPECT_TRUE(c->result.status_writes.empty()) << c->result.status_writes.front().patch_json;
  // The pod is gone: the lists empty out and are removed with null.
  c = run({node("n1", 4), queue("team", "", qs), pod_group("job", 1, "train", rs)});
  const Json pg = c->patch("PodGroup ns/job");
  EXPECT_TRUE(pg["status"]["resourcesStatus"]["allocated"].is_null()) << pg.dump();
  EXPECT_TRUE(c->patch("Queue team")["status"]["requested"].is_null());
  // A CPU-only pod stays: the list keeps its CPU and names the GPUs it lost with null.
  c = run({node("n1", 4), queue("team", "", qs), pod_group("job", 1, "train", rs), pod("job-1", "job", 0, "n1")});
  EXPECT_EQ(c->patch("PodGroup ns/job")["status"]["resourcesStatus"]["allocated"],
            (Json{{"cpu", "1"}, {"nvidia.com/gpu", nullptr}}));
}

TEST(StatusObjects, AnEvictedPodCountsUntilItIsGoneAsKaiCountsPodsByPhase) {
  // KAI's pod-group controller reads phases only: a pod being evicted (deletionTimestamp set, still
  // Running) keeps its allocation in the group and the queue until it is gone.
  const Json rs = {{"resourcesStatus",
                    {{"allocated", {{"cpu", "1"}, {"nvidia.com/gpu", "2"}}},
                     {"requested", {{"cpu", "1"}, {"nvidia.com/gpu", "2"}}}}}};
  const Json qs = {{"allocated", {{"cpu", "1"}, {"nvidia.com/gpu", "2"}}},
                   {"requested", {{"cpu", "1"}, {"nvidia.com/gpu", "2"}}}};
  Json evicted = pod("job-0", "job", 2, "n1");
  evicted["metadata"]["deletionTimestamp"] = "2027-01-15T08:30:00Z";
  auto c = run({node("n1", 4), queue("team", "", qs), pod_group("job", 1, "train", rs), evicted});
  EXPECT_TRUE(c->result.status_writes.empty()) << c->result.status_writes.front().patch_json;
  // Gone: both lists empty out.
  c = run({node("n1", 4), queue("team", "", qs), pod_group("job", 1, "train", rs)});
  EXPECT_TRUE(c->patch("PodGroup ns/job")["status"]["resourcesStatus"]["allocated"].is_null());
  EXPECT_TRUE(c->patch("Queue team")["status"]["allocated"].is_null());
}

TEST(StatusObjects, TheSameWriteIsNotAskedAgainWithinTheRetryPeriodAndIsSettledOnceSeen) {
  const Json items = {node("n1", 4), queue("team", ""), pod_group("big", 2, "train"), pod("big-0", "big", 4),
                      pod("big-1", "big", 4)};
  events::ScheduleRecords records;
  const auto first = run(items, &records);
  ASSERT_EQ(first->result.status_writes.size(), 2u);
  fold(records, first->result, kNow);
  // A later cycle's condition carries its own time, but asks for the same thing: nothing logged.
  EXPECT_TRUE(run(items, &records, kNow + 20)->result.status_writes.empty());
  EXPECT_EQ(run(items, &records, kNow + 31)->result.status_writes.size(), 2u) << "not seen after 30 s: asked again";
  // The watch shows both statuses: settled, then nothing.
  Json seen = items;
  seen[2]["status"] = first->patch("PodGroup ns/big")["status"];
  seen[1]["status"] = first->patch("Queue team")["status"];
  const auto settled = run(seen, &records, kNow + 1);
  ASSERT_EQ(settled->result.status_writes.size(), 2u);
  EXPECT_TRUE(settled->result.status_writes[0].settled);
  EXPECT_TRUE(settled->result.status_writes[1].settled);
  fold(records, settled->result, kNow + 1);
  EXPECT_TRUE(records.status_writes.empty());
  EXPECT_TRUE(run(seen, &records, kNow + 2)->result.status_writes.empty());
}

TEST(StatusObjects, ANewReasonIsTheNextTransitionAndReparentingMovesTheChild) {
  const Json old_status = {
      {"schedulingConditions",
       Json::array({{{"type", "UnschedulableOnNodePool"}, {"nodePool", "default"}, {"reason", "Unschedulable"},
                     {"message", "an older reason"}, {"status", "True"}, {"transitionID", "7"}}})}};
  const auto c = run({node("n1", 4), queue("a", ""), queue("b", "", {{"childQueues", Json::array({"team"})}}),
                      queue("team", "a"), pod_group("big", 2, "train", old_status), pod("big-0", "big", 4),
                      pod("big-1", "big", 4)});
  const Json conds = c->patch("PodGroup ns/big")["status"]["schedulingConditions"];
  ASSERT_EQ(conds.size(), 1u);
  EXPECT_EQ(conds[0]["transitionID"], "8");
  EXPECT_NE(conds[0]["message"], "an older reason");
  EXPECT_EQ(c->patch("Queue a")["status"]["childQueues"], Json::array({"team"}));
  EXPECT_TRUE(c->patch("Queue b")["status"]["childQueues"].is_null());
}

TEST(StatusObjects, TheMarkHashIgnoresTheConditionsTime) {
  events::StatusWrite a{1, "PodGroup", "ns/pg", "u",
                        R"({"status":{"schedulingConditions":[{"lastTransitionTime":"2027-01-15T08:00:00Z","type":"X"}]}})"};
  events::StatusWrite b = a;
  b.patch_json = R"({"status":{"schedulingConditions":[{"lastTransitionTime":"2027-01-15T08:00:31Z","type":"X"}]}})";
  EXPECT_EQ(events::status_write_hash(a), events::status_write_hash(b));
  b.patch_json = R"({"status":{"schedulingConditions":[{"lastTransitionTime":"2027-01-15T08:00:31Z","type":"Y"}]}})";
  EXPECT_NE(events::status_write_hash(a), events::status_write_hash(b));
}

/// A session built from `items` (no cycle run), with the objects it reads.
struct BuiltSession {
  model::ClusterObjects objects;
  model::ObjectRefs refs;
  std::unique_ptr<Session> ssn;
};

std::unique_ptr<BuiltSession> build_session(const Json& items) {
  auto b = std::make_unique<BuiltSession>();
  auto o = model::decode_snapshot(Json{{"apiVersion", "v1"}, {"kind", "List"}, {"items", items}}.dump());
  EXPECT_TRUE(o) << o.message();
  if (o) b->objects = std::move(o).value();
  b->refs = model::ObjectRefs::of(b->objects);
  SessionOptions options;
  options.now = kNow;
  b->ssn = std::make_unique<Session>(b->refs, options);
  return b;
}

/// A session's pass remembers the groups it found settled (actors/scheduler/core/status_memo.hpp). A
/// group with a pending pod is never one of them, even without a condition to write (one of its
/// pods runs): the actions may evict that pod, and the same pass must then give the group its
/// condition.
TEST(StatusObjects, AGroupWaitingBesideARunningPodGetsItsConditionOnceTheActionsEvictThatPod) {
  const Json in_sync = {{"resourcesStatus",
                         {{"requested", {{"cpu", "2"}, {"nvidia.com/gpu", "8"}}},
                          {"allocated", {{"cpu", "1"}, {"nvidia.com/gpu", "4"}}}}}};
  const auto b = build_session({node("n1", 4), queue("team", ""), pod_group("elastic", 1, "train", in_sync),
                                pod("elastic-0", "elastic", 4, "n1"), pod("elastic-1", "elastic", 4)});
  Session& ssn = *b->ssn;
  const model::ObjectRefs& refs = b->refs;
  const events::UnschedulableEvent why{
      5, "ns/elastic", "team", {{"Unschedulable", "0/1 nodes have 4 free GPUs"}}, {}};
  auto group_write = [&](const StatusOutput& out) {
    return std::find_if(out.writes.begin(), out.writes.end(),
                        [](const events::StatusWrite& w) { return w.mark_key() == "PodGroup ns/elastic"; });
  };
  const StatusOutput first = status_writes(ssn, refs, {why}, nullptr, 5);
  EXPECT_EQ(group_write(first), first.writes.end()) << "in sync, and a pod runs: no condition";
  for (uint32_t t = 0; t < ssn.tasks.size(); ++t) {
    if (ssn.tasks[t].key == "ns/elastic-0")
      ssn.set_task_state(t, PodStatus::kReleasing, ssn.tasks[t].node, {}, 0);
  }
  const StatusOutput second = status_writes(ssn, refs, {why}, nullptr, 6);
  const auto w = group_write(second);
  ASSERT_NE(w, second.writes.end()) << "the running pod was evicted: the group gets its condition";
  const Json patch = Json::parse(w->patch_json);
  EXPECT_EQ(patch["status"]["schedulingConditions"][0]["message"], "0/1 nodes have 4 free GPUs");
}

/// Nor is a group whose PodGroup shows a condition: while its pod is pipelined (in flight) the
/// condition stays, and when the next cycle's actions leave the pod pending again with another
/// reason, the condition follows.
TEST(StatusObjects, AGroupWithAConditionIsRevisitedAfterItsPodWasInFlight) {
  const Json status = {
      {"resourcesStatus", {{"requested", {{"cpu", "1"}, {"nvidia.com/gpu", "4"}}}}},
      {"schedulingConditions", Json::array({{{"type", "UnschedulableOnNodePool"},
                                             {"nodePool", "default"},
                                             {"reason", "Unschedulable"},
                                             {"message", "an older reason"},
                                             {"status", "True"},
                                             {"transitionID", "1"},
                                             {"lastTransitionTime", "2027-01-15T08:00:00Z"}}})}};
  const auto b = build_session(
      {node("n1", 4), queue("team", ""), pod_group("one", 1, "train", status), pod("one-0", "one", 4)});
  Session& ssn = *b->ssn;
  const model::ObjectRefs& refs = b->refs;
  ASSERT_EQ(ssn.tasks.size(), 1U);
  ssn.set_task_state(0, PodStatus::kPipelined, 0, {}, 0);
  const StatusOutput first = status_writes(ssn, refs, {}, nullptr, 5);
  EXPECT_TRUE(first.writes.empty() || first.writes.front().mark_key() != "PodGroup ns/one")
      << "in flight: no write";
  ssn.set_task_state(0, PodStatus::kPending, kNoNode, {}, 0);
  const events::UnschedulableEvent why{6, "ns/one", "team", {{"Unschedulable", "a newer reason"}}, {}};
  const StatusOutput second = status_writes(ssn, refs, {why}, nullptr, 6);
  ASSERT_FALSE(second.writes.empty());
  EXPECT_EQ(second.writes.front().mark_key(), "PodGroup ns/one");
  EXPECT_EQ(Json::parse(second.writes.front().patch_json)["status"]["schedulingConditions"][0]["message"],
            "a newer reason");
}

/// A group whose watched lists name the same resources with other amounts (a status written before
/// its pods changed): its queue sums the computed amounts, as KAI's queue controller sums what the
/// pod-group controller writes.
TEST(StatusObjects, AQueueSumsTheComputedAmountsOfAGroupWhoseWatchedListsAreStale) {
  const Json stale = {{"resourcesStatus", {{"requested", {{"cpu", "1"}, {"nvidia.com/gpu", "2"}}}}}};
  const auto c = run({node("n1", 4), queue("team", ""), pod_group("big", 2, "train", stale),
                      pod("big-0", "big", 4), pod("big-1", "big", 4)});
  EXPECT_EQ(c->patch("PodGroup ns/big")["status"]["resourcesStatus"]["requested"],
            (Json{{"cpu", "2"}, {"nvidia.com/gpu", "8"}}));
  EXPECT_EQ(c->patch("Queue team")["status"]["requested"], (Json{{"cpu", "2"}, {"nvidia.com/gpu", "8"}}));
}

}  // namespace
}  // namespace kai::core
