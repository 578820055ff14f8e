// The cycle driver without CAF or an API server (actors/daemon/cycle_driver.hpp): a cycle's records
// are in the log before anything executes them, bind jobs carry their decision's sequence number,
// outcomes are folded into the assumed decisions once written, and no cycle runs on a cut that is
// not listed, on one taken after a refused append, for a standby, or while the daemon stops.
#include "actors/daemon/cycle_driver.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <numeric>
#include <sstream>
#include <vector>

#include "actors/daemon/ingest.hpp"
#include "actors/scheduler/core/behaviour_version.hpp"
#include "actors/scheduler/core/session_flags.hpp"
#include "events/state_codec.hpp"
#include "k8s/model/json_codec.hpp"
#include "k8s/model/kinds.hpp"
#include "tests/storage/temp_dir.hpp"
#include "tools/kai-log/replay.hpp"
#include "tools/kai-gen/generator.hpp"

namespace kai::daemon {
namespace {

/// A small generated cluster with pending gangs, in the three stores the daemon shards into; every
/// watch event is appended to `log` first, as the ingest does, so that the log holds the cycle's input.
struct Stores {
  std::vector<std::unique_ptr<EntityStore>> stores;

  explicit Stores(storage::EventLog& log) {
    for (std::set<std::string, std::less<>> kinds :
         {std::set<std::string, std::less<>>{"Node"}, std::set<std::string, std::less<>>{"Queue", "PriorityClass"},
          std::set<std::string, std::less<>>{"Pod", "PodGroup", "BindRequest"}}) {
      stores.push_back(std::make_unique<EntityStore>(std::move(kinds)));
    }
    const model::ClusterObjects c = gen::generate(gen::ClusterSpec::scaled(0.002));
    model::for_each_kind([&](auto kind) {
      using K = decltype(kind);
      for (const auto& x : K::in(c)) {
        events::WatchEvent w{std::string(K::kName), events::WatchType::kAdded, model::encode(x).dump(),
                             x.meta.resource_version};
        events::Event e;
        e.payload = w;
        EXPECT_TRUE(log.append({e}).is_ok());
        for (auto& s : stores) {
          if (s->owns(K::kName)) {
            EXPECT_TRUE(s->apply(w).is_ok());
          }
        }
      }
    });
  }

  CutPtr cut(uint64_t seq, bool listed = true, bool appends_failed = false) {
    auto r = std::make_shared<CutResult>();
    r->cut.seq = seq;
    for (auto& s : stores) r->cut.views.push_back(s->view(seq));
    r->listed = listed;
    r->appends_failed = appends_failed;
    return r;
  }
};

struct DriverTest : ::testing::Test {
  storage::testing::TempDir dir;
  std::unique_ptr<storage::EventLog> log;
  Leadership leadership{false};
  bool stopping = false;
  std::vector<BindJob> executed;
  std::vector<uint64_t> last_seq_when_executed;
  int published = 0;
  std::unique_ptr<CycleDriver> driver;

  void SetUp() override {
    auto opened = storage::EventLog::open(dir.str() + "/log");
    ASSERT_TRUE(opened.is_ok()) << opened.message();
    log = std::move(opened).value();
    make_driver(leadership);
  }

  void make_driver(const Leadership& lead) {
    CycleDriverPorts ports;
    ports.log = log.get();
    ports.leadership = &lead;
    ports.execute = [this](BindJob job) {
      last_seq_when_executed.push_back(log->last_seq());
      executed.push_back(std::move(job));
    };
    ports.write_job_state = [](const events::JobStateChange&) {};
    ports.publish = [this](std::shared_ptr<const LastCycle>) { ++published; };
    ports.stopping = [this] { return stopping; };
    DaemonOptions options;
    options.test_clock = [] { return int64_t{1'700'000'000}; };
    options.test_seed = 7;
    core::SessionOptions session;
    // The configuration is logged as the daemon logs it, so that replay finds it.
    const std::string flags = core::encode_session_flags(session);
    const uint64_t hash = events::config_hash("", core::kBehaviourVersion, flags);
    ASSERT_TRUE(record_config(*log, "", flags, hash).is_ok());
    driver = std::make_unique<CycleDriver>(options, session, hash, std::move(ports), events::ScheduleRecords{},
                                           /*last_cycle_id=*/0);
  }

  /// Every record in the log, in order.
  std::vector<events::Event> records() {
    std::vector<events::Event> out;
    (void)log->read(1, UINT64_MAX, [&](uint64_t, const storage::Result<events::Event>& e) {
      if (e.is_ok()) out.push_back(e.value());
      return true;
    });
    return out;
  }
};

TEST_F(DriverTest, ACyclesDecisionsAreLoggedBeforeTheyAreExecutedAndCarryTheirSequence) {
  Stores stores(*log);
  const CycleDriver::Plan plan = driver->plan();
  ASSERT_TRUE(plan.cycle);
  driver->on_cut(stores.cut(log->last_seq()), plan);
  ASSERT_FALSE(executed.empty()) << "the generated cluster has pending gangs that fit";
  EXPECT_EQ(published, 1);
  std::map<uint64_t, events::Decision> decisions;
  for (const auto& e : records()) {
    if (const auto* d = std::get_if<events::DecisionEvent>(&e.payload)) decisions[e.seq] = d->decision;
  }
  for (size_t i = 0; i < executed.size(); ++i) {
    const BindJob& job = executed[i];
    ASSERT_TRUE(decisions.count(job.log_seq)) << job.decision.pod;
    EXPECT_EQ(decisions[job.log_seq].pod, job.decision.pod);
    EXPECT_GE(last_seq_when_executed[i], job.log_seq) << "executed before it was logged";
    EXPECT_TRUE(driver->records().assumed.count(job.log_seq)) << "a logged decision is assumed";
  }
  const auto all = records();
  ASSERT_GE(all.size(), 3u);
  EXPECT_TRUE(std::holds_alternative<events::CycleEnd>(all.back().payload));
  // The log is the truth: replaying it decides exactly what the driver decided.
  std::ostringstream out, err;
  EXPECT_EQ(kailog::replay(*log, {}, out, err), 0) << out.str() << err.str();
  EXPECT_NE(out.str().find("replayed 1 cycles"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find(" 0 differences"), std::string::npos) << out.str();
}

TEST_F(DriverTest, AnOutcomeIsFoldedIntoTheAssumedDecisionsOnceWritten) {
  Stores stores(*log);
  driver->on_cut(stores.cut(log->last_seq()), driver->plan());
  ASSERT_FALSE(executed.empty());
  const BindJob job = executed.front();
  ASSERT_EQ(job.decision.kind, events::DecisionKind::kBind);
  driver->on_outcome(job, events::BinderOutcome{job.log_seq, job.decision.pod, events::Outcome::kBound, "bound"});
  EXPECT_TRUE(driver->drain_appends());
  ASSERT_TRUE(driver->records().assumed.count(job.log_seq));
  EXPECT_TRUE(driver->records().assumed.at(job.log_seq).reported);
  driver->on_outcome(job, events::BinderOutcome{job.log_seq, job.decision.pod, events::Outcome::kBindFailed, "no"});
  EXPECT_TRUE(driver->drain_appends());
  EXPECT_FALSE(driver->records().assumed.count(job.log_seq)) << "a failed bind ends the assumption";
}

TEST_F(DriverTest, NoCycleOnACutNotListedOrAfterARefusedAppend) {
  Stores stores(*log);
  const uint64_t before = log->last_seq();
  driver->on_cut(stores.cut(log->last_seq(), /*listed=*/false), driver->plan());
  driver->on_cut(stores.cut(log->last_seq(), /*listed=*/true, /*appends_failed=*/true), driver->plan());
  EXPECT_TRUE(executed.empty());
  EXPECT_EQ(published, 0);
  EXPECT_EQ(log->last_seq(), before) << "nothing of a cycle was logged";
}

TEST_F(DriverTest, AStandbyAndAStoppingDaemonPlanNoCycle) {
  stopping = true;
  EXPECT_FALSE(driver->plan().cycle);
  stopping = false;
  Leadership standby{true};  // electing, and no lease taken: may not act
  make_driver(standby);
  EXPECT_FALSE(driver->plan().cycle);
}

TEST(EarlyCycleTrigger, NumbersEventsInOrderAndAsksForACycleAfterEnoughAdditionsOrDeletionsAndWhenTheFirstListsEnd) {
  EarlyCycleTrigger trigger(3, {"Node", "Pod"});
  std::vector<uint64_t> enqueued;
  uint64_t number = 0;
  auto admit = [&](const char* kind, k8s::ReflectorEventType type, bool from_list) {
    k8s::ReflectorEvent e;
    e.kind = kind;
    e.type = type;
    e.from_list = from_list;
    return trigger.admit(e, [&](uint64_t n) { enqueued.push_back(n); }, number);
  };
  const auto kAdded = k8s::ReflectorEventType::kAdded;
  const auto kBookmark = k8s::ReflectorEventType::kBookmark;
  for (int i = 0; i < 4; ++i) EXPECT_FALSE(admit("Node", kAdded, true)) << "the first lists ask for no cycle";
  trigger.cut_taken(number);
  EXPECT_FALSE(admit("Node", kBookmark, true));
  EXPECT_TRUE(admit("Pod", kBookmark, true)) << "the last first list ended";
  EXPECT_EQ(number, 6u);
  EXPECT_FALSE(admit("Pod", kBookmark, true)) << "once only";
  EXPECT_FALSE(admit("Pod", kAdded, false));
  EXPECT_FALSE(admit("Pod", kAdded, false));
  EXPECT_TRUE(admit("Pod", kAdded, false)) << "the third change since the last cut";
  EXPECT_EQ(number, 10u);
  EXPECT_FALSE(admit("Pod", kAdded, false)) << "once per cut";
  trigger.cut_taken(number);
  EXPECT_FALSE(admit("Pod", kAdded, false));
  EXPECT_FALSE(admit("Pod", kAdded, false));
  EXPECT_TRUE(admit("Pod", kAdded, false)) << "counted again from the cut";
  trigger.cut_taken(number);
  const auto kModified = k8s::ReflectorEventType::kModified;
  const auto kDeleted = k8s::ReflectorEventType::kDeleted;
  for (int i = 0; i < 5; ++i) EXPECT_FALSE(admit("Pod", kModified, false)) << "updates do not count";
  EXPECT_FALSE(admit("Pod", kDeleted, false));
  EXPECT_FALSE(admit("Pod", kAdded, false));
  EXPECT_TRUE(admit("Pod", kDeleted, false)) << "deletions count as additions do";
  std::vector<uint64_t> every(22);
  std::iota(every.begin(), every.end(), 1);
  EXPECT_EQ(enqueued, every) << "every event handed on, in order";
}

// A change admitted while a cut is on its way is not in that cut: taking the cut must not forget it,
// or its cycle waits a whole schedule period (a stale gang's eviction came 30 s late in a test).
TEST(EarlyCycleTrigger, ChangesAfterTheCutsLastEventStayCountedAndAskWhenTheCutIsTaken) {
  EarlyCycleTrigger trigger(2, {});
  uint64_t number = 0;
  auto change = [&] {
    k8s::ReflectorEvent e;
    e.kind = "Pod";
    e.type = k8s::ReflectorEventType::kDeleted;
    return trigger.admit(e, [](uint64_t) {}, number);
  };
  EXPECT_FALSE(change());
  EXPECT_TRUE(change()) << "the second change asks";
  const uint64_t cut_holds = number;  // the cut asked for will hold events 1 and 2
  EXPECT_FALSE(change()) << "asked once already";
  EXPECT_FALSE(change());
  EXPECT_TRUE(trigger.cut_taken(cut_holds)) << "events 3 and 4 are not in the cut and reach the count";
  EXPECT_FALSE(change()) << "their request is out: no second one";
  EXPECT_FALSE(trigger.cut_taken(number)) << "a cut holding everything leaves nothing counted";
  EXPECT_FALSE(change());
  EXPECT_TRUE(change()) << "counted again from that cut";
}

TEST(EarlyCycleTrigger, AShortBinderAsksAfterFiftyAdditionsWhileCyclesAreCheap) {
  bool short_of_work = true;
  EarlyCycleTrigger trigger(500, {}, [&] { return short_of_work; });
  uint64_t number = 0;
  auto add = [&] {
    k8s::ReflectorEvent e;
    e.kind = "Pod";
    e.type = k8s::ReflectorEventType::kAdded;
    return trigger.admit(e, [](uint64_t) {}, number);
  };
  auto additions_until_asked = [&](int limit) {
    for (int i = 1; i <= limit; ++i) {
      if (add()) return i;
    }
    return 0;
  };
  static_assert(EarlyCycleTrigger::kHungryAfter == 50);
  EXPECT_EQ(additions_until_asked(1000), 50) << "the binder being short";
  EXPECT_EQ(additions_until_asked(1000), 450) << "once per cut: then at the full count";
  trigger.cut_taken(number);
  short_of_work = false;
  EXPECT_EQ(additions_until_asked(1000), 500) << "a busy binder waits for the full count";
  trigger.cut_taken(number);
  short_of_work = true;
  const auto now = EarlyCycleTrigger::Clock::now();
  trigger.cycle_ran(std::chrono::seconds(10), now);
  EXPECT_EQ(additions_until_asked(1000), 500) << "a cycle that took 10 s and just ended: not sooner";
  trigger.cut_taken(number);
  trigger.cycle_ran(std::chrono::milliseconds(1), now - std::chrono::seconds(1));
  EXPECT_EQ(additions_until_asked(1000), 50) << "a cheap cycle a second ago: sooner again";
  EarlyCycleTrigger few(20, {}, [] { return true; });
  uint64_t n = 0;
  int asked_at = 0;
  for (int i = 1; i <= 30 && asked_at == 0; ++i) {
    k8s::ReflectorEvent e;
    e.kind = "Pod";
    e.type = k8s::ReflectorEventType::kAdded;
    if (few.admit(e, [](uint64_t) {}, n)) asked_at = i;
  }
  EXPECT_EQ(asked_at, 20) << "never later than --early-cycle-changes";
}

}  // namespace
}  // namespace kai::daemon
