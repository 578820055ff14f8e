#!/usr/bin/env bash
# Installs every build and test dependency from Debian bookworm's packages. Idempotent; run as root
# (or with sudo available). Used by the README's two commands, by .ci/run and by the Dockerfile.
#   tools/install-deps.sh [--with-lint]   --with-lint adds clang-tidy (CI's lint phase)
set -euo pipefail

packages=(
  g++ cmake ninja-build ccache make pkg-config git ca-certificates
  nlohmann-json3-dev libyaml-cpp-dev libcli11-dev libspdlog-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libcaf-dev libboost1.81-dev librocksdb-dev libssl-dev prometheus-cpp-dev libsimdjson-dev
)
[ "${1:-}" = --with-lint ] && packages+=(clang-tidy)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages already installed"
  exit 0
fi

as_root=()
[ "$(id -u)" -eq 0 ] || as_root=(sudo)
echo "install-deps: installing ${missing[*]}"
"${as_root[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
