// Helper for crash_test: appends under load from several producer threads until it is killed.
// After each acknowledged append it writes 24 bytes to stdout: first seq, last seq, producer<<32 |
// counter (native endian; the parent is the same machine). write(2) of less than PIPE_BUF bytes to a
// pipe is atomic, so records from different threads never interleave.
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#include "storage/event_log.hpp"
#include "tests/events/test_events.hpp"

int main(int argc, char** argv) {
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
      }
    });
  }
  for (auto& p : producers) p.join();
}
