// The PodGroup writer (actors/daemon/pod_group_writer.hpp) against a fake of its port
// (pod_group_api.hpp): a logged job state change becomes its annotation, changes waiting to be
// written are coalesced per PodGroup, a standby writes nothing, stop() writes what is queued.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "actors/daemon/pod_group_writer.hpp"

namespace kai::daemon {
namespace {

using namespace std::chrono_literals;

/// Records every patch as one line ("ns/name key=value,key=-" with "-" for a removal); can hold the
/// writer's thread in its first patch.
class FakePodGroupApi : public PodGroupApi {
 public:
  bool hold_first_call = false;
  model::Status answer = model::Status::ok();

  model::Status patch_pod_group_annotations(const std::string& ns, const std::string& name,
                                            const std::map<std::string, std::optional<std::string>>& annotations) override {
    std::string line = ns + "/" + name;
    for (const auto& [k, v] : annotations) line += " " + k + "=" + v.value_or("-");
    std::unique_lock lock(mu_);
    calls_.push_back(line);
    if (hold_first_call && calls_.size() == 1) {
      holding_ = true;
      cv_.notify_all();
      cv_.wait(lock, [&] { return released_; });
    }
    return answer;
  }
  std::vector<std::string> calls() {
    std::lock_guard lock(mu_);
    return calls_;
  }
  bool wait_held() {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, 5s, [&] { return holding_; });
  }
  void release() {
    {
      std::lock_guard lock(mu_);
      released_ = true;
    }
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::string> calls_;
  bool holding_ = false;
  bool released_ = false;
};

events::JobStateChange change(const std::string& group, events::JobField field, std::optional<int64_t> value) {
  return events::JobStateChange{1, "uid-" + group, group, field, value, std::nullopt, events::JobStateSource::kDecided};
}

bool wait_written(const PodGroupWriter& w, uint64_t n) {
  for (int i = 0; i < 2500 && w.written() < n; ++i) std::this_thread::sleep_for(2ms);
  return w.written() == n;
}

constexpr int64_t kT = 1'700'000'000;  // 2023-11-14T22:13:20Z

TEST(PodGroupWriter, ALoggedChangeIsWrittenAsItsAnnotationAndARemovalAsNull) {
  FakePodGroupApi api;
  PodGroupWriter writer(api, [] { return true; });
  writer.write(change("team-a/pg", events::JobField::kLastStart, kT));
  ASSERT_TRUE(wait_written(writer, 1));
  writer.write(change("team-a/pg", events::JobField::kStaleSince, std::nullopt));
  ASSERT_TRUE(wait_written(writer, 2));
  writer.stop();
  EXPECT_EQ(api.calls(), (std::vector<std::string>{"team-a/pg kai.scheduler/last-start-timestamp=2023-11-14T22:13:20Z",
                                                   "team-a/pg kai.scheduler/stale-podgroup-timestamp=-"}));
}

TEST(PodGroupWriter, ChangesOfOneGroupWaitingToBeWrittenAreOnePatchWithTheNewestValues) {
  FakePodGroupApi api;
  api.hold_first_call = true;
  PodGroupWriter writer(api, [] { return true; });
  writer.write(change("team-a/busy", events::JobField::kLastStart, kT));
  ASSERT_TRUE(api.wait_held());
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
  api.hold_first_call = true;
  PodGroupWriter writer(api, [] { return true; });
  writer.write(change("team-a/one", events::JobField::kLastStart, kT));
  ASSERT_TRUE(api.wait_held());
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
  writer.write(change("team-a/pg", events::JobField::kLastStart, kT));
  ASSERT_TRUE(wait_written(writer, 1));
  std::this_thread::sleep_for(30ms);
  EXPECT_EQ(api.calls().size(), 1u);
  writer.write(change("team-a/pg", events::JobField::kLastStart, kT + 60));
  ASSERT_TRUE(wait_written(writer, 2));
  writer.stop();
  EXPECT_EQ(api.calls(), (std::vector<std::string>{"team-a/pg kai.scheduler/last-start-timestamp=2023-11-14T22:13:20Z",
                                                   "team-a/pg kai.scheduler/last-start-timestamp=2023-11-14T22:14:20Z"}));
}

}  // namespace
}  // namespace kai::daemon
