// The one cycle function (actors/scheduler/core/cycle.hpp): assumed decisions settled by the watched
// state or laid over it, job state from the records against what the PodGroup shows, reservation
// clean-up, deadlines, and the same input giving the same records.
#include "actors/scheduler/core/cycle.hpp"

#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>

#include "actors/scheduler/core/bind_backoff.hpp"
#include "actors/scheduler/core/export_job_state.hpp"
#include "actors/scheduler/core/grouping.hpp"
#include "actors/scheduler/core/session_keeper.hpp"
#include "events/event_codec.hpp"
#include "events/projection.hpp"
#include "k8s/model/codec.hpp"
#include "k8s/model/time.hpp"

namespace kai::core {
namespace {

using Json = nlohmann::json;
constexpr int64_t kNow = 1'800'000'000;

Json node(const std::string& name, int gpus) {
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata", {{"name", name}}},
          {"status",
           {{"allocatable", {{"cpu", "32"}, {"memory", "256Gi"}, {"pods", "110"}, {"nvidia.com/gpu", std::to_string(gpus)}}},
            {"conditions", Json::array({{{"type", "Ready"}, {"status", "True"}}})}}}};
}

Json queue(const std::string& name, const std::string& parent, double quota, Json extra = Json::object()) {
  Json spec = {{"resources",
                {{"gpu", {{"quota", quota}, {"limit", -1}, {"overQuotaWeight", 1}}},
                 {"cpu", {{"quota", -1}, {"limit", -1}, {"overQuotaWeight", 1}}},
                 {"memory", {{"quota", -1}, {"limit", -1}, {"overQuotaWeight", 1}}}}}};
  if (!parent.empty()) spec["parentQueue"] = parent;
  spec.update(extra);
  return {{"apiVersion", "scheduling.run.ai/v2"}, {"kind", "Queue"}, {"metadata", {{"name", name}}}, {"spec", spec}};
}

Json pod(const std::string& name, const std::string& uid, int gpus, const std::string& node_name = "",
         Json annotations = Json::object(), Json labels = Json::object()) {
  labels["kai.scheduler/queue"] = "q";
  Json p = {{"apiVersion", "v1"},
            {"kind", "Pod"},
            {"metadata",
             {{"name", name}, {"namespace", "ns"}, {"uid", uid}, {"labels", labels}, {"annotations", annotations},
              {"creationTimestamp", "2027-01-15T08:00:00Z"}}},
            {"spec",
             {{"schedulerName", "kai-scheduler"},
              {"containers",
               Json::array({{{"name", "main"},
                             {"resources", {{"limits", {{"nvidia.com/gpu", std::to_string(gpus)}}}}}}})}}},
            {"status", {{"phase", node_name.empty() ? "Pending" : "Running"}}}};
  if (!node_name.empty()) p["spec"]["nodeName"] = node_name;
  return p;
}

Json pod_group(const std::string& name, const std::string& uid, int min_member, Json annotations = Json::object()) {
  return {{"apiVersion", "scheduling.run.ai/v2alpha2"},
          {"kind", "PodGroup"},
          {"metadata", {{"name", name}, {"namespace", "ns"}, {"uid", uid}, {"annotations", annotations}}},
          {"spec", {{"minMember", min_member}, {"queue", "q"}}}};
}

model::ClusterObjects objects_of(const Json& items) {
  auto o = model::decode_snapshot(Json{{"apiVersion", "v1"}, {"kind", "List"}, {"items", items}}.dump());
  EXPECT_TRUE(o) << o.message();
  return o ? std::move(o).value() : model::ClusterObjects{};
}

CycleResult cycle(const model::ClusterObjects& objects, const events::ScheduleRecords* records,
                  int64_t now = kNow, uint64_t cycle_id = 7) {
  CycleInput in;
  in.objects = model::ObjectRefs::of(objects);
  in.records = records;
  in.options.now = now;
  in.options.seed = 3;
  in.cycle_id = cycle_id;
  return run_cycle(in);
}

events::Decision bind(const std::string& pod, const std::string& uid, const std::string& node) {
  events::Decision d;
  d.action = "allocate";
  d.kind = events::DecisionKind::kBind;
  d.pod = "ns/" + pod;
  d.pod_uid = uid;
  d.node = node;
  return d;
}

bool decided_for(const CycleResult& r, const std::string& pod) {
  for (const auto& d : r.decisions) {
    if (d.pod == "ns/" + pod) return true;
  }
  return false;
}

Json reservation_pod(const std::string& name, const std::string& group) {
  Json p = pod(name, "uid-" + name, 1, "n1", Json::object(), {{"runai-gpu-group", group}});
  p["metadata"]["namespace"] = "kai-resource-reservation";
  p["spec"]["schedulerName"] = "default-scheduler";
  return p;
}

TEST(Cycle, AnAssumedBindHoldsItsPlaceUntilTheWatchShowsItAndIsThenSettled) {
  // One 1-GPU node; p1 was decided onto it in an earlier cycle, the watch does not show it yet.
  const auto objects = objects_of(Json::array({node("n1", 1), queue("q", "", -1), pod("p1", "u1", 1),
                                               pod("p2", "u2", 1), pod("gone", "u3", 1)}));
  // Without the records the cycle would bind p1 (or p2) again: the test is not empty.
  const CycleResult blind = cycle(objects, nullptr);
  ASSERT_EQ(blind.decisions.size(), 1u);

  events::ScheduleRecords records;
  records.assumed[10] = {bind("p1", "u1", "n1"), false};
  records.assumed[11] = {bind("gone", "old-uid", "n1"), true};  // that pod was replaced: settled
  const CycleResult r = cycle(objects, &records);
  EXPECT_EQ(r.settled, std::vector<uint64_t>{11});
  EXPECT_TRUE(r.decisions.empty()) << "the node is full with the assumed p1; nothing else fits";
  EXPECT_FALSE(decided_for(r, "p1"));

  // The watch now shows p1 bound: the assumption is settled and p1 is simply running.
  const auto confirmed = objects_of(Json::array({node("n1", 1), queue("q", "", -1), pod("p1", "u1", 1, "n1"),
                                                 pod("p2", "u2", 1)}));
  const CycleResult after = cycle(confirmed, &records);
  EXPECT_EQ(after.settled, (std::vector<uint64_t>{10, 11}));
  EXPECT_TRUE(after.decisions.empty());
}

TEST(Cycle, AFailedBindIsNoLongerAssumedAndThePodIsDecidedAgainAfterItsBackoff) {
  const auto objects = objects_of(Json::array({node("n1", 1), queue("q", "", -1), pod("p1", "u1", 1)}));
  events::ScheduleRecords records;
  events::Event d{20, 0, events::kSchemaVersion, events::DecisionEvent{1, bind("p1", "u1", "n1"), 0}};
  ASSERT_TRUE(events::apply_record(records, d));
  EXPECT_TRUE(cycle(objects, &records).decisions.empty());
  events::Event failed{21, 0, events::kSchemaVersion,
                       events::BinderOutcome{20, "ns/p1", events::Outcome::kBindFailed, "409"}};
  ASSERT_TRUE(events::apply_record(records, failed));
  EXPECT_TRUE(records.assumed.empty());
  EXPECT_TRUE(cycle(objects, &records).decisions.empty()) << "backing off for 1 s from this cycle";
  events::CycleStart logged;  // that cycle's, which times the failure
  logged.now = kNow;
  logged.now_ms = kNow * 1000;
  ASSERT_TRUE(events::apply_record(records, events::Event{22, 0, events::kSchemaVersion, logged}));
  const CycleResult r = cycle(objects, &records, kNow + 1);
  ASSERT_EQ(r.decisions.size(), 1u);
  EXPECT_EQ(r.decisions[0].pod, "ns/p1");
}

TEST(Cycle, ABoundOutcomeKeepsTheAssumptionUntilTheWatchConfirmsIt) {
  // The binder reported `bound` but the watch has not shown it: the pod must not look pending, or
  // another pod could be given its GPU.
  const auto objects = objects_of(Json::array({node("n1", 1), queue("q", "", -1), pod("p1", "u1", 1),
                                               pod("p2", "u2", 1)}));
  events::ScheduleRecords records;
  ASSERT_TRUE(events::apply_record(
      records, events::Event{20, 0, events::kSchemaVersion, events::DecisionEvent{1, bind("p1", "u1", "n1"), 0}}));
  ASSERT_TRUE(events::apply_record(
      records, events::Event{21, 0, events::kSchemaVersion,
                             events::BinderOutcome{20, "ns/p1", events::Outcome::kBound, "bound"}}));
  EXPECT_TRUE(records.open_decisions().empty()) << "reported: a restart does not abandon it";
  EXPECT_TRUE(cycle(objects, &records).decisions.empty());
}

TEST(Cycle, AllocationRecordsTheLastStartAndTheRecordsNotTheAnnotationAreRead) {
  const auto objects = objects_of(Json::array({node("n1", 2), queue("q", "", -1), pod_group("pg", "pg-uid", 1),
                                               pod("p1", "u1", 1, "", {{"pod-group-name", "pg"}})}));
  const CycleResult r = cycle(objects, nullptr);
  ASSERT_EQ(r.decisions.size(), 1u);
  ASSERT_EQ(r.job_state_changes.size(), 1u);
  const auto& c = r.job_state_changes[0];
  EXPECT_EQ(c.group_uid, "pg-uid");
  EXPECT_EQ(c.group, "ns/pg");
  EXPECT_EQ(c.field, events::JobField::kLastStart);
  EXPECT_EQ(c.value, kNow);
  EXPECT_EQ(c.seen, std::nullopt);
  EXPECT_EQ(c.source, events::JobStateSource::kDecided);

  // Folded into the records; the PodGroup still shows nothing (the patch is not back yet): that is
  // expected, not someone else's change.
  events::ScheduleRecords records;
  ASSERT_TRUE(events::apply_record(records, events::Event{5, 0, events::kSchemaVersion, c}));
  const CycleResult again = cycle(objects, &records, kNow + 1);
  for (const auto& j : again.job_state_changes) EXPECT_NE(j.source, events::JobStateSource::kWatched);
}

TEST(Cycle, AValueSomeoneElseWroteOnThePodGroupIsAdoptedAndLogged) {
  events::ScheduleRecords records;
  events::JobStateChange mine{1, "pg-uid", "ns/pg", events::JobField::kLastStart, kNow - 100, std::nullopt,
                              events::JobStateSource::kDecided};
  ASSERT_TRUE(events::apply_record(records, events::Event{5, 0, events::kSchemaVersion, mine}));
  const std::string other = model::format_rfc3339(kNow - 5);
  const auto objects =
      objects_of(Json::array({node("n1", 2), queue("q", "", -1),
                              pod_group("pg", "pg-uid", 1, {{"kai.scheduler/last-start-timestamp", other}}),
                              pod("p1", "u1", 1, "n1", {{"pod-group-name", "pg"}})}));
  const CycleResult r = cycle(objects, &records);
  ASSERT_EQ(r.job_state_changes.size(), 1u);
  EXPECT_EQ(r.job_state_changes[0].source, events::JobStateSource::kWatched);
  EXPECT_EQ(r.job_state_changes[0].value, kNow - 5);
  EXPECT_EQ(r.job_times->at("pg-uid").last_start, kNow - 5) << "the session reads the adopted value";

  // Our own earlier value coming back on the watch (a late echo) is not someone else's.
  ASSERT_TRUE(events::apply_record(records, events::Event{6, 0, events::kSchemaVersion,
                                                          events::JobStateChange{2, "pg-uid", "ns/pg",
                                                                                 events::JobField::kLastStart,
                                                                                 kNow - 50, kNow - 100,
                                                                                 events::JobStateSource::kDecided}}));
  const auto echo = objects_of(Json::array(
      {node("n1", 2), queue("q", "", -1),
       pod_group("pg", "pg-uid", 1, {{"kai.scheduler/last-start-timestamp", model::format_rfc3339(kNow - 100)}}),
       pod("p1", "u1", 1, "n1", {{"pod-group-name", "pg"}})}));
  const CycleResult e = cycle(echo, &records);
  EXPECT_TRUE(e.job_state_changes.empty());
  EXPECT_EQ(e.job_times->at("pg-uid").last_start, kNow - 50);
}

TEST(Cycle, AKeptSessionForgetsTheJobStateOfABarePodsGroupOnlyOnceThePodIsGone) {
  // Bare pods' groups have no PodGroup: the session answers whether their uids (the pods') are live,
  // from an index it keeps while it is kept; a relayout that drops a group must drop its uid too.
  events::ScheduleRecords records;
  for (const char* uid : {"u1", "u2"}) {
    records.job_states[uid].group = std::string("ns/") + uid;
    records.job_states[uid].fields[0].value = kNow - 10;
  }
  model::ClusterObjects both = objects_of(Json::array({node("n1", 2), queue("q", "", -1), pod("p1", "u1", 1, "n1"),
                                                       pod("p2", "u2", 1, "n1")}));
  model::ClusterObjects one = objects_of(Json::array({node("n1", 2), queue("q", "", -1), pod("p1", "u1", 1, "n1")}));
  SessionKeeper keeper;
  auto run = [&](const model::ClusterObjects& objects, uint64_t cycle_id) {
    CycleInput in;
    in.objects = model::ObjectRefs::of(objects);
    in.records = &records;
    in.options.now = kNow + static_cast<int64_t>(cycle_id);
    in.options.seed = 3;
    in.cycle_id = cycle_id;
    in.keeper = &keeper;
    CycleResult r = run_cycle(in);
    std::vector<std::string> forgotten;
    for (const auto& c : r.job_state_changes) {
      if (c.source == events::JobStateSource::kForget) forgotten.push_back(c.group_uid);
    }
    keeper.keep(std::move(r.session), std::move(r.refs), r.patched, nullptr);
    return forgotten;
  };
  EXPECT_TRUE(run(both, 1).empty()) << "built: both groups live";
  EXPECT_TRUE(run(both, 2).empty()) << "kept: both groups live";
  EXPECT_EQ(keeper.kept(), 1U);
  EXPECT_EQ(run(one, 3), std::vector<std::string>{"u2"}) << "laid out anew without p2: " << keeper.last_rebuild_reason();
  EXPECT_EQ(keeper.kept(), 2U) << "the session was kept, not built: " << keeper.last_rebuild_reason();
  EXPECT_EQ(keeper.regrouped(), 1U);
}

TEST(Cycle, TheJobStateOfAGroupThatIsGoneIsForgotten) {
  events::ScheduleRecords records;
  records.job_states["old-uid"].group = "ns/old";
  records.job_states["old-uid"].fields[0].value = kNow - 10;
  const auto objects = objects_of(Json::array({node("n1", 1), queue("q", "", -1)}));
  const CycleResult r = cycle(objects, &records);
  ASSERT_EQ(r.job_state_changes.size(), 1u);
  EXPECT_EQ(r.job_state_changes[0].source, events::JobStateSource::kForget);
  events::ScheduleRecords after = records;
  ASSERT_TRUE(events::apply_record(after, events::Event{9, 0, events::kSchemaVersion, r.job_state_changes[0]}));
  EXPECT_TRUE(after.job_states.empty());
}

TEST(Cycle, AStandbyWithoutRecordsTakesTheLastStartFromWhenThePodsWereScheduled) {
  Json running = pod("p1", "u1", 1, "n1", {{"pod-group-name", "pg"}});
  running["status"]["conditions"] = Json::array(
      {{{"type", "PodScheduled"}, {"status", "True"}, {"lastTransitionTime", model::format_rfc3339(kNow - 20)}}});
  const auto objects =
      objects_of(Json::array({node("n1", 2), queue("q", "", -1), pod_group("pg", "pg-uid", 1), running}));
  const CycleResult r = cycle(objects, nullptr);
  const JobInfo* job = nullptr;
  for (const auto& j : r.session->jobs) {
    if (j.uid == "pg-uid") job = &j;
  }
  ASSERT_NE(job, nullptr);
  EXPECT_EQ(job->last_start, kNow - 20);
}

TEST(Cycle, AReservationPodWhoseGroupNoPodUsesIsDeletedAndOneInUseIsKept) {
  auto reservation = [](const std::string& name, const std::string& group) { return reservation_pod(name, group); };
  const auto objects = objects_of(Json::array(
      {node("n1", 4), queue("q", "", -1), reservation("r-used", "g-used"), reservation("r-orphan", "g-orphan"),
       reservation("r-assumed", "g-assumed"),
       pod("frac", "u-frac", 0, "n1", {{"gpu-fraction", "0.5"}}, {{"runai-gpu-group", "g-used"}}),
       pod("new-frac", "u-new", 0, "", {{"gpu-fraction", "0.5"}})}));
  events::ScheduleRecords records;
  events::Decision assumed = bind("new-frac", "u-new", "n1");
  assumed.gpu_groups = {"g-assumed"};
  assumed.gpu_fraction = 0.5;
  records.assumed[4] = {assumed, false};
  const CycleResult r = cycle(objects, &records);
  ASSERT_EQ(r.cleanups.size(), 1u);
  EXPECT_EQ(r.cleanups[0].pod, "kai-resource-reservation/r-orphan");
  EXPECT_EQ(r.cleanups[0].kind, events::DecisionKind::kEvict);
  EXPECT_EQ(r.cleanups[0].action, kCleanupAction);
  EXPECT_NE(r.cleanups[0].reason.find("no pod uses the group"), std::string::npos) << r.cleanups[0].reason;
  EXPECT_EQ(r.cleanups[0].seq, r.decisions.size() + 1);
}

TEST(Cycle, AReservationPodsGroupCountsAsUsedOnlyByPodsOnItsNode) {
  // "g" is used on n2, not on n1 where the reservation pod is: the reservation is an orphan. Its twin
  // for "g2" on n1 is the second one of its group, the first having reported its device.
  Json second = reservation_pod("r-second", "g2");
  Json first = reservation_pod("r-first", "g2");
  first["metadata"]["annotations"]["run.ai/reserve_for_gpu_index"] = "0";
  const auto objects = objects_of(Json::array(
      {node("n1", 4), node("n2", 4), queue("q", "", -1), reservation_pod("r-elsewhere", "g"), first, second,
       pod("frac", "u-frac", 0, "n2", {{"gpu-fraction", "0.5"}}, {{"runai-gpu-group", "g"}}),
       pod("frac2", "u-frac2", 0, "n1", {{"gpu-fraction", "0.5"}}, {{"runai-gpu-group", "g2"}})}));
  const CycleResult r = cycle(objects, nullptr);
  std::map<std::string, std::string> cleaned;
  for (const auto& d : r.cleanups) cleaned[d.pod] = d.reason;
  ASSERT_EQ(cleaned.size(), 2u);
  EXPECT_NE(cleaned["kai-resource-reservation/r-elsewhere"].find("no pod uses the group"), std::string::npos);
  EXPECT_NE(cleaned["kai-resource-reservation/r-second"].find("second reservation pod"), std::string::npos);
}

TEST(Cycle, AnOrphanedReservationPodHoldsItsDeviceUntilItIsCleanedUp) {
  // Two GPUs, one held by a reservation pod left by an abandoned bind: one whole-GPU pod fits now.
  const auto objects = objects_of(Json::array({node("n1", 2), queue("q", "", -1), reservation_pod("r-orphan", "g-orphan"),
                                               pod("a", "u-a", 1), pod("b", "u-b", 1)}));
  const CycleResult r = cycle(objects, nullptr);
  EXPECT_EQ(r.decisions.size(), 1u);
  ASSERT_EQ(r.cleanups.size(), 1u);
  EXPECT_EQ(r.cleanups[0].pod, "kai-resource-reservation/r-orphan");

  // Once it is deleting, its device is releasing: the second pod is pipelined onto it, not bound.
  events::ScheduleRecords records;
  records.assumed[8] = {r.decisions[0], true};
  records.assumed[9] = {r.cleanups[0], true};
  const CycleResult next = cycle(objects, &records);
  for (const auto& d : next.decisions) EXPECT_NE(d.kind, events::DecisionKind::kBind) << d.pod;
  EXPECT_TRUE(next.cleanups.empty());
}

TEST(Cycle, AFractionPodJoinsAnOrphanedReservationsGroupAndTheReservationIsKept) {
  const auto objects = objects_of(Json::array({node("n1", 1), queue("q", "", -1), reservation_pod("r-orphan", "g-orphan"),
                                               pod("frac", "u-frac", 0, "", {{"gpu-fraction", "0.5"}}),
                                               pod("whole", "u-whole", 1)}));
  const CycleResult r = cycle(objects, nullptr);
  ASSERT_EQ(r.decisions.size(), 1u);
  EXPECT_EQ(r.decisions[0].pod, "ns/frac");
  EXPECT_EQ(r.decisions[0].gpu_groups, std::vector<std::string>{"g-orphan"});
  EXPECT_TRUE(r.cleanups.empty()) << "the adopted reservation pod stays";
  EXPECT_FALSE(decided_for(r, "whole")) << "the one device is the reservation's";
}

TEST(Cycle, TheNextDeadlineIsWhenAStaleGangsGraceEnds) {
  // minMember 2 with one pod left running: stale since now, evicted after the 60 s grace.
  const auto objects = objects_of(Json::array({node("n1", 2), queue("q", "", -1), pod_group("pg", "pg-uid", 2),
                                               pod("p1", "u1", 1, "n1", {{"pod-group-name", "pg"}})}));
  const CycleResult r = cycle(objects, nullptr);
  ASSERT_TRUE(r.next_deadline.has_value());
  EXPECT_EQ(*r.next_deadline, kNow + 60);
  bool stale_recorded = false;
  for (const auto& j : r.job_state_changes)
    stale_recorded |= j.field == events::JobField::kStaleSince && j.value == kNow;
  EXPECT_TRUE(stale_recorded);
}

TEST(Cycle, APendingGroupsPreemptionDelayEndIsADeadline) {
  // Created 10 s ago with a 45 s preemptionDelay and nowhere to go: the scheduler wakes when it may
  // first trigger evictions.
  Json pg = pod_group("pg", "pg-uid", 1);
  pg["metadata"]["creationTimestamp"] = model::format_rfc3339(kNow - 10);
  pg["spec"]["preemptionDelay"] = "45s";
  const auto objects = objects_of(Json::array(
      {node("n1", 2), queue("q", "", -1), pg, pod("p1", "u1", 4, "", {{"pod-group-name", "pg"}})}));
  const CycleResult r = cycle(objects, nullptr);
  ASSERT_TRUE(r.next_deadline.has_value());
  EXPECT_EQ(*r.next_deadline, kNow + 35);
}

TEST(Cycle, AnEvictionRecordsTheVictimGroupsLastEvictionAndItsDelayRunsFromIt) {
  // A build-preemptible group preempts a train group. The victim's group records its last eviction
  // (KAI's kai.scheduler/last-eviction-timestamp); folded, the next cycle reads it from the records.
  Json low = pod_group("low", "low-uid", 1);
  low["spec"]["priorityClassName"] = "train";
  low["spec"]["preemptionDelay"] = "2m";
  Json hi = pod_group("hi", "hi-uid", 1);
  hi["spec"]["priorityClassName"] = "build-preemptible";
  const auto objects = objects_of(Json::array({node("n1", 1), queue("q", "", -1), low, hi,
                                               pod("l1", "ul1", 1, "n1", {{"pod-group-name", "low"}}),
                                               pod("h1", "uh1", 1, "", {{"pod-group-name", "hi"}})}));
  const CycleResult r = cycle(objects, nullptr);
  ASSERT_TRUE(decided_for(r, "l1"));
  const events::JobStateChange* eviction = nullptr;
  for (const auto& j : r.job_state_changes) {
    if (j.field == events::JobField::kLastEviction) eviction = &j;
  }
  ASSERT_NE(eviction, nullptr);
  EXPECT_EQ(eviction->group_uid, "low-uid");
  EXPECT_EQ(eviction->value, kNow);
  EXPECT_EQ(eviction->source, events::JobStateSource::kDecided);

  events::ScheduleRecords records;
  ASSERT_TRUE(events::apply_record(records, events::Event{5, 0, events::kSchemaVersion, *eviction}));
  // The victim's pod is recreated pending: its group's two-minute delay now runs from its eviction
  // rather than from its creation (long past), and its end is the next deadline.
  const auto after = objects_of(Json::array({node("n1", 1), queue("q", "", -1), low, hi,
                                             pod("l1", "ul2", 1, "", {{"pod-group-name", "low"}}),
                                             pod("h1", "uh1", 1, "n1", {{"pod-group-name", "hi"}})}));
  const CycleResult again = cycle(after, &records, kNow + 30);
  EXPECT_EQ(again.job_times->at("low-uid").last_eviction, kNow);
  EXPECT_TRUE(again.decisions.empty());
  ASSERT_TRUE(again.next_deadline.has_value());
  EXPECT_EQ(*again.next_deadline, kNow + 120);
}

TEST(Cycle, APodGroupThatSaysMarkUnschedulableFalseHasItsPendingPodsReportedWithoutTheCondition) {
  Json unmarked = pod_group("quiet", "quiet-uid", 1);
  unmarked["spec"]["markUnschedulable"] = false;
  const auto objects =
      objects_of(Json::array({node("n1", 2), queue("q", "", -1), unmarked, pod_group("loud", "loud-uid", 1),
                              pod("q1", "uq1", 4, "", {{"pod-group-name", "quiet"}}),
                              pod("l1", "ul1", 4, "", {{"pod-group-name", "loud"}})}));
  const CycleResult r = cycle(objects, nullptr);
  ASSERT_EQ(r.pending.size(), 2u);
  for (const auto& p : r.pending) {
    EXPECT_EQ(p.mark_condition, p.pod == "ns/l1") << p.pod;
    EXPECT_FALSE(p.message.empty()) << p.pod << ": the event still says why";
  }
}

// The PodGroup a pod names has not arrived: the pod is reported (event, kai-log why) but its
// condition is left alone, since the PodGroup may turn out to say markUnschedulable: false.
TEST(Cycle, APodWaitingForItsPodGroupIsReportedWithoutTheCondition) {
  const auto objects = objects_of(Json::array({node("n1", 2), queue("q", "", -1),
                                               pod("w1", "uw1", 1, "", {{"pod-group-name", "later"}}),
                                               pod("b1", "ub1", 4, "")}));
  const CycleResult r = cycle(objects, nullptr);
  ASSERT_EQ(r.pending.size(), 2u);
  for (const auto& p : r.pending) {
    EXPECT_EQ(p.mark_condition, p.pod == "ns/b1") << p.pod;
    if (p.pod == "ns/w1") {
      EXPECT_NE(p.message.find("does not exist"), std::string::npos) << p.message;
    }
  }
}

// A pod scheduled before its PodGroup exists has its group's last start kept under the grouper's
// uid; once the PodGroup the grouper wrote arrives, the state moves to the PodGroup's uid, as a
// decision (so it is written on the PodGroup, where KAI keeps it), and the old entry is forgotten.
TEST(Cycle, AGroupsJobStateMovesToItsPodGroupOnceThatArrives) {
  events::ScheduleRecords records;
  uint64_t seq = 0;
  auto log = [&](const CycleResult& r, uint64_t cycle_id) {
    for (auto& p : cycle_records(r, cycle_id, 0)) {
      ASSERT_TRUE(events::apply_record(records, events::Event{++seq, 0, events::kSchemaVersion, p}));
    }
  };
  const CycleResult first =
      cycle(objects_of(Json::array({node("n1", 2), queue("q", "", -1), pod("p", "up", 1)})), &records);
  ASSERT_EQ(first.decisions.size(), 1u);
  ASSERT_EQ(first.group_writes.size(), 1u);
  log(first, 7);
  ASSERT_EQ(records.job_states.size(), 1u);
  const std::string old_uid = records.job_states.begin()->first;
  const std::optional<int64_t> started = records.job_states.begin()->second.fields[0].value;
  ASSERT_TRUE(started.has_value());
  // The pod bound, and its PodGroup written by the grouper (name from the cycle's write).
  const std::string group = first.group_writes[0].group;
  const std::string name = group.substr(group.find('/') + 1);
  Json pg = pod_group(name, "pg-uid", 1);
  const auto second = cycle(objects_of(Json::array({node("n1", 2), queue("q", "", -1), pg,
                                                    pod("p", "up", 1, "n1", {{"pod-group-name", name}})})),
                            &records, kNow + 10, 8);
  std::vector<std::string> changes;
  for (const auto& c : second.job_state_changes) {
    changes.push_back(c.group_uid + " " +
                      std::string(c.source == events::JobStateSource::kForget ? "forget" : "set") + " " +
                      (c.value ? std::to_string(*c.value - kNow) : "-"));
  }
  EXPECT_EQ(changes, (std::vector<std::string>{"pg-uid set " + std::to_string(*started - kNow),
                                               old_uid + " forget -"}));
  EXPECT_EQ(second.job_times->count("pg-uid"), 0u) << "the move is the next cycle's input";
  log(second, 8);
  EXPECT_EQ(records.job_states.count(old_uid), 0u);
  ASSERT_EQ(records.job_states.count("pg-uid"), 1u);
  EXPECT_EQ(records.job_states.at("pg-uid").fields[0].value, started);
}

TEST(Cycle, AStaleGangsOwnGracePeriodIsItsDeadline) {
  // The PodGroup's stalenessGracePeriod (30 s) overrides the session's (60 s): the scheduler wakes then.
  Json pg = pod_group("pg", "pg-uid", 2);
  pg["spec"]["stalenessGracePeriod"] = "30s";
  const auto objects =
      objects_of(Json::array({node("n1", 2), queue("q", "", -1), pg, pod("p1", "u1", 1, "n1", {{"pod-group-name", "pg"}})}));
  const CycleResult r = cycle(objects, nullptr);
  ASSERT_TRUE(r.next_deadline.has_value());
  EXPECT_EQ(*r.next_deadline, kNow + 30);
}

TEST(Cycle, AJobStartedThisSecondIsADeadlineAtItsRecordedStart) {
  // The last start is recorded rounded up (kNow + 1 for a start at kNow.5): until that second a
  // victim filter with no min-runtime still protects the job, so the scheduler wakes then.
  const auto objects = objects_of(Json::array(
      {node("n1", 2), queue("q", "", -1),
       pod_group("pg", "pg-uid", 1, {{"kai.scheduler/last-start-timestamp", model::format_rfc3339(kNow + 1)}}),
       pod("p1", "u1", 1, "n1", {{"pod-group-name", "pg"}})}));
  CycleInput in;
  in.objects = model::ObjectRefs::of(objects);
  in.options.now = kNow;
  in.options.now_ms = kNow * 1000 + 500;
  in.cycle_id = 7;
  const CycleResult r = run_cycle(in);
  ASSERT_TRUE(r.next_deadline.has_value());
  EXPECT_EQ(*r.next_deadline, kNow + 1);
}

TEST(Cycle, TheMinRuntimePluginsDefaultIsADeadline) {
  // No queue sets a min-runtime; the plugin's defaultReclaimMinRuntime (90 s) protects a job started
  // 30 s ago until 60 s from now, when a reclaim may take it: the scheduler wakes then.
  const auto objects = objects_of(Json::array(
      {node("n1", 2), queue("q", "", -1),
       pod_group("pg", "pg-uid", 1, {{"kai.scheduler/last-start-timestamp", model::format_rfc3339(kNow - 30)}}),
       pod("p1", "u1", 1, "n1", {{"pod-group-name", "pg"}})}));
  CycleInput in;
  in.objects = model::ObjectRefs::of(objects);
  in.options.now = kNow;
  in.cycle_id = 7;
  bool configured = false;
  for (auto& plugin : in.options.config.plugins) {
    if (plugin.name != "minruntime") continue;
    plugin.arguments["defaultReclaimMinRuntime"] = "90s";
    configured = true;
  }
  ASSERT_TRUE(configured) << "the default configuration has the minruntime plugin";
  const CycleResult r = run_cycle(in);
  ASSERT_TRUE(r.next_deadline.has_value());
  EXPECT_EQ(*r.next_deadline, kNow + 60);
}

// A subgroup is named by a 16-bit index: a PodGroup with more leaf subgroups is refused with a reason
// instead of looping forever over them (found by clang-tidy's bugprone-too-small-loop-variable).
TEST(Cycle, APodGroupWithMoreSubgroupsThanSupportedIsRefusedWithAReason) {
  Json pg = pod_group("pg", "pg-uid", 1);
  Json sub_groups = Json::array();
  for (int i = 0; i < 65537; ++i) sub_groups.push_back({{"name", "s" + std::to_string(i)}, {"minMember", 1}});
  pg["spec"]["subGroups"] = std::move(sub_groups);
  const auto objects = objects_of(Json::array(
      {node("n1", 1), queue("q", "", -1), pg,
       pod("p1", "u1", 1, "", {{"pod-group-name", "pg"}}, {{"kai.scheduler/subgroup-name", "s65536"}})}));
  const CycleResult r = cycle(objects, nullptr);
  EXPECT_FALSE(decided_for(r, "p1"));
  bool refused = false;
  for (const auto& u : r.unschedulable) {
    for (const auto& reason : u.reasons) {
      if (reason.message.find("has 65537 subgroups; at most 65536 are supported") != std::string::npos) refused = true;
    }
  }
  EXPECT_TRUE(refused);
}

TEST(Cycle, APendingPodWhoseConditionAlreadyShowsItsReasonIsReportedShown) {
  const CycleResult first = cycle(objects_of(Json::array({node("n1", 1), queue("q", "", -1), pod("p1", "u1", 2)})), nullptr);
  ASSERT_EQ(first.pending.size(), 1u);
  EXPECT_FALSE(first.pending[0].shown);
  auto with_condition = [&](const std::string& reason, const std::string& message) {
    Json p = pod("p1", "u1", 2);
    p["status"]["conditions"] =
        Json::array({{{"type", "PodScheduled"}, {"status", "False"}, {"reason", reason}, {"message", message}}});
    return cycle(objects_of(Json::array({node("n1", 1), queue("q", "", -1), p})), nullptr);
  };
  const CycleResult same = with_condition("Unschedulable", first.pending[0].message);
  ASSERT_EQ(same.pending.size(), 1u);
  EXPECT_TRUE(same.pending[0].shown);
  const CycleResult other = with_condition("Unschedulable", "an older reason");
  ASSERT_EQ(other.pending.size(), 1u);
  EXPECT_FALSE(other.pending[0].shown);
}

TEST(Cycle, TheSameInputGivesTheSameRecords) {
  const auto objects = objects_of(Json::array({node("n1", 4), node("n2", 4), queue("q", "", -1),
                                               pod("a", "ua", 1), pod("b", "ub", 0, "", {{"gpu-fraction", "0.5"}}),
                                               pod("c", "uc", 0, "", {{"gpu-fraction", "0.3"}})}));
  auto encoded = [&] {
    std::string all;
    for (const auto& p : cycle_records(cycle(objects, nullptr), 7, 2))
      events::encode_event(events::Event{0, 0, events::kSchemaVersion, p}, all);
    return all;
  };
  const std::string first = encoded();
  EXPECT_FALSE(first.empty());
  EXPECT_EQ(first, encoded());
}

}  // namespace
}  // namespace kai::core

namespace kai::core {
namespace {

// The job state a log holds goes out on PodGroups: a group the scheduler synthesised becomes the
// PodGroup the pod grouper would create, and kai-sim reading that snapshot starts from the same
// job state the daemon's cycle read from its records.
TEST(ExportJobState, ASynthesisedGroupComesOutAsAPodGroupWithItsJobState) {
  model::ClusterObjects objects =
      objects_of(Json::array({node("n1", 2), queue("q", "", -1), pod("bare", "u-bare", 1, "n1")}));
  events::ScheduleRecords records;
  records.job_states["u-bare"].group = "ns/pg-bare-u-bare";
  records.job_states["u-bare"].fields[0].value = kNow - 30;
  const CycleResult from_records = cycle(objects, &records);

  export_job_state(objects, records, "kai-scheduler", "default-queue");
  ASSERT_EQ(objects.pod_groups.size(), 1u);
  const model::PodGroup& pg = objects.pod_groups[0];
  EXPECT_EQ(pg.meta.name, "pg-bare-u-bare");
  EXPECT_EQ(pg.meta.uid, "u-bare");
  EXPECT_EQ(pg.queue, "q");
  EXPECT_EQ(pg.meta.annotations.at(model::kLastStartAnnotation), model::format_rfc3339(kNow - 30));

  // Through the snapshot's JSON, as kai-sim reads it.
  auto reread = model::decode_snapshot(model::encode_snapshot_json(objects));
  ASSERT_TRUE(reread) << reread.message();
  const CycleResult from_snapshot = cycle(reread.value(), nullptr);
  auto last_start = [](const CycleResult& r) {
    for (const auto& j : r.session->jobs) {
      if (j.uid == "u-bare") return j.last_start;
    }
    return std::optional<int64_t>{};
  };
  EXPECT_EQ(last_start(from_snapshot), kNow - 30);
  EXPECT_EQ(last_start(from_snapshot), last_start(from_records));
  EXPECT_EQ(from_snapshot.decisions.size(), from_records.decisions.size());
}

}  // namespace
}  // namespace kai::core

namespace kai::core {
namespace {

/// Folds a bind decision of `pod` (logged at `seq`) and its outcome into `records`.
void bind_outcome(events::ScheduleRecords& records, uint64_t seq, const std::string& pod, const std::string& uid,
                  events::Outcome outcome, const std::string& reason = "403 Forbidden: RuntimeClass not found") {
  ASSERT_TRUE(events::apply_record(
      records, events::Event{seq, 0, events::kSchemaVersion, events::DecisionEvent{1, kai::core::bind(pod, uid, "n1"), 0}}));
  ASSERT_TRUE(events::apply_record(
      records, events::Event{seq + 1, 0, events::kSchemaVersion, events::BinderOutcome{seq, "ns/" + pod, outcome, reason}}));
}

/// Folds an eviction decision of `pod` (logged at `seq`) and its outcome into `records`.
void evict_outcome(events::ScheduleRecords& records, uint64_t seq, const std::string& pod, events::Outcome outcome,
                   const std::string& reason) {
  events::Decision evict = kai::core::bind(pod, "u1", "n1");
  evict.kind = events::DecisionKind::kEvict;
  ASSERT_TRUE(events::apply_record(records, events::Event{seq, 0, events::kSchemaVersion, events::DecisionEvent{1, evict, 0}}));
  ASSERT_TRUE(events::apply_record(
      records, events::Event{seq + 1, 0, events::kSchemaVersion, events::BinderOutcome{seq, "ns/" + pod, outcome, reason}}));
}

/// Folds a logged CycleStart at `now` (seconds).
void cycle_start(events::ScheduleRecords& records, int64_t now) {
  events::CycleStart c;
  c.now = now;
  c.now_ms = now * 1000;
  ASSERT_TRUE(events::apply_record(records, events::Event{0, 0, events::kSchemaVersion, c}));
}

const events::UnschedulableEvent* reasons_of(const CycleResult& r, const std::string& group) {
  for (const auto& u : r.unschedulable) {
    if (u.pod_group == group) return &u;
  }
  return nullptr;
}

TEST(BindBackoff, DoublesFromOneSecondUpToAMinute) {
  EXPECT_EQ(bind_backoff_ms(1), 1000);
  EXPECT_EQ(bind_backoff_ms(2), 2000);
  EXPECT_EQ(bind_backoff_ms(3), 4000);
  EXPECT_EQ(bind_backoff_ms(6), 32000);
  EXPECT_EQ(bind_backoff_ms(7), 60000);
  EXPECT_EQ(bind_backoff_ms(1000), 60000);
}

// The scenario of docs/one-truth.md "Bind backoff": p1's binds keep failing. Its group waits 1 s,
// then 2 s, each counted from the cycle that first saw the failure; meanwhile p2 (another group)
// gets the room, and the group's reason says how many binds failed, why, and until when.
TEST(BindBackoff, AGroupWaitsLongerAfterEachFailedBindAndOthersAreScheduledMeanwhile) {
  const auto objects = objects_of(Json::array({node("n1", 2), queue("q", "", -1), pod("p1", "u1", 1)}));
  events::ScheduleRecords records;
  bind_outcome(records, 20, "p1", "u1", events::Outcome::kBindFailed);
  ASSERT_EQ(records.bind_failures.count("ns/p1"), 1u);
  EXPECT_FALSE(records.bind_failures["ns/p1"].failed_at_ms) << "timed by the next CycleStart";
  EXPECT_TRUE(records.has_untimed_records());

  const auto with_p2 = objects_of(Json::array({node("n1", 2), queue("q", "", -1), pod("p1", "u1", 1),
                                               pod("p2", "u2", 1)}));
  const CycleResult held = cycle(with_p2, &records);
  EXPECT_FALSE(decided_for(held, "p1"));
  EXPECT_TRUE(decided_for(held, "p2")) << "a group in backoff does not block the others";
  ASSERT_TRUE(held.next_deadline.has_value());
  EXPECT_EQ(*held.next_deadline, kNow + 1);
  const auto* why = reasons_of(held, "ns/pg-p1-u1");
  ASSERT_NE(why, nullptr);
  ASSERT_EQ(why->reasons.size(), 1u);
  EXPECT_EQ(why->reasons[0].reason, kBindingErrorReason);
  const std::string& m = why->reasons[0].message;
  EXPECT_NE(m.find("is backing off after 1 failed bind (the last: 403 Forbidden: RuntimeClass not found)"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("retried at " + model::format_rfc3339(kNow + 1)), std::string::npos) << m;
  ASSERT_FALSE(held.pending.empty());
  EXPECT_EQ(held.pending[0].reason, kBindingErrorReason);

  // The cycle was logged: its CycleStart times the failure.
  cycle_start(records, kNow);
  EXPECT_EQ(records.bind_failures["ns/p1"].failed_at_ms, kNow * 1000);
  EXPECT_FALSE(decided_for(cycle(objects, &records, kNow), "p1"));
  EXPECT_TRUE(decided_for(cycle(objects, &records, kNow + 1), "p1"));

  // The second failure: 2 s.
  bind_outcome(records, 30, "p1", "u1", events::Outcome::kReservationTimedOut, "no GPU reported");
  cycle_start(records, kNow + 2);
  EXPECT_EQ(records.bind_failures["ns/p1"].failures, 2u);
  const CycleResult second = cycle(objects, &records, kNow + 3);
  EXPECT_FALSE(decided_for(second, "p1"));
  EXPECT_EQ(second.next_deadline, kNow + 4);
  EXPECT_NE(reasons_of(second, "ns/pg-p1-u1")->reasons[0].message.find("after 2 failed binds (the last: no GPU reported)"),
            std::string::npos);
  EXPECT_TRUE(decided_for(cycle(objects, &records, kNow + 4), "p1"));

  // A bind that succeeds clears the failures.
  bind_outcome(records, 40, "p1", "u1", events::Outcome::kBound, "bound to n1");
  EXPECT_TRUE(records.bind_failures.empty());
}

TEST(BindBackoff, CancelledAndAbandonedBindsDoNotCountAndAPodRecreatedStartsAfresh) {
  const auto objects = objects_of(Json::array({node("n1", 2), queue("q", "", -1), pod("p1", "u1", 1)}));
  events::ScheduleRecords records;
  bind_outcome(records, 20, "p1", "u1", events::Outcome::kCancelled, "the binder was busy");
  bind_outcome(records, 22, "p1", "u1", events::Outcome::kAbandoned, "restart");
  EXPECT_TRUE(records.bind_failures.empty());
  EXPECT_TRUE(decided_for(cycle(objects, &records), "p1"));

  // An eviction that fails is not a bind.
  evict_outcome(records, 24, "p1", events::Outcome::kBindFailed, "eviction failed");
  EXPECT_TRUE(records.bind_failures.empty());

  bind_outcome(records, 26, "p1", "u1", events::Outcome::kBindFailed);
  bind_outcome(records, 28, "p1", "u1", events::Outcome::kBindFailed);
  EXPECT_EQ(records.bind_failures["ns/p1"].failures, 2u);
  // p1 deleted and created again under the name: the new pod is not held, and its first failure
  // counts from 1.
  const auto recreated = objects_of(Json::array({node("n1", 2), queue("q", "", -1), pod("p1", "u1-new", 1)}));
  EXPECT_TRUE(decided_for(cycle(recreated, &records), "p1"));
  bind_outcome(records, 30, "p1", "u1-new", events::Outcome::kBindFailed);
  EXPECT_EQ(records.bind_failures["ns/p1"].failures, 1u);
  EXPECT_EQ(records.bind_failures["ns/p1"].pod_uid, "u1-new");
}

TEST(BindBackoff, AGangWaitsForItsPodThatFailed) {
  // A gang of two: p1's bind failed, p2's never ran. Neither is placed while p1 backs off.
  const auto objects = objects_of(Json::array({node("n1", 2), queue("q", "", -1), pod_group("pg", "pg-uid", 2),
                                               pod("p1", "u1", 1, "", {{"pod-group-name", "pg"}}),
                                               pod("p2", "u2", 1, "", {{"pod-group-name", "pg"}})}));
  events::ScheduleRecords records;
  bind_outcome(records, 20, "p1", "u1", events::Outcome::kBindFailed);
  cycle_start(records, kNow);
  const CycleResult held = cycle(objects, &records);
  EXPECT_TRUE(held.decisions.empty());
  ASSERT_NE(reasons_of(held, "ns/pg"), nullptr);
  EXPECT_EQ(reasons_of(held, "ns/pg")->pods.size(), 2u);
  EXPECT_EQ(cycle(objects, &records, kNow + 1).decisions.size(), 2u);
}

TEST(BindBackoff, TheFoldForgetsAPodsFailuresTenMinutesAfterTheLast) {
  events::ScheduleRecords records;
  bind_outcome(records, 20, "p1", "u1", events::Outcome::kBindFailed);
  cycle_start(records, kNow);
  cycle_start(records, kNow + 600);
  EXPECT_EQ(records.bind_failures.size(), 1u);
  cycle_start(records, kNow + 601);
  EXPECT_TRUE(records.bind_failures.empty());
  EXPECT_FALSE(records.has_untimed_records());
}

TEST(Cycle, AnUnconfirmedBindHoldsItsNodeForThirtySecondsFromTheFirstCycleAfterTheRestart) {
  // p1 was decided onto the one GPU; the scheduler restarted before the binder reported, so the bind
  // may still land (docs/event-ordering.md "Restart: unconfirmed binds").
  const auto objects = objects_of(Json::array({node("n1", 1), queue("q", "", -1), pod("p1", "u1", 1),
                                               pod("p2", "u2", 1)}));
  events::ScheduleRecords records;
  bind_outcome(records, 20, "p1", "u1", events::Outcome::kUnconfirmed, "restarted");
  EXPECT_TRUE(records.open_decisions().empty()) << "it has its outcome: a second restart logs nothing more";
  EXPECT_TRUE(records.has_untimed_records()) << "the next cycle is logged: its CycleStart times the hold";
  EXPECT_TRUE(records.bind_failures.empty()) << "an unconfirmed bind says nothing about the pod";

  // The first cycle after the restart: the hold is untimed, so it starts now; n1 is taken.
  const CycleResult first = cycle(objects, &records);
  EXPECT_TRUE(first.decisions.empty()) << "n1's GPU is held for p1's bind";
  EXPECT_TRUE(first.settled.empty());
  ASSERT_TRUE(first.next_deadline.has_value());
  EXPECT_EQ(*first.next_deadline, kNow + 30) << "the hold's end wakes an idle scheduler";
  cycle_start(records, kNow);
  EXPECT_FALSE(records.has_untimed_records());
  ASSERT_EQ(records.assumed.at(20).held_since_ms, kNow * 1000);

  // 29 s later it still holds; at 30 s the cycle settles it and decides the GPU afresh.
  EXPECT_TRUE(cycle(objects, &records, kNow + 29).decisions.empty());
  const CycleResult after = cycle(objects, &records, kNow + 30);
  EXPECT_EQ(after.settled, std::vector<uint64_t>{20});
  ASSERT_EQ(after.decisions.size(), 1u);

  // The watch showing p1 bound (on another node, by someone else) ends the hold at once, too.
  const auto elsewhere = objects_of(Json::array({node("n1", 1), node("n2", 1), queue("q", "", -1),
                                                 pod("p1", "u1", 1, "n2"), pod("p2", "u2", 1)}));
  const CycleResult shown = cycle(elsewhere, &records, kNow + 1);
  EXPECT_EQ(shown.settled, std::vector<uint64_t>{20});
  ASSERT_EQ(shown.decisions.size(), 1u);
  EXPECT_EQ(shown.decisions[0].pod, "ns/p2");
  EXPECT_EQ(shown.decisions[0].node, "n1");
}

TEST(Cycle, AnUnconfirmedOutcomeOfAnEvictionEndsItsAssumption) {
  events::ScheduleRecords records;
  evict_outcome(records, 20, "p1", events::Outcome::kUnconfirmed, "restarted");
  EXPECT_TRUE(records.assumed.empty()) << "only a bind is held: a late eviction only frees what it held";
}

}  // namespace
}  // namespace kai::core
