#!/bin/sh
# kai-sim --what-if through the real binary (docs/what-if.md): on the demo cluster with team-b
# holding gpu-node-1 until its deadline, a 2-GPU pod fits now on gpu-node-2 (text by default, the
# same facts with --format json, the same bytes twice); bad workload files exit 2 naming the file
# and the object, and print no answer.
# Usage: what_if_cli_test.sh KAI_SIM_BINARY KAI_DEMO_CLUSTER_YAML
set -u
sim=$1
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
{
  cat "$2"
  printf -- '---\napiVersion: v1\nkind: Pod\nmetadata: {name: b-1, namespace: team-b, uid: u-b-1, labels: {kai.scheduler/queue: team-b}, creationTimestamp: "2027-01-15T08:00:00Z"}\n'
  printf 'spec: {schedulerName: kai-scheduler, nodeName: gpu-node-1, activeDeadlineSeconds: 3600, containers: [{name: main, resources: {limits: {nvidia.com/gpu: "4"}}}]}\n'
  printf 'status: {phase: Running, startTime: "2027-01-15T08:00:00Z"}\n'
} >"$dir/cluster.yaml"
now=2027-01-15T09:00:00Z
printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: train, labels: {kai.scheduler/queue: test}}\nspec: {containers: [{name: main, resources: {limits: {nvidia.com/gpu: "2"}}}]}\n' >"$dir/fit.yaml"

"$sim" --snapshot "$dir/cluster.yaml" --now $now --what-if "$dir/fit.yaml" >"$dir/out" 2>"$dir/err" || {
  echo "--what-if failed"; cat "$dir/err"; exit 1; }
grep -qx "  default/train -> gpu-node-2 (bind)" "$dir/out" || { echo "want train on gpu-node-2:"; cat "$dir/out"; exit 1; }
"$sim" --snapshot "$dir/cluster.yaml" --now $now --what-if "$dir/fit.yaml" --format json >"$dir/a.json" 2>"$dir/err" || {
  echo "--what-if --format json failed"; cat "$dir/err"; exit 1; }
"$sim" --snapshot "$dir/cluster.yaml" --now $now --what-if "$dir/fit.yaml" --format json >"$dir/b.json" 2>&1
tr -d ' \n' <"$dir/a.json" | grep -q '"fitsNow":true,"current":{"at":"2027-01-15T09:00:00Z","fits":true,"placements":\[{"pod":"default/train","node":"gpu-node-2","kind":"bind"' ||
  { echo "the JSON answer:"; cat "$dir/a.json"; exit 1; }
cmp -s "$dir/a.json" "$dir/b.json" || { echo "two runs differ"; diff "$dir/a.json" "$dir/b.json"; exit 1; }

# Each bad workload: its file, then the message expected on stderr after "<file>: ".
refused() {
  printf '%b' "$2" >"$dir/$1.yaml"
  "$sim" --snapshot "$dir/cluster.yaml" --now $now --what-if "$dir/$1.yaml" >"$dir/out" 2>"$dir/err"
  rc=$?
  if [ "$rc" -ne 2 ]; then echo "$1: exit $rc, want 2"; cat "$dir/out" "$dir/err"; exit 1; fi
  if ! grep -qF "$dir/$1.yaml: $3" "$dir/err"; then echo "$1: stderr:"; cat "$dir/err"; echo "want: $3"; exit 1; fi
  if [ -s "$dir/out" ]; then echo "$1 printed an answer:"; cat "$dir/out"; exit 1; fi
}
refused malformed 'kind: Pod\nmetadata: {name: [unclosed\n' ''
refused deployment 'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n' 'Deployment web: not a Pod or PodGroup'
refused nopods 'apiVersion: scheduling.run.ai/v2alpha2\nkind: PodGroup\nmetadata: {name: pg}\nspec: {minMember: 1}\n' 'no pods'
refused bound 'apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec: {nodeName: gpu-node-1, containers: []}\n' 'Pod default/x: already bound to node gpu-node-1'
refused exists 'apiVersion: v1\nkind: Pod\nmetadata: {name: b-1, namespace: team-b}\nspec: {containers: []}\n' 'Pod team-b/b-1: already exists in the cluster'
refused empty '' 'empty'
"$sim" --snapshot "$dir/cluster.yaml" --what-if "$dir/missing.yaml" >"$dir/out" 2>"$dir/err"
rc=$?
if [ "$rc" -ne 2 ] || ! grep -qF "$dir/missing.yaml: cannot be read" "$dir/err"; then
  echo "a missing workload file: exit $rc"; cat "$dir/err"; exit 1
fi
echo "ok"
