#!/usr/bin/env bash
# Runs clang-tidy with the repository's .clang-tidy over the project's non-test sources, using
# BUILD_DIR/compile_commands.json (default build-asan; configuring is enough, cmake writes it).
#   tools/clang-tidy.sh [BUILD_DIR] [--with-tests] [-j N] [--changed-since REV]
# --with-tests adds tests/ (sources and headers). -j: parallel clang-tidy processes (default 2).
# --changed-since REV: only the units with an input changed since REV, a commit whose whole tree
# linted clean (tools/lint-changed-units.py; needs the build done, for ninja's dependency log).
# Prints every warning, then the count per check (a header's warning counted once, however many
# translation units include it). Exit 0 when clean, 1 when any check warned (WarningsAsErrors)
# or a file did not compile, 2 when it cannot run.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=build-asan
with_tests=0
jobs=2
since=
while (($#)); do
  case $1 in
    --with-tests) with_tests=1 ;;
    -j) jobs=$2; shift ;;
    -j*) jobs=${1#-j} ;;
    --changed-since) since=$2; shift ;;
    -h | --help) sed -n 2,10p "$0"; exit 0 ;;
    -*) echo "clang-tidy.sh: unknown option $1" >&2; exit 2 ;;
    *) build=$1 ;;
  esac
  shift
done
[[ $build = /* ]] || build=$root/$build
db=$build/compile_commands.json
if [[ ! -f $db ]]; then
  echo "clang-tidy.sh: $db is missing: configure first, e.g." >&2
  echo "  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DKAI_SANITIZE=ON" >&2
  exit 2
fi
runner=$(command -v run-clang-tidy-14 || command -v run-clang-tidy || true)
tidy=$(command -v clang-tidy-14 || command -v clang-tidy || true)
if [[ -z $runner || -z $tidy ]]; then
  echo "clang-tidy.sh: run-clang-tidy / clang-tidy not found (Debian: apt-get install clang-tidy)" >&2
  exit 2
fi

dirs='actors|bench|events|k8s|storage|tools'
((with_tests)) && dirs+='|tests'
root_re=$(printf '%s' "$root" | sed 's/[][\\.*^$+?(){}|]/\\&/g')
out=$(mktemp)
trap 'rm -f "$out"' EXIT

# The units to lint, as run-clang-tidy's regular expressions: every one, or those changed since REV.
units=("^$root_re/($dirs)/.*\.cpp\$")
if [[ -n $since ]]; then
  if ! list=$("$root/tools/lint-changed-units.py" "$build" "$since" "$dirs"); then
    echo "clang-tidy.sh: cannot tell which units changed since $since" >&2
    exit 2
  fi
  if [[ -z $list ]]; then
    echo "clang-tidy.sh: clean (no unit's inputs changed since $since)"
    exit 0
  fi
  mapfile -t changed <<<"$list"
  if [[ ${changed[0]} != ALL ]]; then
    units=()
    for f in "${changed[@]}"; do units+=("^$(printf '%s' "$f" | sed 's/[][\\.*^$+?(){}|]/\\&/g')\$"); done
  fi
fi

set +e
# run-clang-tidy 14 forces --use-color: the colour codes are stripped so that the summary can parse.
# -Wno-unknown-warning-option: the database holds GCC's flags (-Wno-restrict), unknown to clang.
# -Wno-error: the build's -Werror must not turn clang's own compiler warnings into failures here;
# only the checks of .clang-tidy decide.
"$runner" -clang-tidy-binary "$tidy" -p "$build" -j "$jobs" -quiet \
  -header-filter="^$root_re/($dirs)/" \
  -extra-arg=-Wno-unknown-warning-option -extra-arg=-Wno-error \
  "${units[@]}" 2>&1 | sed -u 's/\x1b\[[0-9;]*m//g' | grep -v '^clang-tidy-14 \|^/usr/bin/clang-tidy\|warnings\? generated\.$\|^Suppressed [0-9]* warnings\|^Use -header-filter\|^Running clang-tidy' \
  | tee "$out"
rc=${PIPESTATUS[0]}
set -e

echo "---- warnings per check (distinct file:line:column)"
grep -E '^/.*:[0-9]+:[0-9]+: (warning|error): .*\[[a-z0-9.,-]+\]$' "$out" \
  | sed -E 's/^([^:]+:[0-9]+:[0-9]+): .*\[([a-z0-9.-]+)(,-warnings-as-errors)?\]$/\1 \2/' \
  | sort -u | awk '{print $2}' | sort | uniq -c | sort -rn || true
if ((rc != 0)); then
  echo "clang-tidy.sh: warnings or errors above (exit $rc)" >&2
  exit 1
fi
echo "clang-tidy.sh: clean"
