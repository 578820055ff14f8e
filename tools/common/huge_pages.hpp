#pragma once
// Transparent huge pages for malloc's memory, for the programs that hold a whole cluster at once
// (kai-scheduler, kai-sim, kai-log). A session at 150,000 pods allocates and frees several hundred MB; on 4 KB pages
// the page faults and TLB misses took a quarter of the time, and a VM makes each fault dearer
// (bench/README.md "Huge pages"). glibc backs its heap with huge pages when the tunable
// glibc.malloc.hugetlb=1 is set (the kernel's THP mode "madvise" or "always"); a tunable is read only
// at process start, so a tool started without it sets it and executes itself again, once, keeping
// its pid, arguments and environment (docs/configuration.md "Huge pages").

#include <unistd.h>

#include <cstdlib>
#include <string>

#include "tools/common/glibc_tunables.hpp"

namespace kai::tools {

/// Call first in main(). Returns when huge pages are on, were turned off by the user
/// (GLIBC_TUNABLES names glibc.malloc.hugetlb already) or the execution failed; sanitized builds
/// (their allocator ignores the tunable) return at once.
inline void run_with_huge_pages([[maybe_unused]] char** argv) {
#if !defined(__SANITIZE_ADDRESS__)
  std::string tunables = glibc_tunables();
  if (tunables.find("glibc.malloc.hugetlb") != std::string::npos) return;
  tunables += tunables.empty() ? "glibc.malloc.hugetlb=1" : ":glibc.malloc.hugetlb=1";
  if (setenv("GLIBC_TUNABLES", tunables.c_str(), 1) != 0) return;
  execv("/proc/self/exe", argv);  // returns only when it failed: run on without huge pages
#endif
}

}  // namespace kai::tools
