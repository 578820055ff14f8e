#!/usr/bin/env bash
# The README's main command: installs the dependencies, builds (Release) kai-scheduler and the tools,
# and runs the embedded walkthrough (kai-demo): an in-process API server with a kubelet stand-in, a
# two-node GPU cluster, kai-scheduler against it, and KAI's GPU-sharing guide step by step.
# Extra arguments go to kai-demo (for example --keep-running).
set -euo pipefail
cd "$(dirname "$0")/.."
./tools/install-deps.sh
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=true
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DKAI_BUILD_TESTS=OFF -DKAI_BUILD_BENCH=OFF >/dev/null
cmake --build build -j2 --target kai-scheduler kai-demo kai-log kai-sim
./build/tools/kai-demo/kai-demo "$@"
