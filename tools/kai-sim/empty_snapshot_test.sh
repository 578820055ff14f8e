#!/bin/sh
# kai-sim refuses an empty or whitespace-only snapshot file: exit 2 and "<file>: empty" on stderr.
# Usage: empty_snapshot_test.sh KAI_SIM_BINARY
set -u
sim=$1
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
: >"$dir/empty.yaml"
printf '  \n\t\n' >"$dir/blank.yaml"
for f in "$dir/empty.yaml" "$dir/blank.yaml"; do
  "$sim" --snapshot "$f" >"$dir/out" 2>"$dir/err"
  rc=$?
  if [ "$rc" -ne 2 ]; then
    echo "kai-sim --snapshot $f: exit $rc, want 2"; cat "$dir/out" "$dir/err"; exit 1
  fi
  if [ "$(cat "$dir/err")" != "$f: empty" ]; then
    echo "kai-sim --snapshot $f: stderr \"$(cat "$dir/err")\", want \"$f: empty\""; exit 1
  fi
  if [ -s "$dir/out" ]; then
    echo "kai-sim --snapshot $f printed a result:"; cat "$dir/out"; exit 1
  fi
done
echo "ok"
