// The pod grouper's writes (actors/scheduler/core/pod_group_objects.hpp) as the cycle asks for them:
// the PodGroup KAI builds for a Job, the pods to annotate, nothing asked twice within the retry
// period, a settled record once the watch shows it done, KAI's update rules (queue frozen, labels
// merged), the --pod-group-objects choices, and a bare pod naming the grouper's own group that never
// waits for the object.
#include "actors/scheduler/core/pod_group_objects.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <nlohmann/json.hpp>

#include "actors/scheduler/core/cycle.hpp"
#include "actors/scheduler/core/session_keeper.hpp"
#include "events/projection.hpp"
#include "k8s/model/codec.hpp"

namespace kai::core {
namespace {

using Json = nlohmann::json;
constexpr int64_t kNow = 1'800'000'000;
const std::string kJobUid = "ebddc5f7-aebe-527c-a145-a22afd1c8642";
const std::string kGroup = "pg-batch-" + kJobUid;

Json node(const std::string& name) {
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata", {{"name", name}}},
          {"status",
           {{"allocatable", {{"cpu", "32"}, {"memory", "256Gi"}, {"pods", "110"}, {"nvidia.com/gpu", "8"}}},
            {"conditions", Json::array({{{"type", "Ready"}, {"status", "True"}}})}}}};
}

Json queue() {
  Json r = {{"quota", -1}, {"limit", -1}, {"overQuotaWeight", 1}};
  return {{"apiVersion", "scheduling.run.ai/v2"},
          {"kind", "Queue"},
          {"metadata", {{"name", "q"}}},
          {"spec", {{"resources", {{"gpu", r}, {"cpu", r}, {"memory", r}}}}}};
}

Json job(int min_member) {
  return {{"apiVersion", "batch/v1"},
          {"kind", "Job"},
          {"metadata",
           {{"name", "batch"},
            {"namespace", "ns"},
            {"uid", kJobUid},
            {"labels", {{"team", "vision"}, {"kai.scheduler/queue", "q"}}},
            {"annotations", {{"kai.scheduler/batch-min-member", std::to_string(min_member)}}}}},
          {"spec", {{"parallelism", 2}}}};
}

Json pod(const std::string& name, bool owned, Json annotations = Json::object()) {
  Json meta = {{"name", name},
               {"namespace", "ns"},
               {"uid", "uid-" + name},
               {"labels", {{"kai.scheduler/queue", "q"}}},
               {"annotations", annotations},
               {"creationTimestamp", "2027-01-15T08:00:00Z"}};
  if (owned) {
    meta["ownerReferences"] = Json::array({{{"apiVersion", "batch/v1"},
                                            {"kind", "Job"},
                                            {"name", "batch"},
                                            {"uid", kJobUid},
                                            {"controller", true}}});
  }
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", meta},
          {"spec",
           {{"schedulerName", "kai-scheduler"},
            {"containers",
             Json::array({{{"name", "main"}, {"resources", {{"limits", {{"nvidia.com/gpu", "1"}}}}}}})}}},
          {"status", {{"phase", "Pending"}}}};
}

/// The PodGroup as the watch would show it after the writer created `desired`.
Json created(const events::PodGroupWrite& w) {
  Json pg = Json::parse(w.object_json);
  pg["metadata"]["uid"] = "pg-uid";
  pg["metadata"]["resourceVersion"] = "7";
  return pg;
}

model::ClusterObjects objects_of(const Json& items) {
  auto o = model::decode_snapshot(Json{{"apiVersion", "v1"}, {"kind", "List"}, {"items", items}}.dump());
  EXPECT_TRUE(o) << o.message();
  return o ? std::move(o).value() : model::ClusterObjects{};
}

CycleResult cycle(const model::ClusterObjects& objects, const events::ScheduleRecords* records,
                  int64_t now = kNow, PodGroupObjects which = PodGroupObjects::kAll) {
  CycleInput in;
  in.objects = model::ObjectRefs::of(objects);
  in.records = records;
  in.options.now = now;
  in.options.seed = 3;
  in.options.pod_group_objects = which;
  in.cycle_id = 9;
  return run_cycle(in);
}

/// Folds a cycle's records as the daemon logs them (CycleStart first).
void fold(events::ScheduleRecords& records, const CycleResult& r, int64_t now) {
  events::Event start;
  start.payload = events::CycleStart{9, 0, 0, now};
  events::apply_record(records, start);
  for (auto& p : cycle_records(r, 9, 0)) {
    events::Event e;
    e.payload = p;
    events::apply_record(records, e);
  }
}

TEST(PodGroupObjects, AJobsGroupIsWrittenAsKaisPodGroupWithItsPodsToAnnotate) {
  const auto objects = objects_of({node("n1"), queue(), job(2), pod("batch-0", true), pod("batch-1", true)});
  const CycleResult r = cycle(objects, nullptr);
  ASSERT_EQ(r.group_writes.size(), 1u);
  const events::PodGroupWrite& w = r.group_writes[0];
  EXPECT_EQ(w.group, "ns/" + kGroup);
  EXPECT_FALSE(w.exists);
  const Json pg = Json::parse(w.object_json);
  EXPECT_EQ(pg["apiVersion"], "scheduling.run.ai/v2alpha2");
  EXPECT_EQ(pg["kind"], "PodGroup");
  EXPECT_EQ(pg["metadata"]["name"], kGroup);
  EXPECT_EQ(pg["metadata"]["namespace"], "ns");
  EXPECT_EQ(pg["metadata"]["labels"]["team"], "vision");
  EXPECT_EQ(
      pg["metadata"]["ownerReferences"],
      Json::array({{{"apiVersion", "batch/v1"}, {"kind", "Job"}, {"name", "batch"}, {"uid", kJobUid}}}));
  EXPECT_EQ(pg["spec"]["minMember"], 2);
  EXPECT_EQ(pg["spec"]["queue"], "q");
  ASSERT_EQ(w.pods.size(), 2u);
  EXPECT_EQ(w.pods[0].pod, "ns/batch-0");
  EXPECT_EQ(w.pods[0].uid, "uid-batch-0");
  EXPECT_EQ(w.pods[1].pod, "ns/batch-1");
  // Logged after the binds of the same cycle.
  const auto records = cycle_records(r, 9, 0);
  ASSERT_FALSE(records.empty());
  EXPECT_TRUE(std::holds_alternative<events::PodGroupWrite>(records.back()));
  EXPECT_TRUE(std::holds_alternative<events::DecisionEvent>(records.front()));
}

TEST(PodGroupObjects, TheSameWriteIsNotAskedAgainBeforeTheRetryPeriodAndIsSettledOnceTheWatchShowsIt) {
  const auto objects = objects_of({node("n1"), queue(), job(2), pod("batch-0", true), pod("batch-1", true)});
  events::ScheduleRecords records;
  const CycleResult first = cycle(objects, &records);
  ASSERT_EQ(first.group_writes.size(), 1u);
  fold(records, first, kNow);
  ASSERT_EQ(records.group_writes.count("ns/" + kGroup), 1u);

  EXPECT_TRUE(cycle(objects, &records, kNow + 29).group_writes.empty()) << "asked for 29 s ago";
  const CycleResult late = cycle(objects, &records, kNow + 31);
  ASSERT_EQ(late.group_writes.size(), 1u) << "not seen done after the retry period: asked again";
  EXPECT_EQ(late.group_writes[0], (events::PodGroupWrite{9, "ns/" + kGroup, first.group_writes[0].object_json,
                                                         false, first.group_writes[0].pods, false}));

  // The watch shows the object and the annotated pods: one settled record, then nothing.
  const Json named = {{"pod-group-name", kGroup}};
  const auto done = objects_of({node("n1"), queue(), job(2), created(first.group_writes[0]),
                                pod("batch-0", true, named), pod("batch-1", true, named)});
  const CycleResult settled = cycle(done, &records, kNow + 1);
  ASSERT_EQ(settled.group_writes.size(), 1u);
  EXPECT_TRUE(settled.group_writes[0].settled);
  fold(records, settled, kNow + 1);
  EXPECT_TRUE(records.group_writes.empty());
  EXPECT_TRUE(cycle(done, &records, kNow + 2).group_writes.empty());
}

TEST(PodGroupObjects, AnObjectThatSaysTheSameIsLeftAndOnlyTheMissingAnnotationsAreAskedFor) {
  const auto objects = objects_of({node("n1"), queue(), job(2), pod("batch-0", true), pod("batch-1", true)});
  const CycleResult first = cycle(objects, nullptr);
  ASSERT_EQ(first.group_writes.size(), 1u);
  Json pg = created(first.group_writes[0]);
  pg["metadata"]["labels"]["added-by-someone"] = "x";  // extra keys are not a difference
  pg["metadata"]["annotations"]["kai.scheduler/last-start-timestamp"] = "2027-01-15T08:00:00Z";
  const auto seen = objects_of({node("n1"), queue(), job(2), pg,
                                pod("batch-0", true, {{"pod-group-name", kGroup}}), pod("batch-1", true)});
  const CycleResult r = cycle(seen, nullptr);
  ASSERT_EQ(r.group_writes.size(), 1u);
  EXPECT_TRUE(r.group_writes[0].object_json.empty());
  ASSERT_EQ(r.group_writes[0].pods.size(), 1u);
  EXPECT_EQ(r.group_writes[0].pods[0].pod, "ns/batch-1");
}

TEST(PodGroupObjects, TheQueueIsFrozenAfterCreationButAChangedGangSizeIsAnUpdate) {
  const auto objects = objects_of({node("n1"), queue(), job(2), pod("batch-0", true), pod("batch-1", true)});
  const CycleResult first = cycle(objects, nullptr);
  ASSERT_EQ(first.group_writes.size(), 1u);
  Json pg = created(first.group_writes[0]);
  pg["spec"]["queue"] = "moved-by-an-admin";
  const Json named = {{"pod-group-name", kGroup}};
  auto seen =
      objects_of({node("n1"), queue(), job(2), pg, pod("batch-0", true, named), pod("batch-1", true, named)});
  EXPECT_TRUE(cycle(seen, nullptr).group_writes.empty()) << "only the queue differs: KAI keeps it";

  seen =
      objects_of({node("n1"), queue(), job(1), pg, pod("batch-0", true, named), pod("batch-1", true, named)});
  const CycleResult r = cycle(seen, nullptr);
  ASSERT_EQ(r.group_writes.size(), 1u);
  EXPECT_TRUE(r.group_writes[0].exists);
  const Json update = Json::parse(r.group_writes[0].object_json);
  EXPECT_EQ(update["spec"]["minMember"], 1);
  EXPECT_EQ(update["spec"]["queue"], "moved-by-an-admin");
}

TEST(PodGroupObjects, TheFlagSkipsOnePodGroupsOrEveryGroup) {
  const auto objects = objects_of(
      {node("n1"), queue(), job(2), pod("batch-0", true), pod("batch-1", true), pod("solo", false)});
  const CycleResult all = cycle(objects, nullptr);
  ASSERT_EQ(all.group_writes.size(), 2u);
  EXPECT_EQ(all.group_writes[1].group, "ns/pg-solo-uid-solo");
  const CycleResult multi = cycle(objects, nullptr, kNow, PodGroupObjects::kMultiPod);
  ASSERT_EQ(multi.group_writes.size(), 1u);
  EXPECT_EQ(multi.group_writes[0].group, "ns/" + kGroup);
  EXPECT_TRUE(cycle(objects, nullptr, kNow, PodGroupObjects::kNone).group_writes.empty());
}

TEST(PodGroupObjects, ABarePodNamingTheGroupersOwnGroupIsScheduledWithoutTheObject) {
  const auto objects =
      objects_of({node("n1"), queue(), pod("solo", false, {{"pod-group-name", "pg-solo-uid-solo"}}),
                  pod("mine", false, {{"pod-group-name", "my-own-group"}})});
  const CycleResult r = cycle(objects, nullptr);
  ASSERT_EQ(r.decisions.size(), 1u);
  EXPECT_EQ(r.decisions[0].pod, "ns/solo");
  ASSERT_EQ(r.group_writes.size(), 1u) << "the user's own group is not the grouper's to write";
  EXPECT_EQ(r.group_writes[0].group, "ns/pg-solo-uid-solo");
  EXPECT_TRUE(r.group_writes[0].pods.empty()) << "its annotation already names the group";
}

TEST(PodGroupObjects, AMarkOfAGroupThatIsGoneIsSettled) {
  events::ScheduleRecords records;
  records.group_writes["ns/pg-gone-1"] = events::GroupWriteMark{42, kNow * 1000};
  const auto objects = objects_of({node("n1"), queue()});
  const CycleResult r = cycle(objects, &records);
  ASSERT_EQ(r.group_writes.size(), 1u);
  EXPECT_EQ(r.group_writes[0], (events::PodGroupWrite{9, "ns/pg-gone-1", "", false, {}, true}));
}

// A kept session's pass skips the groups it found needing nothing (pod_group_objects.hpp
// GroupsWritten) until their objects change; every cycle, kept or built, asks the same. A client's
// PodGroup "aaa" (nothing to write) ahead of the Job's group, whose pods are not yet annotated;
// "aaa" leaves (a relayout moves the marks: the Job's group, still asking, must not take "aaa"'s);
// the pods are annotated (in sync); the Job's PodGroup is edited in place (minMember 1) and asked back.
TEST(PodGroupObjects, AKeptSessionAsksAgainForAGroupWhoseObjectsChanged) {
  const CycleResult first =
      cycle(objects_of({node("n1"), queue(), job(2), pod("batch-0", true), pod("batch-1", true)}), nullptr);
  ASSERT_EQ(first.group_writes.size(), 1u);
  const Json named = {{"pod-group-name", kGroup}};
  Json edited = created(first.group_writes[0]);
  edited["spec"]["minMember"] = 1;
  edited["metadata"]["resourceVersion"] = "8";
  const Json aaa = {{"apiVersion", "scheduling.run.ai/v2alpha2"},
                    {"kind", "PodGroup"},
                    {"metadata", {{"name", "aaa"}, {"namespace", "ns"}, {"uid", "aaa-uid"}}},
                    {"spec", {{"minMember", 1}, {"queue", "q"}}}};
  const auto base =
      objects_of({node("n1"), queue(), job(2), aaa, pod("aaa-0", false, {{"pod-group-name", "aaa"}}),
                  created(first.group_writes[0]), pod("batch-0", true), pod("batch-1", true)});
  const auto later = objects_of({pod("batch-0", true, named), pod("batch-1", true, named), edited});
  ASSERT_EQ(base.pod_groups.size(), 2u);
  ASSERT_EQ(base.pod_groups[0].meta.name, "aaa");
  ASSERT_EQ(base.pods.size(), 3u);
  ASSERT_EQ(base.pods[0].meta.name, "aaa-0");
  model::ObjectRefs refs = model::ObjectRefs::of(base);
  SessionKeeper keeper;
  std::vector<std::vector<events::PodGroupWrite>> asked;
  for (uint64_t step = 1; step <= 4; ++step) {
    if (step == 2) {
      refs.pod_groups.erase(refs.pod_groups.begin());
      refs.pods.erase(refs.pods.begin());
    }
    if (step == 3) refs.pods = {&later.pods[0], &later.pods[1]};
    if (step == 4) refs.pod_groups[0] = &later.pod_groups[0];
    CycleInput in;
    in.objects = refs;
    in.options.now = kNow + static_cast<int64_t>(step);
    in.options.seed = 3;
    in.cycle_id = step;
    in.keeper = &keeper;
    CycleResult kept = run_cycle(in);
    in.keeper = nullptr;
    const CycleResult built = run_cycle(in);
    EXPECT_EQ(kept.group_writes, built.group_writes) << "step " << step;
    asked.push_back(kept.group_writes);
    keeper.keep(std::move(kept.session), std::move(kept.refs), kept.patched, nullptr);
  }
  EXPECT_EQ(keeper.kept(), 3U);
  auto pods_asked = [](const std::vector<events::PodGroupWrite>& writes) {
    return writes.size() == 1 ? writes[0].pods.size() : 0;
  };
  EXPECT_EQ(pods_asked(asked[0]), 2u) << "the Job's pods to annotate";
  EXPECT_EQ(pods_asked(asked[1]), 2u) << "still asked after \"aaa\" left";
  EXPECT_TRUE(asked[2].empty()) << "in sync";
  ASSERT_EQ(asked[3].size(), 1u);
  EXPECT_EQ(asked[3][0].group, "ns/" + kGroup);
  EXPECT_NE(asked[3][0].object_json.find("\"minMember\":2"), std::string::npos) << asked[3][0].object_json;
}

TEST(PodGroupObjects, TheInSyncCheckAgreesWithTheUpdateRules) {
  // A JobSet's group (labels, annotations, subgroups, topology), compared against objects that differ
  // from what would be written in one way each: already_written must say what building the desired
  // object, applying KAI's update rules and comparing says.
  Json js = {{"apiVersion", "jobset.x-k8s.io/v1alpha2"},
             {"kind", "JobSet"},
             {"metadata",
              {{"name", "js"},
               {"namespace", "ns"},
               {"uid", "uid-js"},
               {"labels", {{"team", "a"}, {"kai.scheduler/queue", "q"}}},
               {"annotations", {{"kai.scheduler/topology", "dc"}, {"kai.scheduler/topology-required-placement", "rack"}}}}},
             {"spec",
              {{"replicatedJobs",
                Json::array({{{"name", "w"}, {"replicas", 2}, {"template", {{"spec", {{"parallelism", 1}}}}}}})}}}};
  Json p = pod("js-w-0", false);
  p["metadata"]["labels"]["jobset.sigs.k8s.io/replicatedjob-name"] = "w";
  p["metadata"]["labels"]["jobset.sigs.k8s.io/job-index"] = "0";
  p["metadata"]["ownerReferences"] = Json::array(
      {{{"apiVersion", "jobset.x-k8s.io/v1alpha2"}, {"kind", "JobSet"}, {"name", "js"}, {"uid", "uid-js"}}});
  const auto objects = objects_of({node("n1"), queue(), js, p});
  const auto groups = group_pods(model::ObjectRefs::of(objects), "kai-scheduler", "default-queue");
  ASSERT_EQ(groups.size(), 1u);
  ASSERT_TRUE(groups[0].spec);
  const model::PodGroup written = desired_pod_group(groups[0]);
  std::vector<std::pair<std::string, std::function<void(model::PodGroup&)>>> changes = {
      {"as written", [](model::PodGroup&) {}},
      {"an extra label", [](model::PodGroup& pg) { pg.meta.labels["x"] = "y"; }},
      {"a label missing", [](model::PodGroup& pg) { pg.meta.labels.erase("team"); }},
      {"a label changed", [](model::PodGroup& pg) { pg.meta.labels["team"] = "b"; }},
      {"the queue label changed", [](model::PodGroup& pg) { pg.meta.labels["kai.scheduler/queue"] = "other"; }},
      {"the queue label missing", [](model::PodGroup& pg) { pg.meta.labels.erase("kai.scheduler/queue"); }},
      {"a node pool label", [](model::PodGroup& pg) { pg.meta.labels["kai.scheduler/node-pool"] = "p"; }},
      {"an annotation missing", [](model::PodGroup& pg) { pg.meta.annotations.erase("kai.scheduler/topology"); }},
      {"an extra annotation", [](model::PodGroup& pg) { pg.meta.annotations["pod-group-name"] = "x"; }},
      {"the queue", [](model::PodGroup& pg) { pg.queue = "elsewhere"; }},
      {"markUnschedulable", [](model::PodGroup& pg) { pg.mark_unschedulable = true; }},
      {"minMember", [](model::PodGroup& pg) { pg.min_member = 3; }},
      {"minSubGroup", [](model::PodGroup& pg) { pg.min_sub_group = 7; }},
      {"a subgroup", [](model::PodGroup& pg) { pg.sub_groups.pop_back(); }},
      {"the topology", [](model::PodGroup& pg) { pg.topology_constraint.required_level = "zone"; }},
      {"the priority", [](model::PodGroup& pg) { pg.priority_class_name = "inference"; }},
      {"the preemptibility", [](model::PodGroup& pg) { pg.preemptibility = "preemptible"; }},
      {"a staleness grace", [](model::PodGroup& pg) { pg.staleness_grace_period_seconds = 5; }},
      {"the owner's controller flag", [](model::PodGroup& pg) { pg.meta.owner_references[0].controller = true; }},
      {"a second owner", [](model::PodGroup& pg) { pg.meta.owner_references.push_back(pg.meta.owner_references[0]); }},
      {"the owner's uid", [](model::PodGroup& pg) { pg.meta.owner_references[0].uid = "other"; }},
  };
  int differ = 0;
  for (const auto& [what, change] : changes) {
    model::PodGroup existing = written;
    change(existing);
    const bool slow = says_the_same(existing, as_update_of(existing, desired_pod_group(groups[0])));
    EXPECT_EQ(already_written(existing, groups[0]), slow) << what;
    differ += slow ? 0 : 1;
  }
  EXPECT_EQ(differ, 14) << "the changes that are a difference by KAI's rules";
}

}  // namespace
}  // namespace kai::core
