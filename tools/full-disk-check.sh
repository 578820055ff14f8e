#!/bin/bash
# A real full disk under kai-scheduler (docs/degraded-modes.md): a 96 MiB tmpfs holds the event log;
# the free-space floor is off (--min-free-disk 0) so that RocksDB itself meets ENOSPC. Needs root (it
# mounts the tmpfs) and built binaries: tools/full-disk-check.sh [BUILD_DIR]
set -u
SRC=$(cd "$(dirname "$0")/.." && pwd)
B=$(cd "${1:-$SRC/build}" && pwd)
D=$(mktemp -d)
SMALL=$D/small
mkdir -p $SMALL $D/api
mount -t tmpfs -o size=96m tmpfs $SMALL || { echo "cannot mount a tmpfs (root needed)"; exit 2; }
trap 'umount $SMALL; rm -rf $D' EXIT
# ballast: the log starts with little room, so that RocksDB meets ENOSPC; removed with the fill later
dd if=/dev/zero of=$SMALL/ballast bs=1M count=80 2>/dev/null
export ASAN_OPTIONS=detect_leaks=0:handle_abort=1  # when BUILD_DIR is a sanitizer build
$B/tools/kai-apiserver/kai-apiserver --data-dir $D/api --crd-dir $SRC/deploy/crds --kubelet --https-port 0 --http-port 0 > $D/api.log 2>&1 &
API=$!
for i in $(seq 50); do [ -f $D/api/kubeconfig ] && break; sleep 0.2; done
export KUBECONFIG=$D/api/kubeconfig
until kubectl get ns >/dev/null 2>&1; do sleep 0.2; done; printf "apiVersion: v1\nkind: Namespace\nmetadata: {name: team-a}\n" | kubectl create -f - >/dev/null
for n in 0 1 2 3; do
cat <<Y | kubectl create -f - >/dev/null
apiVersion: v1
kind: Node
metadata: {name: n$n}
status:
  allocatable: {cpu: "64", memory: 256Gi, pods: "500", nvidia.com/gpu: "8"}
  capacity: {cpu: "64", memory: 256Gi, pods: "500", nvidia.com/gpu: "8"}
  conditions: [{type: Ready, status: "True"}]
Y
done
cat <<Y | kubectl create -f - >/dev/null
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: default}
spec: {resources: {gpu: {quota: -1, limit: -1, overQuotaWeight: 1}, cpu: {quota: -1, limit: -1, overQuotaWeight: 1}, memory: {quota: -1, limit: -1, overQuotaWeight: 1}}}
---
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: test}
spec: {parentQueue: default, resources: {gpu: {quota: -1, limit: -1, overQuotaWeight: 1}, cpu: {quota: -1, limit: -1, overQuotaWeight: 1}, memory: {quota: -1, limit: -1, overQuotaWeight: 1}}}
Y
pods() { # $1 prefix $2 count
  for i in $(seq $2); do cat <<Y
apiVersion: v1
kind: Pod
metadata: {name: $1-$i, namespace: team-a, labels: {kai.scheduler/queue: test}, annotations: {padding: "$(head -c 3000 /dev/zero | tr '\0' x)"}}
spec: {schedulerName: kai-scheduler, containers: [{name: main, image: busybox, resources: {requests: {cpu: 10m}}}]}
---
Y
  done | kubectl create -f - >/dev/null
}
$B/tools/kai-scheduler/kai-scheduler --kubeconfig $KUBECONFIG --log-dir $SMALL/log --listen-address 127.0.0.1:18080 --min-free-disk 0 --schedule-period 100ms > $D/sched.log 2>&1 &
S=$!
sleep 3
pods a 50
sleep 2
echo "bound before the disk filled: $(kubectl get pods -n team-a -o json | grep -c '"nodeName"')"
dd if=/dev/zero of=$SMALL/fill bs=64k 2>/dev/null; df -h $SMALL | tail -1
pods b 300   # watch events the log cannot hold
sleep 8
if kill -0 $S 2>/dev/null; then echo "scheduler alive on a full disk"; else wait $S; echo "scheduler DIED: exit $?"; fi
curl -s -o /dev/null -w "readyz %{http_code}\n" http://127.0.0.1:18080/readyz; curl -s http://127.0.0.1:18080/readyz
rm -f $SMALL/fill $SMALL/ballast; df -h $SMALL | tail -1
sleep 20
if kill -0 $S 2>/dev/null; then echo "scheduler alive after space returned"; else echo "scheduler gone"; fi
curl -s http://127.0.0.1:18080/readyz
echo "bound at the end: $(kubectl get pods -n team-a -o json | grep -c '"nodeName"') of 350"
kill $S; wait $S; echo "scheduler exit $?"
$B/tools/kai-log/kai-log --log-dir $SMALL/log verify 2>&1 | tail -2
$B/tools/kai-log/kai-log --log-dir $SMALL/log replay 2>&1 | tail -1
kill $API
grep -iE "abort|assert|disk full|no space|critical" $D/sched.log | head -8
