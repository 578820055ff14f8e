// Helper for crash_test: appends under load from several producer threads until it is killed. With a
// third argument "snapshots", another thread keeps taking snapshots (restore + encode + write) and
// applying retention (two snapshots kept, the log trimmed to about 4 KB, so that even a slow disk or
// a loaded machine writes enough within 30 kills to be trimmed), so kills land in those too.
// After each acknowledged append it writes 24 bytes to stdout: first seq, last seq, producer<<32 |
// counter (native endian; the parent is the same machine). write(2) of less than PIPE_BUF bytes to a
// pipe is atomic, so records from different threads never interleave.
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#include "events/state_codec.hpp"
#include "storage/event_log.hpp"
#include "storage/restore.hpp"
#include "tests/events/test_events.hpp"

int main(int argc, char** argv) {
  // Standard output carries the acknowledgements: the process log (RocksDB's warnings included)
  // goes to standard error, so that no log line is read as one.
  spdlog::set_default_logger(spdlog::stderr_logger_mt("crash_writer"));
  if (argc < 3) {
    std::fprintf(stderr, "usage: crash_writer DIR THREADS\n");
    return 2;
  }
  auto log = kai::storage::EventLog::open(argv[1]);
  if (!log) {
    std::fprintf(stderr, "crash_writer: %s\n", log.message().c_str());
    return 1;
  }
  int threads = std::atoi(argv[2]);
  std::vector<std::thread> producers;
  for (int t = 0; t < threads; ++t) {
    producers.emplace_back([&, t] {
      for (uint64_t i = 0;; ++i) {
        std::vector<kai::events::Event> batch;
        for (uint64_t k = 0; k <= i % 4; ++k)
          batch.push_back(kai::events::testing::decision_event(0, i, "p/" + std::to_string(t)));
        auto r = (*log)->append(std::move(batch));
        if (!r) {
          std::fprintf(stderr, "crash_writer: %s\n", r.message().c_str());
          std::_Exit(1);
        }
        uint64_t rec[3] = {r->first_seq, r->last_seq, (static_cast<uint64_t>(t) << 32) | i};
        if (::write(1, rec, sizeof rec) != static_cast<ssize_t>(sizeof rec)) std::_Exit(1);
        // As in the daemon, the binds are settled once the watch shows them (docs/one-truth.md), so
        // the assumed decisions in the state stay few and the snapshots small; this record is not
        // acknowledged to the parent, which checks only the decisions' ranges.
        kai::events::Event settled;
        kai::events::AssumedSettled s{0, {}};
        for (uint64_t seq = r->first_seq; seq <= r->last_seq; ++seq) s.decision_seqs.push_back(seq);
        settled.payload = std::move(s);
        if (auto st = (*log)->append({std::move(settled)}); !st) {
          std::fprintf(stderr, "crash_writer: %s\n", st.message().c_str());
          std::_Exit(1);
        }
      }
    });
  }
  if (argc > 3 && std::strcmp(argv[3], "snapshots") == 0) {
    producers.emplace_back([&] {
      kai::storage::RetentionPolicy policy;
      policy.max_age = std::chrono::seconds(0);
      policy.max_bytes = 4 << 10;
      policy.keep_snapshots = 2;
      for (;;) {
        const uint64_t at = (*log)->last_seq();
        auto state = kai::storage::restore_state(**log, at);
        if (!state) {
          std::fprintf(stderr, "crash_writer: restore: %s\n", state.message().c_str());
          std::_Exit(1);
        }
        std::string bytes;
        kai::events::encode_state(state->state, bytes);
        if (at > 0) {
          if (auto st = (*log)->write_snapshot(at, bytes); !st) {
            std::fprintf(stderr, "crash_writer: snapshot: %s\n", st.message().c_str());
            std::_Exit(1);
          }
        }
        if (auto r = (*log)->apply_retention(policy, 0); !r) {
          std::fprintf(stderr, "crash_writer: retention: %s\n", r.message().c_str());
          std::_Exit(1);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      }
    });
  }
  for (auto& p : producers) p.join();
}
