#pragma once
// glibc malloc's mmap and trim thresholds for the processes that host the daemon. By default both grow
// with the blocks a process frees (up to 32 MiB and 64 MiB), after which a session's tables of a few MiB
// each come from the heap, and what a relayout frees stays in it: at 5,000 nodes / 150,000 pods the
// daemon's peak resident size was 1,087-1,093 MiB. Fixed at 1 MiB and 8 MiB (which also stops their
// growth), blocks of 1 MiB or more are mapped and unmapped on their own and the heap's top is given
// back: 1,005 MiB, no more CPU per bound pod, in the same quiet pair of runs (bench/README.md "The
// daemon's resident size").

#include <malloc.h>

#include "tools/common/glibc_tunables.hpp"

namespace kai::tools {

/// Call in main(), after run_with_huge_pages. Leaves either threshold to GLIBC_TUNABLES when it names it.
inline void keep_resident_size_low() {
  if (!glibc_tunables_name("glibc.malloc.mmap_threshold")) mallopt(M_MMAP_THRESHOLD, 1 << 20);
  if (!glibc_tunables_name("glibc.malloc.trim_threshold")) mallopt(M_TRIM_THRESHOLD, 8 << 20);
}

}  // namespace kai::tools
