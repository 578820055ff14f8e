from lib import *

def leaf(gq, gl=-1, goqw=1, **kw):
    d = {"gpu": res(gq, goqw, gl)}
    d.update(kw)
    return d

# ---------------- queues ----------------
scenario("queues/interleave-equal-quota.yaml",
 """Two leaf queues under one parent, GPU quota 1 each, 2 GPUs, two 1-GPU jobs per queue.
 team-a (older queue) goes first; then team-a is no longer below its quota while team-b is
 ("starved" first), so team-b's oldest job goes next. Result: one job per queue.""",
 std_queues(("team-a", leaf(1)), ("team-b", leaf(1))) +
 [node("node-1", gpus=2),
  podgroup("pg-a1", "team-a", 1, t=0), podgroup("pg-a2", "team-a", 1, t=1),
  podgroup("pg-b1", "team-b", 1, t=2), podgroup("pg-b2", "team-b", 1, t=3),
  pod("a1-0", "pg-a1", gpu=1, t=0), pod("a2-0", "pg-a2", gpu=1, t=1),
  pod("b1-0", "pg-b1", gpu=1, t=2), pod("b2-0", "pg-b2", gpu=1, t=3)],
 pods={P("a1-0"): B("node-1"), P("b1-0"): B("node-1"), P("a2-0"): PEND, P("b2-0"): PEND},
 decisions=2)

scenario("queues/interleave-over-quota.yaml",
 """Two leaf queues with GPU quota 0 and overQuotaWeight 1 (fair share 2 GPUs each of 4), three
 1-GPU jobs each. Queue order alternates by smaller dominant share with the job added (ties ->
 older queue): a1, b1, a2, b2. The 4 GPUs are then used, so a3 and b3 stay Pending.""",
 std_queues(("team-a", leaf(0)), ("team-b", leaf(0))) +
 [node("node-1", gpus=4)] +
 [podgroup("pg-a%d" % i, "team-a", 1, t=i) for i in (1, 2, 3)] +
 [podgroup("pg-b%d" % i, "team-b", 1, t=10 + i) for i in (1, 2, 3)] +
 [pod("a%d-0" % i, "pg-a%d" % i, gpu=1, t=i) for i in (1, 2, 3)] +
 [pod("b%d-0" % i, "pg-b%d" % i, gpu=1, t=10 + i) for i in (1, 2, 3)],
 pods={P("a1-0"): B("node-1"), P("a2-0"): B("node-1"), P("a3-0"): PEND,
       P("b1-0"): B("node-1"), P("b2-0"): B("node-1"), P("b3-0"): PEND},
 decisions=4)

scenario("queues/older-queue-first-on-tie.yaml",
 """Two identical leaf queues (quota 1 each) each with one 1-GPU job and a single GPU. Every queue
 order rule ties, so the queue with the older creationTimestamp (team-b) wins, even though its
 job is newer and its name sorts later.""",
 std_queues(("team-a", dict(leaf(1), t=-50)), ("team-b", dict(leaf(1), t=-80))) +
 [node("node-1", gpus=1),
  podgroup("pg-a", "team-a", 1, t=0), podgroup("pg-b", "team-b", 1, t=10),
  pod("a-0", "pg-a", gpu=1, t=0), pod("b-0", "pg-b", gpu=1, t=10)],
 pods={P("a-0"): PEND, P("b-0"): B("node-1")}, decisions=1)

scenario("queues/higher-queue-priority-first.yaml",
 """Two leaf queues, both below quota, one GPU. team-b has queue priority 200 vs 100 for team-a
 (older), so team-b's job is taken first.""",
 std_queues(("team-a", leaf(1, priority=100)), ("team-b", leaf(1, priority=200))) +
 [node("node-1", gpus=1),
  podgroup("pg-a", "team-a", 1, t=0), podgroup("pg-b", "team-b", 1, t=10),
  pod("a-0", "pg-a", gpu=1, t=0), pod("b-0", "pg-b", gpu=1, t=10)],
 pods={P("a-0"): PEND, P("b-0"): B("node-1")}, decisions=1)

scenario("queues/starved-queue-first.yaml",
 """team-a (older) has GPU quota 0, team-b quota 1, one GPU. team-b's job keeps it within its
 deserved quota ("starved") while team-a's would not, so team-b goes first and takes the GPU.""",
 std_queues(("team-a", leaf(0)), ("team-b", leaf(1))) +
 [node("node-1", gpus=1),
  podgroup("pg-a", "team-a", 1, t=0), podgroup("pg-b", "team-b", 1, t=10),
  pod("a-0", "pg-a", gpu=1, t=0), pod("b-0", "pg-b", gpu=1, t=10)],
 pods={P("a-0"): PEND, P("b-0"): B("node-1")}, decisions=1)

scenario("queues/over-limit-gang.yaml",
 """team-a has GPU limit 2. A gang of 3 one-GPU pods would need 3 > 2 and fails the capacity check
 (OverLimit) although the node has 4 free GPUs; a later 1-GPU job in the same queue fits the limit.""",
 std_queues(("team-a", leaf(-1, gl=2))) +
 [node("node-1", gpus=4), podgroup("pg-big", "team-a", 3, t=0),
  podgroup("pg-small", "team-a", 1, t=10)] +
 [pod("big-%d" % i, "pg-big", gpu=1, t=i) for i in range(3)] + [pod("small-0", "pg-small", gpu=1, t=10)],
 pods={P("big-0"): PEND, P("big-1"): PEND, P("big-2"): PEND, P("small-0"): B("node-1")},
 podgroups={P("pg-big"): {"unschedulable": True, "reason": "OverLimit"}, P("pg-small"): OK},
 decisions=1)

scenario("queues/over-limit-with-running.yaml",
 """team-a has GPU limit 2 and already runs a 1-GPU pod. A new gang of 2 one-GPU pods would bring
 the queue to 3 > 2: OverLimit, nothing placed.""",
 std_queues(("team-a", leaf(-1, gl=2))) +
 [node("node-1", gpus=4), podgroup("pg-run", "team-a", 1, t=-60),
  running("run-0", "node-1", pg="pg-run", gpu=1, t=-60), podgroup("pg-new", "team-a", 2, t=0)] +
 [pod("new-%d" % i, "pg-new", gpu=1, t=i) for i in range(2)],
 pods={P("run-0"): RUN, P("new-0"): PEND, P("new-1"): PEND},
 podgroups={P("pg-new"): {"unschedulable": True, "reason": "OverLimit"}}, decisions=0)

scenario("queues/parent-queue-limit.yaml",
 """The leaf queue is unlimited but its parent has GPU limit 2. The capacity check walks leaf to
 root, so a gang of 3 one-GPU pods is OverLimit; a 2-GPU job afterwards fits.""",
 [queue("dept", gpu=res(-1, 1, 2), t=-100), queue("team-a", parent="dept", t=-90),
  node("node-1", gpus=4), podgroup("pg-big", "team-a", 3, t=0), podgroup("pg-two", "team-a", 2, t=10)] +
 [pod("big-%d" % i, "pg-big", gpu=1, t=i) for i in range(3)] +
 [pod("two-%d" % i, "pg-two", gpu=1, t=10 + i) for i in range(2)],
 pods={P("big-0"): PEND, P("big-1"): PEND, P("big-2"): PEND,
       P("two-0"): B("node-1"), P("two-1"): B("node-1")},
 podgroups={P("pg-big"): {"unschedulable": True, "reason": "OverLimit"}}, decisions=2)

scenario("queues/cpu-limit-millicores.yaml",
 """Queue CPU limit is in millicores: limit 2000 = 2 cores. A pod asking 3 CPUs is OverLimit; a pod
 asking 1 CPU fits.""",
 std_queues(("team-a", {"cpu": res(-1, 1, 2000)})) +
 [node("node-1", cpu="16"), podgroup("pg-big", "team-a", 1, t=0), podgroup("pg-small", "team-a", 1, t=10),
  pod("big-0", "pg-big", cpu="3", t=0), pod("small-0", "pg-small", cpu="1", t=10)],
 pods={P("big-0"): PEND, P("small-0"): B("node-1")},
 podgroups={P("pg-big"): {"unschedulable": True, "reason": "OverLimit"}}, decisions=1)

NP = [prioclass("inference", 125)]
scenario("queues/non-preemptible-over-quota.yaml",
 """A PodGroup with PriorityClass inference (125, so non-preemptible) asks 2 GPUs in a queue with
 GPU quota 1: NonPreemptibleOverQuota. A preemptible job (default priority 50) in the same queue may
 go over quota in allocate and gets its 2 GPUs.""",
 std_queues(("team-a", leaf(1))) + NP +
 [node("node-1", gpus=4), podgroup("pg-serve", "team-a", 2, prio="inference", t=0),
  podgroup("pg-train", "team-a", 2, t=10)] +
 [pod("serve-%d" % i, "pg-serve", gpu=1, t=i) for i in range(2)] +
 [pod("train-%d" % i, "pg-train", gpu=1, t=10 + i) for i in range(2)],
 pods={P("serve-0"): PEND, P("serve-1"): PEND, P("train-0"): B("node-1"), P("train-1"): B("node-1")},
 podgroups={P("pg-serve"): {"unschedulable": True, "reason": "NonPreemptibleOverQuota"}},
 decisions=2)

pg_np = podgroup("pg-np", "team-a", 2, t=0)
pg_np["spec"]["preemptibility"] = "non-preemptible"
scenario("queues/non-preemptible-by-field-over-quota.yaml",
 """spec.preemptibility non-preemptible makes a default-priority job non-preemptible; asking 2 GPUs
 with GPU quota 1 fails with NonPreemptibleOverQuota. A 1-GPU non-preemptible job fits its quota.""",
 std_queues(("team-a", leaf(1))) +
 [node("node-1", gpus=4), pg_np,
  dict(podgroup("pg-np-small", "team-a", 1, t=10), spec={"minMember": 1, "queue": "team-a",
       "preemptibility": "non-preemptible"})] +
 [pod("np-%d" % i, "pg-np", gpu=1, t=i) for i in range(2)] + [pod("np-small-0", "pg-np-small", gpu=1, t=10)],
 pods={P("np-0"): PEND, P("np-1"): PEND, P("np-small-0"): B("node-1")},
 podgroups={P("pg-np"): {"unschedulable": True, "reason": "NonPreemptibleOverQuota"}},
 decisions=1)

scenario("queues/missing-queue.yaml",
 """A PodGroup names a queue that does not exist: it is dropped from scheduling with reason
 QueueDoesNotExist; a job in an existing queue is unaffected.""",
 std_queues("team-a") +
 [node("node-1", gpus=2), podgroup("pg-lost", "no-such-queue", 1, t=0), podgroup("pg-ok", "team-a", 1, t=10),
  pod("lost-0", "pg-lost", gpu=1, t=0), pod("ok-0", "pg-ok", gpu=1, t=10)],
 pods={P("lost-0"): PEND, P("ok-0"): B("node-1")},
 podgroups={P("pg-lost"): {"unschedulable": True, "reason": "QueueDoesNotExist",
                           "messageContains": "does not exist"}, P("pg-ok"): OK},
 decisions=1)

scenario("queues/orphan-queue-dropped.yaml",
 """Leaf queue team-x names a parent that does not exist, so it is dropped with its subtree and its
 job is never scheduled; the job in the healthy queue team-a is allocated.""",
 std_queues("team-a") + [queue("team-x", parent="no-such-parent", t=-80)] +
 [node("node-1", gpus=2), podgroup("pg-x", "team-x", 1, t=0), podgroup("pg-a", "team-a", 1, t=10),
  pod("x-0", "pg-x", gpu=1, t=0), pod("a-0", "pg-a", gpu=1, t=10)],
 pods={P("x-0"): PEND, P("a-0"): B("node-1")}, decisions=1)

scenario("queues/job-in-parent-queue-not-scheduled.yaml",
 """Only leaf queues get jobs: a PodGroup whose queue is the parent queue dept is not scheduled,
 while a job in the leaf queue is.""",
 std_queues("team-a") +
 [node("node-1", gpus=2), podgroup("pg-p", "dept", 1, t=0), podgroup("pg-a", "team-a", 1, t=10),
  pod("p-0", "pg-p", gpu=1, t=0), pod("a-0", "pg-a", gpu=1, t=10)],
 pods={P("p-0"): PEND, P("a-0"): B("node-1")}, decisions=1)

# ---------------- placement ----------------
Q = std_queues("team-a")
scenario("placement/binpack-gpu-fuller-node.yaml",
 """Default GPU binpack: node-b has 2 of 4 GPUs used by a running pod, node-a is empty. The 1-GPU
 pod goes to the node with the fewest free GPUs that still fits (node-b), not to the first name.""",
 Q + [node("node-a", gpus=4), node("node-b", gpus=4), podgroup("pg-run", "team-a", 1, t=-60),
      running("run-0", "node-b", pg="pg-run", gpu=2, t=-60),
      podgroup("pg-new", "team-a", 1), pod("new-0", "pg-new", gpu=1)],
 pods={P("new-0"): B("node-b"), P("run-0"): RUN}, decisions=1)

scenario("placement/binpack-skips-node-that-does-not-fit.yaml",
 """Binpack prefers the fullest node only among nodes that fit: node-a has 1 free GPU, node-b 2,
 node-c 4. A 2-GPU pod goes to node-b.""",
 Q + [node("node-a", gpus=4), node("node-b", gpus=4), node("node-c", gpus=4),
      podgroup("pg-run", "team-a", 2, t=-60),
      running("run-0", "node-a", pg="pg-run", gpu=3, t=-60),
      running("run-1", "node-b", pg="pg-run", gpu=2, t=-60),
      podgroup("pg-new", "team-a", 1), pod("new-0", "pg-new", gpu=2)],
 pods={P("new-0"): B("node-b")}, decisions=1)

scenario("placement/tie-by-node-name.yaml",
 """Two identical empty GPU nodes give equal scores; ties are broken by node name ascending, so the
 pod goes to node-a although node-b is listed first.""",
 Q + [node("node-b", gpus=2), node("node-a", gpus=2),
      podgroup("pg-new", "team-a", 1), pod("new-0", "pg-new", gpu=1)],
 pods={P("new-0"): B("node-a")}, decisions=1)

scenario("placement/spread-gpu-emptiest-node.yaml",
 """Config sets nodeplacement gpu: spread. node-a has 2 of 4 GPUs used, node-b is empty; spread
 scores free/count, so the pod goes to node-b (binpack and name order would both pick node-a).""",
 Q + [node("node-a", gpus=4), node("node-b", gpus=4), podgroup("pg-run", "team-a", 1, t=-60),
      running("run-0", "node-a", pg="pg-run", gpu=2, t=-60),
      podgroup("pg-new", "team-a", 1), pod("new-0", "pg-new", gpu=1)],
 pods={P("new-0"): B("node-b")}, decisions=1,
 config=default_plugins(gpu="spread", cpu="binpack"))

scenario("placement/spread-gang-alternates-nodes.yaml",
 """With gpu: spread, a gang of 2 one-GPU pods on two empty 2-GPU nodes: the first pod takes node-a
 (tie, name order), the second goes to node-b which then has more free GPUs.""",
 Q + [node("node-a", gpus=2), node("node-b", gpus=2), podgroup("pg-new", "team-a", 2),
      pod("new-0", "pg-new", gpu=1, t=0), pod("new-1", "pg-new", gpu=1, t=1)],
 pods={P("new-0"): B("node-a"), P("new-1"): B("node-b")}, decisions=2,
 config=default_plugins(gpu="spread", cpu="binpack"))

scenario("placement/binpack-cpu-only.yaml",
 """CPU-only pod on CPU-only nodes: binpack uses CPU. node-b has 6 of 8 cores used, node-a is idle;
 the 1-CPU pod goes to node-b.""",
 Q + [node("node-a", cpu="8"), node("node-b", cpu="8"), podgroup("pg-run", "team-a", 1, t=-60),
      running("run-0", "node-b", pg="pg-run", cpu="6", t=-60),
      podgroup("pg-new", "team-a", 1), pod("new-0", "pg-new", cpu="1")],
 pods={P("new-0"): B("node-b")}, decisions=1)

scenario("placement/spread-cpu-only.yaml",
 """Config sets nodeplacement cpu: spread. node-a has 6 of 8 cores used, node-b is idle; the 1-CPU
 pod goes to node-b.""",
 Q + [node("node-a", cpu="8"), node("node-b", cpu="8"), podgroup("pg-run", "team-a", 1, t=-60),
      running("run-0", "node-a", pg="pg-run", cpu="6", t=-60),
      podgroup("pg-new", "team-a", 1), pod("new-0", "pg-new", cpu="1")],
 pods={P("new-0"): B("node-b")}, decisions=1,
 config=default_plugins(gpu="binpack", cpu="spread"))

scenario("placement/cpu-pod-prefers-cpu-only-node.yaml",
 """A CPU-only pod: node-gpu (GPU node, 2 of 8 cores free) wins binpack (9 points) but node-cpu (no
 GPUs, all cores free) gets the resourcetype bonus (10 points) for a CPU-only task on a CPU-only
 node, so the pod lands on node-cpu.""",
 Q + [node("node-cpu", cpu="8"), node("node-gpu", gpus=2, cpu="8"), podgroup("pg-run", "team-a", 1, t=-60),
      running("run-0", "node-gpu", pg="pg-run", cpu="6", t=-60),
      podgroup("pg-new", "team-a", 1), pod("new-0", "pg-new", cpu="1")],
 pods={P("new-0"): B("node-cpu")}, decisions=1)

scenario("placement/other-scheduler-pods-consume-capacity.yaml",
 """A Running pod of default-scheduler holds 1 of the 2 GPUs of node-1. A kai gang needing 2 GPUs
 cannot fit; a later 1-GPU kai job takes the remaining GPU.""",
 Q + [node("node-1", gpus=2),
      running("foreign-0", "node-1", gpu=1, scheduler="default-scheduler", t=-60, ns="other"),
      podgroup("pg-two", "team-a", 2, t=0), podgroup("pg-one", "team-a", 1, t=10)] +
 [pod("two-%d" % i, "pg-two", gpu=1, t=i) for i in range(2)] + [pod("one-0", "pg-one", gpu=1, t=10)],
 pods={P("two-0"): PEND, P("two-1"): PEND, P("one-0"): B("node-1")},
 podgroups={P("pg-two"): GANG_FAIL}, decisions=1)

scenario("placement/other-scheduler-bound-pending-pod-consumes.yaml",
 """A default-scheduler pod already bound to node-1 (spec.nodeName set) but still in phase Pending
 uses the node's only GPU, so the kai pod cannot be placed.""",
 Q + [node("node-1", gpus=1),
      pod("foreign-0", gpu=1, scheduler="default-scheduler", node_name="node-1", t=-60, ns="other"),
      podgroup("pg-new", "team-a", 1), pod("new-0", "pg-new", gpu=1)],
 pods={P("new-0"): PEND}, decisions=0)

scenario("placement/finished-pods-free-capacity.yaml",
 """Pods that Succeeded or Failed on node-1 (one of another scheduler, one of kai) hold no
 capacity, so the new 2-GPU pod fits the 2-GPU node.""",
 Q + [node("node-1", gpus=2),
      running("done-0", "node-1", gpu=1, scheduler="default-scheduler", phase="Succeeded", t=-60, ns="other"),
      podgroup("pg-old", "team-a", 1, t=-60),
      running("failed-0", "node-1", pg="pg-old", gpu=1, phase="Failed", t=-60),
      podgroup("pg-new", "team-a", 1), pod("new-0", "pg-new", gpu=2)],
 pods={P("new-0"): B("node-1")}, decisions=1)

# ---------------- pipelining ----------------
def releasing(name, node_name, pg, gpu=1, t=-60, **kw):
    return running(name, node_name, pg=pg, gpu=gpu, t=t, deleting=True, **kw)

scenario("pipeline/pipeline-onto-releasing-pod.yaml",
 """node-1's only GPU is held by a Releasing pod (deletionTimestamp set, still Running). The new
 1-GPU pod fits idle+releasing but not idle, so it is Pipelined onto node-1.""",
 Q + [node("node-1", gpus=1), podgroup("pg-old", "team-a", 1, t=-60),
      releasing("old-0", "node-1", "pg-old"),
      podgroup("pg-new", "team-a", 1), pod("new-0", "pg-new", gpu=1)],
 pods={P("new-0"): PIPE("node-1"), P("old-0"): {"status": "Releasing"}}, decisions=1)

scenario("pipeline/gang-waits-together.yaml",
 """node-1 has 2 GPUs: one idle, one held by a Releasing pod. A gang of 2: the first pod fits idle
 (allocated), the second only releasing (pipelined). Because the gang is not satisfied by
 allocated pods alone, the allocated pod is converted to Pipelined too: the whole gang waits.""",
 Q + [node("node-1", gpus=2), podgroup("pg-old", "team-a", 1, t=-60),
      releasing("old-0", "node-1", "pg-old"),
      podgroup("pg-new", "team-a", 2)] +
 [pod("new-%d" % i, "pg-new", gpu=1, t=i) for i in range(2)],
 pods={P("new-0"): PIPE("node-1"), P("new-1"): PIPE("node-1")}, decisions=2)

scenario("pipeline/elastic-extra-pod-pipelined-alone.yaml",
 """Elastic job (minMember 1, 2 pods) on a node with one idle GPU and one releasing GPU. The first
 attempt allocates train-0 on the idle GPU (Binding); the growth attempt can only pipeline train-1.
 The job is already at minMember, so train-0 stays Binding and only train-1 is Pipelined.""",
 Q + [node("node-1", gpus=2), podgroup("pg-old", "team-a", 1, t=-60),
      releasing("old-0", "node-1", "pg-old"),
      podgroup("pg-train", "team-a", 1)] +
 [pod("train-%d" % i, "pg-train", gpu=1, t=i) for i in range(2)],
 pods={P("train-0"): B("node-1"), P("train-1"): PIPE("node-1")}, decisions=2)

scenario("pipeline/idle-node-preferred-over-releasing.yaml",
 """node-a's GPU is releasing, node-b's GPU is idle. Both tie on binpack (1 non-allocated GPU
 each) but nodeavailability adds points for the node where the pod fits idle resources, so the
 pod is allocated (Binding) on node-b rather than pipelined on node-a.""",
 Q + [node("node-a", gpus=1), node("node-b", gpus=1), podgroup("pg-old", "team-a", 1, t=-60),
      releasing("old-0", "node-a", "pg-old"),
      podgroup("pg-new", "team-a", 1), pod("new-0", "pg-new", gpu=1)],
 pods={P("new-0"): B("node-b")}, decisions=1)

scenario("pipeline/not-enough-even-with-releasing.yaml",
 """node-1 has 2 GPUs: one used by a Running pod, one by a Releasing pod. A 2-GPU pod does not fit
 idle+releasing (1 GPU), so it stays Pending.""",
 Q + [node("node-1", gpus=2), podgroup("pg-old", "team-a", 1, t=-60),
      releasing("old-0", "node-1", "pg-old"),
      podgroup("pg-run", "team-a", 1, t=-60), running("run-0", "node-1", pg="pg-run", gpu=1, t=-60),
      podgroup("pg-new", "team-a", 1), pod("new-0", "pg-new", gpu=2)],
 pods={P("new-0"): PEND, P("run-0"): RUN}, decisions=0)

br = {"apiVersion": "scheduling.run.ai/v1alpha2", "kind": "BindRequest",
      "metadata": {"name": "first-0", "namespace": NS, "labels": {"selected-node": "node-1"}},
      "spec": {"podName": "first-0", "selectedNode": "node-1", "receivedResourceType": "Regular",
               "receivedGPU": {"count": 1, "portion": "1.00"}},
      "status": {"phase": "Pending"}}
scenario("pipeline/existing-bindrequest-holds-capacity.yaml",
 """first-0 has a (non-failed) BindRequest for node-1, so it counts as Binding there and holds the
 only GPU; the newer pod cannot be placed. No new decision is made for first-0.""",
 Q + [node("node-1", gpus=1), podgroup("pg-first", "team-a", 1, t=-10),
      pod("first-0", "pg-first", gpu=1, t=-10), br,
      podgroup("pg-second", "team-a", 1, t=0), pod("second-0", "pg-second", gpu=1, t=0)],
 pods={P("first-0"): B("node-1"), P("second-0"): PEND}, decisions=0)
