from lib import *

Q = std_queues("team-a")
FIT_FAIL = {"unschedulable": True, "reason": "PodSchedulingErrors"}

def one(name, t=0, **kw):
    return [podgroup("pg-" + name, "team-a", 1, t=t), pod(name, "pg-" + name, t=t, **kw)]

def taint(effect, key="dedicated", value="infer"):
    return [{"key": key, "value": value, "effect": effect}]

def req_affinity(*exprs):
    return {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": list(exprs)}]}}}}

# ---------------- predicates ----------------
scenario("predicates/taint-noschedule-avoided.yaml",
 """node-a carries a NoSchedule taint the pod does not tolerate; the pod goes to node-b even though
 node-a sorts first.""",
 Q + [node("node-a", gpus=1, taints=taint("NoSchedule")), node("node-b", gpus=1)] + one("p", gpu=1),
 pods={P("p"): B("node-b")}, decisions=1)

scenario("predicates/taint-noexecute-blocks.yaml",
 """The only node carries a NoExecute taint the pod does not tolerate: the pod stays Pending with
 a per-pod fit error.""",
 Q + [node("node-1", gpus=1, taints=taint("NoExecute"))] + one("p", gpu=1),
 pods={P("p"): PEND}, podgroups={P("pg-p"): FIT_FAIL}, decisions=0)

scenario("predicates/taint-tolerated.yaml",
 """The only node has a NoSchedule taint dedicated=infer; the pod tolerates it (Equal, same key,
 value and effect) and is placed.""",
 Q + [node("node-1", gpus=1, taints=taint("NoSchedule"))] +
 one("p", gpu=1, spec_extra={"tolerations": [{"key": "dedicated", "operator": "Equal",
                                               "value": "infer", "effect": "NoSchedule"}]}),
 pods={P("p"): B("node-1")}, decisions=1)

scenario("predicates/toleration-exists-any-effect.yaml",
 """A toleration with operator Exists and no effect tolerates every taint with that key, including
 NoExecute, so the pod is placed on the tainted node.""",
 Q + [node("node-1", gpus=1, taints=taint("NoExecute"))] +
 one("p", gpu=1, spec_extra={"tolerations": [{"key": "dedicated", "operator": "Exists"}]}),
 pods={P("p"): B("node-1")}, decisions=1)

scenario("predicates/taint-prefer-noschedule-does-not-block.yaml",
 """A PreferNoSchedule taint is only a preference and does not block placement.""",
 Q + [node("node-1", gpus=1, taints=taint("PreferNoSchedule"))] + one("p", gpu=1),
 pods={P("p"): B("node-1")}, decisions=1)

scenario("predicates/node-selector.yaml",
 """The pod's nodeSelector pool=blue matches only node-b.""",
 Q + [node("node-a", gpus=1, labels={"pool": "red"}), node("node-b", gpus=1, labels={"pool": "blue"})] +
 one("p", gpu=1, spec_extra={"nodeSelector": {"pool": "blue"}}),
 pods={P("p"): B("node-b")}, decisions=1)

scenario("predicates/node-selector-no-match.yaml",
 """No node carries the label required by the nodeSelector: the pod stays Pending, while a pod
 without selector is placed.""",
 Q + [node("node-a", gpus=2, labels={"pool": "red"})] +
 one("p", gpu=1, spec_extra={"nodeSelector": {"pool": "blue"}}) + one("q", t=5, gpu=1),
 pods={P("p"): PEND, P("q"): B("node-a")}, podgroups={P("pg-p"): FIT_FAIL}, decisions=1)

scenario("predicates/node-affinity-in.yaml",
 """Required node affinity zone In [z2, z3] matches only node-b (zone z2).""",
 Q + [node("node-a", gpus=1, labels={"zone": "z1"}), node("node-b", gpus=1, labels={"zone": "z2"})] +
 one("p", gpu=1, spec_extra=req_affinity({"key": "zone", "operator": "In", "values": ["z2", "z3"]})),
 pods={P("p"): B("node-b")}, decisions=1)

scenario("predicates/node-affinity-notin.yaml",
 """Required node affinity zone NotIn [z1] excludes node-a; the pod goes to node-b.""",
 Q + [node("node-a", gpus=1, labels={"zone": "z1"}), node("node-b", gpus=1, labels={"zone": "z2"})] +
 one("p", gpu=1, spec_extra=req_affinity({"key": "zone", "operator": "NotIn", "values": ["z1"]})),
 pods={P("p"): B("node-b")}, decisions=1)

scenario("predicates/node-affinity-exists.yaml",
 """Required node affinity accelerator Exists: only node-b has that label key.""",
 Q + [node("node-a", gpus=1), node("node-b", gpus=1, labels={"accelerator": "h100"})] +
 one("p", gpu=1, spec_extra=req_affinity({"key": "accelerator", "operator": "Exists"})),
 pods={P("p"): B("node-b")}, decisions=1)

scenario("predicates/node-not-ready.yaml",
 """node-a reports Ready=False and is not a candidate; the pod goes to node-b.""",
 Q + [node("node-a", gpus=1, ready=False), node("node-b", gpus=1)] + one("p", gpu=1),
 pods={P("p"): B("node-b")}, decisions=1)

scenario("predicates/node-cordoned.yaml",
 """node-a is cordoned (spec.unschedulable: true) and gets no new pods; the pod goes to node-b.""",
 Q + [node("node-a", gpus=1, unschedulable=True), node("node-b", gpus=1)] + one("p", gpu=1),
 pods={P("p"): B("node-b")}, decisions=1)

scenario("predicates/pod-count-limit.yaml",
 """node-1 allows 2 pods and already runs 2 pods of another scheduler; although CPU is free, the new
 pod does not fit (pod number exceeded).""",
 Q + [node("node-1", cpu="16", pods="2"),
      running("other-0", "node-1", scheduler="default-scheduler", t=-60, ns="other"),
      running("other-1", "node-1", scheduler="default-scheduler", t=-60, ns="other")] + one("p"),
 pods={P("p"): PEND},
 podgroups={P("pg-p"): {"unschedulable": True, "reason": "PodSchedulingErrors",
                        "messageContains": "pod number exceeded"}}, decisions=0)

scenario("predicates/cpu-insufficient.yaml",
 """node-1 has 4 CPUs: a pod asking 6 CPUs stays Pending; a later pod asking 2 CPUs is placed.""",
 Q + [node("node-1", cpu="4")] + one("big", cpu="6") + one("small", t=5, cpu="2"),
 pods={P("big"): PEND, P("small"): B("node-1")}, podgroups={P("pg-big"): FIT_FAIL}, decisions=1)

scenario("predicates/memory-insufficient.yaml",
 """node-1 has 8Gi memory: a pod asking 16Gi stays Pending; a pod asking 4Gi is placed.""",
 Q + [node("node-1", cpu="8", mem="8Gi")] + one("big", mem="16Gi") + one("small", t=5, mem="4Gi"),
 pods={P("big"): PEND, P("small"): B("node-1")}, podgroups={P("pg-big"): FIT_FAIL}, decisions=1)

scenario("predicates/gpu-insufficient.yaml",
 """A pod asking 4 whole GPUs on a cluster whose largest node has 2 GPUs stays Pending; a 2-GPU pod
 is placed.""",
 Q + [node("node-1", gpus=2)] + one("big", gpu=4) + one("small", t=5, gpu=2),
 pods={P("big"): PEND, P("small"): B("node-1")}, podgroups={P("pg-big"): FIT_FAIL}, decisions=1)

init = {"initContainers": [{"name": "init", "image": "busybox",
                            "resources": {"requests": {"cpu": "10", "memory": "1Gi"}}}]}
scenario("predicates/init-container-request-counts.yaml",
 """A pod's request is the max of the sum of its containers and each init container: the init
 container asks 10 CPUs, more than node-1's 8, so the pod stays Pending though its main container
 asks 1 CPU.""",
 Q + [node("node-1", cpu="8")] + one("p", spec_extra=init),
 pods={P("p"): PEND}, podgroups={P("pg-p"): FIT_FAIL}, decisions=0)

anti_req = {"affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
    {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "kubernetes.io/hostname"}]}}}
anti_pref = {"affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
    {"weight": 50, "podAffinityTerm": {"labelSelector": {"matchLabels": {"app": "web"}},
                                       "topologyKey": "kubernetes.io/hostname"}}]}}}
scenario("predicates/required-pod-anti-affinity-refused.yaml",
 """Required podAntiAffinity is not implemented by the core, so the pod's group is unschedulable
 with a reason naming podAntiAffinity. A pod with only preferred podAntiAffinity (may be ignored)
 is placed.""",
 Q + [node("node-1", cpu="8")] +
 one("req", labels={"app": "web"}, spec_extra=anti_req) +
 one("pref", t=5, labels={"app": "web"}, spec_extra=anti_pref),
 pods={P("req"): PEND, P("pref"): B("node-1")},
 podgroups={P("pg-req"): {"unschedulable": True, "messageContains": "podAntiAffinity"}},
 decisions=1)

aff_req = {"affinity": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
    {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": "kubernetes.io/hostname"}]}}}
scenario("predicates/required-pod-affinity-refused.yaml",
 """Required podAffinity is not implemented by the core: the group is unschedulable with a reason
 naming podAffinity; a plain pod is placed.""",
 Q + [node("node-1", cpu="8")] + one("req", spec_extra=aff_req) + one("plain", t=5),
 pods={P("req"): PEND, P("plain"): B("node-1")},
 podgroups={P("pg-req"): {"unschedulable": True, "messageContains": "podAffinity"}}, decisions=1)

hostport = {"containers": [{"name": "main", "image": "busybox", "ports": [{"containerPort": 80, "hostPort": 8080}],
                            "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}]}
scenario("predicates/host-port-refused.yaml",
 """A container hostPort is a required constraint the core does not implement: the group is
 unschedulable with a reason naming hostPort; a plain pod is placed.""",
 Q + [node("node-1", cpu="8")] + one("hp", spec_extra=hostport) + one("plain", t=5),
 pods={P("hp"): PEND, P("plain"): B("node-1")},
 podgroups={P("pg-hp"): {"unschedulable": True, "messageContains": "hostPort"}}, decisions=1)

tsc = {"topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "kubernetes.io/hostname",
       "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {"matchLabels": {"app": "web"}}}]}
scenario("predicates/topology-spread-donotschedule-refused.yaml",
 """topologySpreadConstraints with whenUnsatisfiable DoNotSchedule is a required constraint the
 core does not implement: unschedulable with a reason naming topologySpreadConstraints.""",
 Q + [node("node-1", cpu="8")] + one("tsc", labels={"app": "web"}, spec_extra=tsc) + one("plain", t=5),
 pods={P("tsc"): PEND, P("plain"): B("node-1")},
 podgroups={P("pg-tsc"): {"unschedulable": True, "messageContains": "topologySpreadConstraints"}},
 decisions=1)

# ---------------- bad input ----------------
def bad_fraction(fname, value, desc):
    scenario("bad-input/" + fname, desc,
      Q + [node("node-1", gpus=2, gpu_mem=40000)] +
      one("bad", annotations={"gpu-fraction": value}) + one("good", t=5, gpu=1),
      pods={P("bad"): PEND, P("good"): B("node-1")},
      podgroups={P("pg-bad"): {"unschedulable": True, "messageContains": "gpu-fraction"},
                 P("pg-good"): OK}, decisions=1)

bad_fraction("gpu-fraction-not-a-number.yaml", "abc",
 """gpu-fraction "abc" is not a number: that pod's group is unschedulable with a reason naming
 gpu-fraction; the other pod in the cluster is placed normally.""")
bad_fraction("gpu-fraction-zero.yaml", "0",
 """gpu-fraction "0" is outside (0, 1]: unschedulable with a reason naming gpu-fraction; the other
 pod is placed normally.""")
bad_fraction("gpu-fraction-above-one.yaml", "1.5",
 """gpu-fraction "1.5" is neither a portion <= 1 nor an integer: unschedulable with a reason naming
 gpu-fraction; the other pod is placed normally.""")
bad_fraction("gpu-fraction-negative.yaml", "-0.2",
 """gpu-fraction "-0.2" is negative: unschedulable with a reason naming gpu-fraction; the other
 pod is placed normally.""")

def bad_other(fname, ann, needle, desc, **kw):
    scenario("bad-input/" + fname, desc,
      Q + [node("node-1", gpus=2, gpu_mem=40000)] +
      one("bad", annotations=ann, **kw) + one("good", t=5, gpu=1),
      pods={P("bad"): PEND, P("good"): B("node-1")},
      podgroups={P("pg-bad"): {"unschedulable": True, "messageContains": needle},
                 P("pg-good"): OK}, decisions=1)

bad_other("gpu-memory-not-a-number.yaml", {"gpu-memory": "x"}, "gpu-memory",
 """gpu-memory "x" is not an integer number of MiB: unschedulable with a reason naming gpu-memory;
 the other pod is placed normally.""")
bad_other("gpu-memory-zero.yaml", {"gpu-memory": "0"}, "gpu-memory",
 """gpu-memory "0" is not > 0: unschedulable with a reason naming gpu-memory; the other pod is
 placed normally.""")
bad_other("gpu-fraction-and-gpu-memory.yaml", {"gpu-fraction": "0.5", "gpu-memory": "10000"}, "gpu-memory",
 """A pod with both gpu-fraction and gpu-memory is contradictory: unschedulable with a reason naming
 the annotations (checked: gpu-memory); the other pod is placed normally.""")
bad_other("gpu-fraction-num-devices-not-a-number.yaml",
 {"gpu-fraction": "0.5", "gpu-fraction-num-devices": "two"}, "gpu-fraction-num-devices",
 """gpu-fraction-num-devices "two" is not a positive integer: unschedulable with a reason naming
 the annotation; the other pod is placed normally.""")
bad_other("cpu-quantity-does-not-parse.yaml", {}, "12zz",
 """A container request cpu "12zz" is not a valid quantity: the pod's group is unschedulable with a
 reason quoting the bad value, never a crash; the other pod is placed normally.""", cpu="12zz")

scenario("bad-input/pod-group-missing.yaml",
 """A pod names pod-group-name pg-ghost but no such PodGroup exists: it waits for the PodGroup and
 stays Pending; the other pod is placed normally.""",
 Q + [node("node-1", gpus=2), pod("orphan", "pg-ghost", gpu=1, t=0)] + one("good", t=5, gpu=1),
 pods={P("orphan"): PEND, P("good"): B("node-1")}, decisions=1)

# ---------------- subgroups ----------------
def sg_pod(name, pg, sg, gpu=1, t=0, **kw):
    return pod(name, pg, gpu=gpu, t=t, labels={"kai.scheduler/subgroup-name": sg}, **kw)

scenario("subgroups/all-subgroups-fit.yaml",
 """PodGroup with subGroups workers (minMember 2) and ps (minMember 1), labelled pods, 3 GPUs:
 every subgroup reaches its minimum in the first attempt, all three pods Binding.""",
 Q + [node("node-1", gpus=3), podgroup("pg-job", "team-a", 3, subgroups=[("workers", 2), ("ps", 1)]),
      sg_pod("worker-0", "pg-job", "workers", t=0), sg_pod("worker-1", "pg-job", "workers", t=1),
      sg_pod("ps-0", "pg-job", "ps", t=2)],
 pods={P("worker-0"): B("node-1"), P("worker-1"): B("node-1"), P("ps-0"): B("node-1")},
 podgroups={P("pg-job"): OK}, decisions=3)

scenario("subgroups/extra-pod-beyond-min-waits.yaml",
 """subGroups workers (minMember 2, 3 pods) and ps (minMember 1, 1 pod) on 3 GPUs. The first
 attempt takes the minimum of each subgroup (2 workers in creation order + ps); the growth attempt
 for worker-2 finds no GPU and it stays Pending.""",
 Q + [node("node-1", gpus=3), podgroup("pg-job", "team-a", 3, subgroups=[("workers", 2), ("ps", 1)]),
      sg_pod("worker-0", "pg-job", "workers", t=0), sg_pod("worker-1", "pg-job", "workers", t=1),
      sg_pod("worker-2", "pg-job", "workers", t=2), sg_pod("ps-0", "pg-job", "ps", t=3)],
 pods={P("worker-0"): B("node-1"), P("worker-1"): B("node-1"), P("worker-2"): PEND,
       P("ps-0"): B("node-1")}, decisions=3)

scenario("subgroups/one-subgroup-short-all-pending.yaml",
 """subGroups workers (minMember 2, 1 GPU each) and ps (minMember 1, 2 GPUs) need 4 GPUs; the node
 has 3, so not every subgroup can reach its minimum and the whole group stays Pending.""",
 Q + [node("node-1", gpus=3), podgroup("pg-job", "team-a", 3, subgroups=[("workers", 2), ("ps", 1)]),
      sg_pod("worker-0", "pg-job", "workers", t=0), sg_pod("worker-1", "pg-job", "workers", t=1),
      sg_pod("ps-0", "pg-job", "ps", gpu=2, t=2)],
 pods={P("worker-0"): PEND, P("worker-1"): PEND, P("ps-0"): PEND},
 podgroups={P("pg-job"): {"unschedulable": True, "reason": "PodSchedulingErrors"}}, decisions=0)

scenario("subgroups/growth-goes-to-least-allocated-subgroup.yaml",
 """Both subgroups (minMember 1 each) are satisfied by running pods: a has 2 running, b has 1, and
 each has one pending pod; one GPU is free. Growth takes one pod from the PodSet with the lower
 allocated/minimum ratio (b: 1 vs a: 2), so b-1 is placed and a-2 stays Pending.""",
 Q + [node("node-1", gpus=4), podgroup("pg-job", "team-a", 2, t=-60, subgroups=[("a", 1), ("b", 1)]),
      sg_pod("a-0", "pg-job", "a", t=-60, node_name="node-1", phase="Running"),
      sg_pod("a-1", "pg-job", "a", t=-59, node_name="node-1", phase="Running"),
      sg_pod("b-0", "pg-job", "b", t=-58, node_name="node-1", phase="Running"),
      sg_pod("a-2", "pg-job", "a", t=0), sg_pod("b-1", "pg-job", "b", t=1)],
 pods={P("a-2"): PEND, P("b-1"): B("node-1")}, decisions=1)

scenario("subgroups/unsatisfied-subgroup-completed-first.yaml",
 """workers (minMember 2) has 1 running pod and 2 pending; ps (minMember 1) has 1 pending; 3 GPUs
 free. The attempt takes what each unsatisfied subgroup lacks: one worker (worker-1, oldest
 pending) and ps-0. A growth attempt then adds worker-2 on the last free GPU.""",
 Q + [node("node-1", gpus=4), podgroup("pg-job", "team-a", 3, t=-60, subgroups=[("workers", 2), ("ps", 1)]),
      sg_pod("worker-0", "pg-job", "workers", t=-60, node_name="node-1", phase="Running"),
      sg_pod("worker-1", "pg-job", "workers", t=0), sg_pod("worker-2", "pg-job", "workers", t=1),
      sg_pod("ps-0", "pg-job", "ps", t=2)],
 pods={P("worker-0"): RUN, P("worker-1"): B("node-1"), P("worker-2"): B("node-1"),
       P("ps-0"): B("node-1")}, decisions=3)
