#!/usr/bin/env bash
# The README's main command: installs the dependencies, builds (Release) and runs kai-sim on the shipped
# example cluster. Later issues replace the simulation with the embedded end-to-end demo.
set -euo pipefail
cd "$(dirname "$0")/.."
./tools/install-deps.sh
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=true
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DKAI_BUILD_TESTS=OFF -DKAI_BUILD_BENCH=OFF >/dev/null
cmake --build build -j2 --target kai-sim
./build/tools/kai-sim/kai-sim --snapshot deploy/examples/gpu-cluster.yaml --now 2026-01-01T01:00:00Z \
  --format table
