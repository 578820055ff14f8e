// Crash safety (issue 6): a child appends under load and is killed with SIGKILL at a random moment;
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
#include <random>

#include "storage/event_log.hpp"
#include "tests/events/test_events.hpp"
#include "tests/storage/temp_dir.hpp"

extern char** environ;

namespace kai::storage {
namespace {

struct Ack {
  uint64_t first, last, tag;
};

int iterations() {
  const char* env = std::getenv("KAI_CRASH_ITERATIONS");  // longer optional runs
  return env ? std::atoi(env) : 50;
}

TEST(CrashSafety, SigkillUnderLoad) {
  testing::TempDir dir;
  std::mt19937 rng(12345);
  uint64_t total_acked = 0;
  for (int it = 0; it < iterations(); ++it) {
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    posix_spawn_file_actions_addclose(&fa, fds[0]);
    std::string dir_s = dir.str();
    std::string threads = "4";
    char* argv[] = {const_cast<char*>(KAI_CRASH_WRITER), dir_s.data(), threads.data(), nullptr};
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
    auto kill_at = std::chrono::steady_clock::now() + std::chrono::milliseconds(rng() % 40);
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
                         << " corrupt";
    ASSERT_EQ(v->first_seq, 1u);
    std::vector<events::Event> all;
    all.reserve(v->last_seq);
    ASSERT_TRUE((*log)->read(1, UINT64_MAX, [&](uint64_t, const Result<events::Event>& e) {
      all.push_back(*e);
      return true;
    }));
    for (const Ack& a : acks) {
      ASSERT_LE(a.last, all.size()) << "acknowledged event " << a.last << " lost";
      for (uint64_t s = a.first; s <= a.last; ++s) {
        const auto& d = std::get<events::DecisionEvent>(all[s - 1].payload);
        ASSERT_EQ(d.decision.pod, "p/" + std::to_string(a.tag >> 32));
        ASSERT_EQ(d.decision.seq, a.tag & 0xffffffffu);
      }
    }
    uint64_t last = (*log)->last_seq();
    auto r = (*log)->append({events::testing::decision_event(1, 1, "after/restart")});
    ASSERT_TRUE(r) << r.message();
    ASSERT_EQ(r->first_seq, last + 1);
  }
  std::printf("crash iterations %d, acknowledged appends %llu\n", iterations(),
              static_cast<unsigned long long>(total_acked));
}

}  // namespace
}  // namespace kai::storage
