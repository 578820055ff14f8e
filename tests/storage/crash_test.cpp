// Crash safety (docs/event-log-format.md "Group commit and durability"): a child appends under load and is killed with SIGKILL at a random moment;
// after each restart verify passes, every acknowledged event is present, and the sequence continues
// without a gap. The child is a separate binary (posix_spawn), not a fork: forking a process that
// already has RocksDB's background threads would copy locks held by threads that do not exist in
// the child.
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <optional>
#include <random>

#include "events/state_codec.hpp"
#include "storage/event_log.hpp"
#include "storage/restore.hpp"
#include "tests/events/test_events.hpp"
#include "tests/storage/temp_dir.hpp"

extern char** environ;

namespace kai::storage {
namespace {

struct Ack {
  uint64_t first, last, tag;
};

int iterations(int default_count) {
  const char* env = std::getenv("KAI_CRASH_ITERATIONS");  // longer optional runs
  return env ? std::atoi(env) : default_count;
}

/// The state at the end of the log rebuilt from the OLDEST kept snapshot and the longer tail after it
/// (restore_state starts from the newest), or nothing when fewer than two snapshots are kept.
std::optional<events::ClusterState> restore_from_oldest(const EventLog& log) {
  auto snaps = log.snapshots();
  if (!snaps || snaps->size() < 2) return std::nullopt;
  auto bytes = log.read_snapshot(snaps->front().seq);
  EXPECT_TRUE(bytes) << bytes.message();
  auto state = events::decode_state(bytes ? *bytes : std::string());
  EXPECT_TRUE(state) << state.message();
  if (!state) return std::nullopt;
  events::ClusterState s = std::move(state).value();
  EXPECT_TRUE(log.read(snaps->front().seq + 1, log.last_seq(), [&](uint64_t, const Result<events::Event>& e) {
    EXPECT_TRUE(e) << e.message();
    if (e) (void)events::apply(s, *e);
    return true;
  }));
  s.seq = log.last_seq();
  return s;
}

/// Kills the writer `count` times; `snapshots`: it also snapshots and trims the log while appending.
void crash_iterations(int count, bool snapshots) {
  testing::TempDir dir;
  std::mt19937 rng(12345);
  uint64_t total_acked = 0;
  int restored_from_two = 0;
  uint64_t last_retained_from = 1;
  for (int it = 0; it < count; ++it) {
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    posix_spawn_file_actions_addclose(&fa, fds[0]);
    std::string dir_s = dir.str();
    std::string threads = "4";
    std::string mode = snapshots ? "snapshots" : "plain";
    char* argv[] = {const_cast<char*>(KAI_CRASH_WRITER), dir_s.data(), threads.data(), mode.data(), nullptr};
    pid_t pid = 0;
    ASSERT_EQ(posix_spawn(&pid, KAI_CRASH_WRITER, &fa, nullptr, argv, environ), 0);
    posix_spawn_file_actions_destroy(&fa);
    ::close(fds[1]);
    // A failed assertion returns early: never leave the writer running behind.
    struct Reaper {
      pid_t pid;
      bool reaped = false;
      ~Reaper() {
        if (!reaped) {
          ::kill(pid, SIGKILL);
          ::waitpid(pid, nullptr, 0);
        }
      }
    } reaper{pid};

    // Collect acks; kill at a random moment after the first one (so the child is under load).
    std::vector<Ack> acks;
    std::string buf;
    auto drain = [&](int timeout_ms) {
      pollfd p{fds[0], POLLIN, 0};
      if (::poll(&p, 1, timeout_ms) <= 0) return false;
      char tmp[4096];
      ssize_t n = ::read(fds[0], tmp, sizeof tmp);
      if (n <= 0) return false;
      buf.append(tmp, static_cast<size_t>(n));
      while (buf.size() >= sizeof(Ack)) {
        Ack a;
        std::memcpy(&a, buf.data(), sizeof a);
        acks.push_back(a);
        buf.erase(0, sizeof a);
      }
      return true;
    };
    auto start = std::chrono::steady_clock::now();
    while (acks.empty() && std::chrono::steady_clock::now() - start < std::chrono::seconds(20)) {
      if (!drain(100)) {
        int status = 0;
        if (::waitpid(pid, &status, WNOHANG) == pid) {
          reaper.reaped = true;
          FAIL() << "writer exited early, status " << status;
        }
      }
    }
    ASSERT_FALSE(acks.empty()) << "writer never acknowledged an append";
    // With snapshots, 40 ms more: the snapshot thread (restore, encode, write, flush, trim) must get
    // through its loop now and then even on a loaded machine, or no kill lands in it.
    auto kill_at = std::chrono::steady_clock::now() + std::chrono::milliseconds(rng() % 40 + (snapshots ? 40 : 0));
    while (std::chrono::steady_clock::now() < kill_at) drain(1);
    ASSERT_EQ(::kill(pid, SIGKILL), 0);
    while (drain(1000)) {
    }
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    reaper.reaped = true;
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "status " << status;
    ::close(fds[0]);
    total_acked += acks.size();

    // Restart: the log is whole, holds every acknowledged event, and continues without a gap.
    auto log = EventLog::open(dir.str());
    ASSERT_TRUE(log) << log.message();
    auto v = (*log)->verify();
    ASSERT_TRUE(v) << v.message();
    ASSERT_TRUE(v->ok()) << "iteration " << it << ": " << v->gaps.size() << " gaps, " << v->corrupt.size()
                         << " corrupt, " << v->corrupt_snapshots.size() << " corrupt snapshots";
    // Retention deletes from the front only, and only what a kept snapshot covers.
    const uint64_t from = (*log)->retained_from();
    last_retained_from = from;
    if (v->records > 0) {
      ASSERT_EQ(v->first_seq, from);
    }
    if (!snapshots) {
      ASSERT_EQ(from, 1u);
    }
    std::vector<events::Event> all;
    ASSERT_TRUE((*log)->read(from, UINT64_MAX, [&](uint64_t, const Result<events::Event>& e) {
      all.push_back(*e);
      return true;
    }));
    for (const Ack& a : acks) {
      ASSERT_LE(a.last, from - 1 + all.size()) << "acknowledged event " << a.last << " lost";
      for (uint64_t s = std::max(a.first, from); s <= a.last; ++s) {
        const auto& d = std::get<events::DecisionEvent>(all[s - from].payload);
        ASSERT_EQ(d.decision.pod, "p/" + std::to_string(a.tag >> 32));
        ASSERT_EQ(d.decision.seq, a.tag & 0xffffffffu);
      }
    }
    if (snapshots) {
      // Every kept snapshot plus the log after it gives the same state.
      auto restored = restore_state(**log);
      ASSERT_TRUE(restored) << "iteration " << it << ": " << restored.message();
      if (auto older = restore_from_oldest(**log)) {
        ASSERT_TRUE(*older == restored->state) << "iteration " << it;
        ++restored_from_two;
      }
    }
    uint64_t last = (*log)->last_seq();
    auto r = (*log)->append({events::testing::decision_event(1, 1, "after/restart")});
    ASSERT_TRUE(r) << r.message();
    ASSERT_EQ(r->first_seq, last + 1);
  }
  std::printf(
      "crash iterations %d, acknowledged appends %llu, log retained from %llu, %d restores compared\n", count,
      static_cast<unsigned long long>(total_acked), static_cast<unsigned long long>(last_retained_from),
      restored_from_two);
  if (snapshots) {
    EXPECT_GT(restored_from_two, count / 2) << "too few iterations had two snapshots to compare";
    EXPECT_GT(last_retained_from, 1u) << "retention never deleted anything";
  }
}

TEST(CrashSafety, SigkillUnderLoad) {
  crash_iterations(iterations(50), false);
}

TEST(CrashSafety, SigkillWhileSnapshottingAndTrimming) {
  crash_iterations(iterations(30), true);
}

}  // namespace
}  // namespace kai::storage
