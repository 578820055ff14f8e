#!/bin/sh
# kai-sim --usage: each queue's historical usage, given as input, moves fair share (time-based fair
# share, docs/time-based-fair-share.md). KAI's two-queue example at one moment: 16 GPUs, team-a
# running a 16-GPU pod, team-b waiting with one. With team-a's usage at 1 team-b reclaims the
# cluster; without usage it waits; a malformed usage file exits 2 naming the field.
# Usage: usage_input_test.sh KAI_SIM_BINARY
set -u
sim=$1
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
queue() {
  printf '{"apiVersion":"scheduling.run.ai/v2","kind":"Queue","metadata":{"name":"%s"},"spec":{"resources":{"gpu":{"quota":0,"limit":-1,"overQuotaWeight":1},"cpu":{"quota":-1,"limit":-1,"overQuotaWeight":1},"memory":{"quota":-1,"limit":-1,"overQuotaWeight":1}}}}' "$1"
}
pod() {
  node=""
  phase=Pending
  if [ -n "$3" ]; then node=",\"nodeName\":\"$3\""; phase=Running; fi
  printf '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"%s","namespace":"ns","uid":"u-%s","labels":{"kai.scheduler/queue":"%s"}},"spec":{"schedulerName":"kai-scheduler"%s,"containers":[{"name":"main","resources":{"limits":{"nvidia.com/gpu":"16"}}}]},"status":{"phase":"%s"}}' "$1" "$1" "$2" "$node" "$phase"
}
{
  printf '{"apiVersion":"v1","kind":"List","items":['
  printf '{"apiVersion":"v1","kind":"Node","metadata":{"name":"n1"},"status":{"allocatable":{"cpu":"64","memory":"512Gi","pods":"110","nvidia.com/gpu":"16"},"conditions":[{"type":"Ready","status":"True"}]}},'
  queue team-a; printf ','; queue team-b; printf ','
  pod a-1 team-a n1; printf ','; pod b-1 team-b ""
  printf ']}'
} >"$dir/cluster.json"
printf 'team-a: {gpu: 1.0}\nteam-b: {nvidia.com/gpu: 0}\n' >"$dir/usage.yaml"

"$sim" --snapshot "$dir/cluster.json" --now 2027-01-15T09:00:00Z >"$dir/plain.json" 2>"$dir/err" || {
  echo "kai-sim without --usage failed"; cat "$dir/err"; exit 1; }
squash() { tr -d ' \n' <"$1"; }  # the JSON is indented
if squash "$dir/plain.json" | grep -q '"kind":"evict"'; then
  echo "without usage nothing should be reclaimed:"; cat "$dir/plain.json"; exit 1
fi
"$sim" --snapshot "$dir/cluster.json" --now 2027-01-15T09:00:00Z --usage "$dir/usage.yaml" >"$dir/usage.json" 2>"$dir/err" || {
  echo "kai-sim --usage failed"; cat "$dir/err"; exit 1; }
squash "$dir/usage.json" | grep -q '"kind":"evict","pod":"ns/a-1"' || { echo "team-a's pod should be reclaimed:"; cat "$dir/usage.json"; exit 1; }
squash "$dir/usage.json" | grep -q '"usage":{"gpu":1.0' || { echo "the queues should show their usage:"; cat "$dir/usage.json"; exit 1; }

printf 'team-a: {gpus: 1}\n' >"$dir/bad.yaml"
"$sim" --snapshot "$dir/cluster.json" --usage "$dir/bad.yaml" >"$dir/out" 2>"$dir/err"
rc=$?
if [ "$rc" -ne 2 ] || ! grep -q "team-a.gpus: not gpu, cpu or memory" "$dir/err"; then
  echo "a bad usage file: exit $rc, stderr:"; cat "$dir/err"; exit 1
fi
echo "ok"
