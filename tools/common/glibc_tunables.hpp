#pragma once
// The GLIBC_TUNABLES of this process, read by the tools that set malloc's behaviour themselves
// (huge_pages.hpp, resident_malloc.hpp) so that a user's own setting always wins.

#include <cstdlib>
#include <string>
#include <string_view>

namespace kai::tools {

/// GLIBC_TUNABLES as set, or empty.
inline std::string glibc_tunables() {
  const char* set = std::getenv("GLIBC_TUNABLES");
  return set != nullptr ? set : "";
}

/// Whether GLIBC_TUNABLES names the tunable `name` (for example "glibc.malloc.hugetlb").
inline bool glibc_tunables_name(std::string_view name) {
  return glibc_tunables().find(name) != std::string::npos;
}

}  // namespace kai::tools
