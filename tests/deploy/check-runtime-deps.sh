#!/usr/bin/env bash
# Checks that the runtime image of deploy/Dockerfile has every shared library the binaries need
# (docs/build-and-ci.md "The runtime image": no container engine here, so the image is checked package by package).
#   check-runtime-deps.sh DOCKERFILE BINARY...
# A library passes when the Debian package that owns it is in the Dockerfile's runtime list, is pulled
# in by one of them, or is in the dependency closure of apt (present in every bookworm-slim image).
set -euo pipefail
dockerfile=$1
shift

listed=$(sed -n '/RUNTIME_PACKAGES/,/END_RUNTIME_PACKAGES/p' "$dockerfile" |
  sed -nE 's/^[[:space:]]+([a-z0-9][a-z0-9.+-]+)[[:space:]]*\\?[[:space:]]*$/\1/p')
if [ -z "$listed" ]; then
  echo "FAIL: no runtime packages found between RUNTIME_PACKAGES and END_RUNTIME_PACKAGES in $dockerfile"
  exit 1
fi

# Dependency closure of the listed packages and of apt, from this machine's package database.
declare -A closure=()
queue=($listed apt)
while [ ${#queue[@]} -gt 0 ]; do
  p=${queue[0]}
  queue=("${queue[@]:1}")
  [ -n "${closure[$p]:-}" ] && continue
  closure[$p]=1
  deps=$(dpkg-query -W -f='${Depends}, ${Pre-Depends}' "$p" 2>/dev/null || true)
  for d in $(echo "$deps" | tr ',|' '\n\n' | sed -E 's/\(.*\)//; s/:any//; s/[[:space:]]//g'); do
    [ -n "$d" ] && [ -z "${closure[$d]:-}" ] && queue+=("$d")
  done
done

owner() {  # the package that owns a library path (usrmerge: try both /lib and /usr/lib spellings)
  local path=$1 alt
  alt=$([[ $path == /usr/* ]] && echo "${path#/usr}" || echo "/usr$path")
  { dpkg -S "$path" 2>/dev/null || dpkg -S "$alt" 2>/dev/null || true; } | head -1 | cut -d: -f1
}

failures=0
for bin in "$@"; do
  if [ ! -x "$bin" ]; then
    echo "FAIL: $bin is not an executable"
    failures=$((failures + 1))
    continue
  fi
  while read -r lib path; do
    # Sanitizer runtimes belong to the test build (ASan + UBSan), never to the image's Release build.
    case $lib in libasan.so* | libubsan.so*) continue ;; esac
    if [ "$path" = "not" ]; then
      echo "FAIL: $bin: $lib is not found on this machine"
      failures=$((failures + 1))
      continue
    fi
    pkg=$(owner "$(realpath "$path")")
    [ -z "$pkg" ] && pkg=$(owner "$path")
    if [ -z "$pkg" ]; then
      echo "FAIL: $bin: no Debian package owns $path"
      failures=$((failures + 1))
    elif [ -z "${closure[$pkg]:-}" ]; then
      echo "FAIL: $bin needs $lib from package $pkg, which the Dockerfile's runtime stage does not install"
      failures=$((failures + 1))
    fi
  done < <(ldd "$bin" | awk '$2 == "=>" { print $1, $3 }')
done
if [ "$failures" -ne 0 ]; then
  echo "$failures missing runtime dependencies"
  exit 1
fi
echo "OK: every shared library of $# binaries is covered by the runtime packages of $dockerfile"
