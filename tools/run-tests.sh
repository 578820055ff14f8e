#!/usr/bin/env bash
# The README's test command: installs the dependencies, builds everything with AddressSanitizer and
# UndefinedBehaviorSanitizer (-O1 -g1) and runs all tests through ctest (benchmarks once, smallest size).
set -euo pipefail
cd "$(dirname "$0")/.."
./tools/install-deps.sh
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=true
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DKAI_SANITIZE=ON \
  -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1" >/dev/null
rm -f build-asan/.build-done
cmake --build build-asan -j2
touch build-asan/.build-done  # .ci/run starts clang-tidy beside the tests once this appears
ctest --test-dir build-asan --output-on-failure -j2 --timeout 600
