#pragma once
// The tools' main(): an exception that escapes a tool's body (a bad_alloc, a library's error) ends
// the tool with its name and the error on stderr and exit code 1, not with std::terminate's abort.

#include <cstdio>
#include <exception>

namespace kai::tools {

template <class Body>
int guarded_main(const char* tool, Body&& body) noexcept {
  try {
    return body();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", tool, e.what());
  } catch (...) {
    std::fprintf(stderr, "%s: an unknown error ended the process\n", tool);
  }
  return 1;
}

}  // namespace kai::tools
