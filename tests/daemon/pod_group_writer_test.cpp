// The PodGroup writer (actors/daemon/pod_group_writer.hpp) against a fake of its port
// (pod_group_api.hpp): a logged job state change becomes its annotation, changes waiting to be
// written are coalesced per PodGroup, a standby writes nothing, stop() writes what is queued.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "actors/daemon/pod_group_writer.hpp"
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

}  // namespace
}  // namespace kai::daemon
