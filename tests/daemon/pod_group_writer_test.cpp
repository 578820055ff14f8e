// The PodGroup writer (actors/daemon/pod_group_writer.hpp) against a fake of its port
// (pod_group_api.hpp): a logged job state change becomes its annotation, changes waiting to be
// written are coalesced per PodGroup, a standby writes nothing, stop() writes what is queued; a
// logged PodGroup write creates the object (or reads and updates it by KAI's rules,
// pod_group_update.hpp) and then annotates its pods.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "actors/daemon/pod_group_writer.hpp"

#include <nlohmann/json.hpp>
#include "tests/daemon/writer_fakes.hpp"

namespace kai::daemon {
namespace {

using namespace std::chrono_literals;

/// Records every patch as one line ("ns/name key=value,key=-" with "-" for a removal); can hold the
/// writer's thread in its first patch.
class FakePodGroupApi : public fakes::CallRecorder, public PodGroupApi {
 public:
  model::Status answer = model::Status::ok();

  model::Status patch_pod_group_annotations(const std::string& ns, const std::string& name,
                                            const std::map<std::string, std::optional<std::string>>& annotations) override {
    std::string line = ns + "/" + name;
    for (const auto& [k, v] : annotations) line += " " + k + "=" + v.value_or("-");
    record(line);
    return answer;
  }

  /// PodGroups by "ns/name", as the API server holds them.
  std::map<std::string, std::string> objects;
  model::Status create_answer = model::Status::ok();
  model::Status update_answer = model::Status::ok();

  model::Result<std::string> get_pod_group(const std::string& ns, const std::string& name) override {
    record("get " + ns + "/" + name);
    auto it = objects.find(ns + "/" + name);
    if (it == objects.end()) return model::Status::error(model::Code::kNotFound, "404 NotFound");
    return it->second;
  }
  model::Status create_pod_group(const std::string& ns, const std::string& object_json) override {
    record("create " + ns + " " + object_json);
    return create_answer;
  }
  model::Status update_pod_group(const std::string& ns, const std::string& name,
                                 const std::string& object_json) override {
    record("update " + ns + "/" + name + " " + object_json);
    return update_answer;
  }
  model::Status annotate_pod(const std::string& ns, const std::string& name, const std::string& uid,
                             const std::string& group, const std::string& sub_group) override {
    record("annotate " + ns + "/" + name + " " + uid + " " + group + (sub_group.empty() ? "" : " " + sub_group));
    return answer;
  }
  model::Status patch_status(const std::string& kind, const std::string& ns, const std::string& name,
                             const std::string& uid, const std::string& patch_json) override {
    record("status " + kind + " " + (ns.empty() ? "" : ns + "/") + name + " " + uid + " " + patch_json);
    return answer;
  }
};

events::JobStateChange change(const std::string& group, events::JobField field, std::optional<int64_t> value) {
  return events::JobStateChange{1, "uid-" + group, group, field, value, std::nullopt, events::JobStateSource::kDecided};
}

using fakes::wait_written;

constexpr int64_t kT = 1'700'000'000;  // 2023-11-14T22:13:20Z

/// Hands `writer` the change and waits until it has made `n` writes in all.
bool change_written(PodGroupWriter& writer, const events::JobStateChange& c, uint64_t n) {
  writer.write(c);
  return wait_written(writer, n);
}

/// Sets `api` to hold its first call, hands `writer` a change of `group`, and waits until it holds it.
bool first_patch_held(FakePodGroupApi& api, PodGroupWriter& writer, const std::string& group) {
  api.hold_first_call = true;
  writer.write(change(group, events::JobField::kLastStart, kT));
  return api.wait_held();
}

TEST(PodGroupWriter, ALoggedChangeIsWrittenAsItsAnnotationAndARemovalAsNull) {
  FakePodGroupApi api;
  PodGroupWriter writer(api, [] { return true; });
  ASSERT_TRUE(change_written(writer, change("team-a/pg", events::JobField::kLastStart, kT), 1));
  ASSERT_TRUE(change_written(writer, change("team-a/pg", events::JobField::kStaleSince, std::nullopt), 2));
  writer.stop();
  EXPECT_EQ(api.calls(), (std::vector<std::string>{"team-a/pg kai.scheduler/last-start-timestamp=2023-11-14T22:13:20Z",
                                                   "team-a/pg kai.scheduler/stale-podgroup-timestamp=-"}));
}

TEST(PodGroupWriter, ChangesOfOneGroupWaitingToBeWrittenAreOnePatchWithTheNewestValues) {
  FakePodGroupApi api;
  PodGroupWriter writer(api, [] { return true; });
  ASSERT_TRUE(first_patch_held(api, writer, "team-a/busy"));
  writer.write(change("team-a/pg", events::JobField::kLastStart, kT));
  writer.write(change("team-a/pg", events::JobField::kStaleSince, kT + 1));
  writer.write(change("team-a/pg", events::JobField::kLastStart, kT + 60));
  api.release();
  ASSERT_TRUE(wait_written(writer, 2));
  writer.stop();
  EXPECT_EQ(api.calls(), (std::vector<std::string>{"team-a/busy kai.scheduler/last-start-timestamp=2023-11-14T22:13:20Z",
                                                   "team-a/pg kai.scheduler/last-start-timestamp=2023-11-14T22:14:20Z "
                                                   "kai.scheduler/stale-podgroup-timestamp=2023-11-14T22:13:21Z"}));
}

TEST(PodGroupWriter, AStandbyWritesNothing) {
  FakePodGroupApi api;
  std::atomic<int> asked{0};
  PodGroupWriter writer(api, [&] {
    ++asked;
    return false;
  });
  writer.write(change("team-a/pg", events::JobField::kLastStart, kT));
  for (int i = 0; i < 2500 && asked == 0; ++i) std::this_thread::sleep_for(2ms);
  writer.stop();
  EXPECT_EQ(asked.load(), 1) << "asked before the write";
  EXPECT_TRUE(api.calls().empty());
  EXPECT_EQ(writer.written(), 0u);
}

TEST(PodGroupWriter, StopWritesWhatIsQueuedFirst) {
  FakePodGroupApi api;
  PodGroupWriter writer(api, [] { return true; });
  ASSERT_TRUE(first_patch_held(api, writer, "team-a/one"));
  writer.write(change("team-a/two", events::JobField::kLastStart, kT));
  std::thread stopper([&] { writer.stop(); });
  api.release();
  stopper.join();
  EXPECT_EQ(api.calls().size(), 2u);
  EXPECT_EQ(writer.written(), 2u);
}

TEST(PodGroupWriter, AFailedWriteIsNotRetriedAndTheNextChangeWritesAgain) {
  // The logged value is what cycles read, not the annotation: a lost write costs nothing until the
  // next change of the group, which writes its own value.
  FakePodGroupApi api;
  api.answer = model::Status::error(model::Code::kUnavailable, "503 Service Unavailable");
  PodGroupWriter writer(api, [] { return true; });
  ASSERT_TRUE(change_written(writer, change("team-a/pg", events::JobField::kLastStart, kT), 1));
  std::this_thread::sleep_for(30ms);
  EXPECT_EQ(api.calls().size(), 1u);
  ASSERT_TRUE(change_written(writer, change("team-a/pg", events::JobField::kLastStart, kT + 60), 2));
  writer.stop();
  EXPECT_EQ(api.calls(), (std::vector<std::string>{"team-a/pg kai.scheduler/last-start-timestamp=2023-11-14T22:13:20Z",
                                                   "team-a/pg kai.scheduler/last-start-timestamp=2023-11-14T22:14:20Z"}));
}

TEST(PodGroupWriter, StatusWritesComeAfterObjectsAndANewerOneOfAnObjectReplacesTheQueuedOne) {
  FakePodGroupApi api;
  PodGroupWriter writer(api, [] { return true; });
  ASSERT_TRUE(first_patch_held(api, writer, "team-a/busy"));
  writer.write(events::StatusWrite{1, "Queue", "team-a", "uq", R"({"status":{"allocated":{"cpu":"1"}}})", false});
  writer.write(events::StatusWrite{2, "PodGroup", "ml/pg", "up", R"({"status":{"resourcesStatus":{}}})", false});
  writer.write(events::StatusWrite{3, "Queue", "team-a", "uq", R"({"status":{"allocated":{"cpu":"2"}}})", false});
  writer.write(events::StatusWrite{3, "Queue", "gone", "", "", true});  // settled: nothing to write
  writer.write(change("team-a/pg", events::JobField::kLastStart, kT));
  api.release();
  ASSERT_TRUE(wait_written(writer, 4));
  writer.stop();
  EXPECT_EQ(api.calls(),
            (std::vector<std::string>{"team-a/busy kai.scheduler/last-start-timestamp=2023-11-14T22:13:20Z",
                                      "team-a/pg kai.scheduler/last-start-timestamp=2023-11-14T22:13:20Z",
                                      R"(status Queue team-a uq {"status":{"allocated":{"cpu":"2"}}})",
                                      R"(status PodGroup ml/pg up {"status":{"resourcesStatus":{}}})"}));
}

TEST(PodGroupWriter, StatusWritesSettleAndAnObjectIsWrittenAtMostOncePerInterval) {
  FakePodGroupApi api;
  const StatusPacing pacing{200ms, 0ms, 600ms};
  PodGroupWriter writer(api, [] { return true; }, pacing);
  const auto start = std::chrono::steady_clock::now();
  auto since = [&] { return std::chrono::steady_clock::now() - start; };
  writer.write(events::StatusWrite{1, "Queue", "q", "uq", R"({"status":{"allocated":{"cpu":"1"}}})", false});
  std::this_thread::sleep_for(100ms);
  EXPECT_TRUE(api.calls().empty()) << "written before it settled";
  ASSERT_TRUE(wait_written(writer, 1));
  EXPECT_GE(since(), 200ms);
  // Two more changes right after the write: one call, the newer, once the queue's interval passed.
  writer.write(events::StatusWrite{2, "Queue", "q", "uq", R"({"status":{"allocated":{"cpu":"2"}}})", false});
  writer.write(events::StatusWrite{3, "Queue", "q", "uq", R"({"status":{"allocated":{"cpu":"3"}}})", false});
  std::this_thread::sleep_for(300ms);
  EXPECT_EQ(api.calls().size(), 1u) << "written again within the interval";
  ASSERT_TRUE(wait_written(writer, 2));
  EXPECT_GE(since(), 800ms);
  writer.stop();
  EXPECT_EQ(api.calls(), (std::vector<std::string>{R"(status Queue q uq {"status":{"allocated":{"cpu":"1"}}})",
                                                   R"(status Queue q uq {"status":{"allocated":{"cpu":"3"}}})"}));
}

const char* const kDesired =
    R"({"apiVersion":"scheduling.run.ai/v2alpha2","kind":"PodGroup","metadata":{"labels":{"team":"vision"},)"
    R"("name":"pg-train-u1","namespace":"ml","ownerReferences":[{"apiVersion":"jobset.x-k8s.io/v1alpha2",)"
    R"("kind":"JobSet","name":"train","uid":"u1"}]},"spec":{"minMember":4,"queue":"team-a"}})";

events::PodGroupWrite group_write(bool exists) {
  return events::PodGroupWrite{3, "ml/pg-train-u1", kDesired, exists,
                               {{"ml/train-0", "p0", "workers"}, {"ml/train-1", "p1", ""}}, false};
}

TEST(PodGroupWriter, AGroupNotSeenIsCreatedAndThenItsPodsAreAnnotated) {
  FakePodGroupApi api;
  PodGroupWriter writer(api, [] { return true; });
  writer.write(group_write(false));
  ASSERT_TRUE(wait_written(writer, 1));
  writer.stop();
  EXPECT_EQ(api.calls(), (std::vector<std::string>{std::string("create ml ") + kDesired,
                                                   "annotate ml/train-0 p0 pg-train-u1 workers",
                                                   "annotate ml/train-1 p1 pg-train-u1"}));
}

TEST(PodGroupWriter, AGroupThatExistsIsReadAndUpdatedByKaisRulesAndLeftWhenItSaysTheSame) {
  FakePodGroupApi api;
  // Someone moved the queue and added a label; the status is the scheduler's.
  api.objects["ml/pg-train-u1"] =
      R"({"apiVersion":"scheduling.run.ai/v2alpha2","kind":"PodGroup","metadata":{"name":"pg-train-u1",)"
      R"("namespace":"ml","uid":"g1","resourceVersion":"12","labels":{"owner":"ops"},"ownerReferences":[]},)"
      R"("spec":{"minMember":2,"queue":"moved"},"status":{"phase":"Pending"}})";
  PodGroupWriter writer(api, [] { return true; });
  writer.write(events::PodGroupWrite{3, "ml/pg-train-u1", kDesired, true, {}, false});
  ASSERT_TRUE(wait_written(writer, 1));
  const auto calls = api.calls();
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0], "get ml/pg-train-u1");
  const std::string prefix = "update ml/pg-train-u1 ";
  ASSERT_EQ(calls[1].rfind(prefix, 0), 0u) << calls[1];
  const auto body = nlohmann::json::parse(calls[1].substr(prefix.size()));
  EXPECT_EQ(body["metadata"]["resourceVersion"], "12");
  EXPECT_EQ(body["metadata"]["labels"], (nlohmann::json{{"owner", "ops"}, {"team", "vision"}}));
  EXPECT_EQ(body["metadata"]["ownerReferences"][0]["kind"], "JobSet");
  EXPECT_EQ(body["spec"]["minMember"], 4);
  EXPECT_EQ(body["spec"]["queue"], "moved") << "the queue is frozen after creation";
  EXPECT_EQ(body["status"]["phase"], "Pending");

  // The object now says it: read, nothing written.
  api.objects["ml/pg-train-u1"] = body.dump();
  writer.write(events::PodGroupWrite{4, "ml/pg-train-u1", kDesired, true, {}, false});
  ASSERT_TRUE(wait_written(writer, 2));
  writer.stop();
  EXPECT_EQ(api.calls().size(), 3u);
  EXPECT_EQ(api.calls().back(), "get ml/pg-train-u1");
}

TEST(PodGroupWriter, ACreateThatFindsTheObjectExistingUpdatesItInstead) {
  FakePodGroupApi api;
  api.create_answer = model::Status::error(model::Code::kConflict, "409 AlreadyExists");
  api.objects["ml/pg-train-u1"] =
      R"({"apiVersion":"scheduling.run.ai/v2alpha2","kind":"PodGroup","metadata":{"name":"pg-train-u1",)"
      R"("namespace":"ml","resourceVersion":"3"},"spec":{"minMember":1,"queue":"team-a"}})";
  PodGroupWriter writer(api, [] { return true; });
  writer.write(events::PodGroupWrite{3, "ml/pg-train-u1", kDesired, false, {}, false});
  ASSERT_TRUE(wait_written(writer, 1));
  writer.stop();
  const auto calls = api.calls();
  ASSERT_EQ(calls.size(), 3u);
  EXPECT_EQ(calls[0].rfind("create ml ", 0), 0u);
  EXPECT_EQ(calls[1], "get ml/pg-train-u1");
  EXPECT_EQ(calls[2].rfind("update ml/pg-train-u1 ", 0), 0u);
}

TEST(PodGroupWriter, ANewerWriteOfAGroupReplacesOneStillQueuedAndAStandbyWritesNone) {
  FakePodGroupApi api;
  PodGroupWriter writer(api, [] { return true; });
  ASSERT_TRUE(first_patch_held(api, writer, "ml/busy"));
  writer.write(events::PodGroupWrite{3, "ml/pg-train-u1", kDesired, false, {{"ml/train-0", "p0", ""}}, false});
  writer.write(events::PodGroupWrite{4, "ml/pg-train-u1", "", false, {{"ml/train-1", "p1", ""}}, false});
  api.release();
  ASSERT_TRUE(wait_written(writer, 2));
  writer.stop();
  EXPECT_EQ(api.calls(), (std::vector<std::string>{"ml/busy kai.scheduler/last-start-timestamp=2023-11-14T22:13:20Z",
                                                   "annotate ml/train-1 p1 pg-train-u1"}));

  FakePodGroupApi quiet;
  PodGroupWriter standby(quiet, [] { return false; });
  standby.write(group_write(false));
  standby.stop();
  EXPECT_TRUE(quiet.calls().empty());
}

}  // namespace
}  // namespace kai::daemon
