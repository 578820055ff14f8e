from lib import *

Q = std_queues("team-a")
G1 = "6b1e4f6a-2a61-4c6e-9d51-0a6f1c000001"
G2 = "6b1e4f6a-2a61-4c6e-9d51-0a6f1c000002"

def frac(name, f, t=0, **kw):
    ann = dict(kw.pop("annotations", {}))
    ann["gpu-fraction"] = f
    return pod(name, "pg-" + name, t=t, annotations=ann, **kw)

def gmem(name, m, t=0, **kw):
    return pod(name, "pg-" + name, t=t, annotations={"gpu-memory": m}, **kw)

def pgs(*names, t0=0):
    return [podgroup("pg-" + n, "team-a", 1, t=t0 + i) for i, n in enumerate(names)]

def shared_running(name, node_name, f, group, t=-60):
    return running(name, node_name, pg="pg-" + name, t=t, annotations={"gpu-fraction": f},
                   labels={"runai-gpu-group": group})

scenario("sharing/two-halves-share-one-gpu.yaml",
 """Two 0.5 gpu-fraction pods (separate single-pod groups) on a 2-GPU node. The first opens a new
 shared GPU group; for the second, the existing group still fits and gpupack prefers the more-used
 device over a whole free GPU, so both share one device.""",
 Q + [node("node-1", gpus=2, gpu_mem=40000)] + pgs("vllm-a", "vllm-b") +
 [frac("vllm-a", "0.5", t=0), frac("vllm-b", "0.5", t=1)],
 pods={P("vllm-a"): B("node-1", gpuGroups=1), P("vllm-b"): B("node-1", gpuGroups=1, sameGpuGroupAs=P("vllm-a"))},
 decisions=2, seed=7)

scenario("sharing/fractions-07-05-cannot-share-one-gpu.yaml",
 """0.7 and 0.5 fraction pods on a single-GPU node: 0.7 gets the device; 0.5 would push the device
 past 1.0 and there is no other GPU, so it stays Pending.""",
 Q + [node("node-1", gpus=1, gpu_mem=40000)] + pgs("big", "small") +
 [frac("big", "0.7", t=0), frac("small", "0.5", t=1)],
 pods={P("big"): B("node-1", gpuGroups=1), P("small"): PEND},
 podgroups={P("pg-small"): {"unschedulable": True, "reason": "PodSchedulingErrors"}},
 decisions=1, seed=7)

scenario("sharing/fractions-07-05-two-gpus.yaml",
 """0.7 and 0.5 fraction pods on a 2-GPU node: they cannot share a device (1.2 > 1), so the second
 opens a second GPU group; both are Binding with one group each.""",
 Q + [node("node-1", gpus=2, gpu_mem=40000)] + pgs("big", "small") +
 [frac("big", "0.7", t=0), frac("small", "0.5", t=1)],
 pods={P("big"): B("node-1", gpuGroups=1), P("small"): B("node-1", gpuGroups=1)},
 decisions=2, seed=7)

scenario("sharing/device-never-exceeds-one.yaml",
 """Three 0.5 fraction pods on a single-GPU node: the first two share the device (1.0), the third
 does not fit anywhere and stays Pending.""",
 Q + [node("node-1", gpus=1, gpu_mem=40000)] + pgs("f-0", "f-1", "f-2") +
 [frac("f-%d" % i, "0.5", t=i) for i in range(3)],
 pods={P("f-0"): B("node-1", gpuGroups=1), P("f-1"): B("node-1", gpuGroups=1, sameGpuGroupAs=P("f-0")),
       P("f-2"): PEND}, decisions=2, seed=7)

scenario("sharing/joins-running-shared-group.yaml",
 """node-1 (2 GPUs) runs a 0.5 pod on shared GPU group G1 (label runai-gpu-group). A new 0.5 pod
 fits G1; gpupack ranks the half-used group above a whole idle GPU, so it joins G1.""",
 Q + [node("node-1", gpus=2, gpu_mem=40000), podgroup("pg-old", "team-a", 1, t=-60),
      shared_running("old", "node-1", "0.5", G1)] + pgs("new") + [frac("new", "0.5")],
 pods={P("old"): RUN, P("new"): B("node-1", gpuGroups=1, sameGpuGroupAs=P("old"))},
 decisions=1, seed=7)

scenario("sharing/prefers-node-with-shared-group.yaml",
 """node-a has one idle GPU, node-b's single GPU is half used by a running 0.5 pod (group G1). The
 new 0.5 pod goes to node-b: gpusharingorder adds 1000 points for a node where an existing shared
 group fits the task, outweighing name order and nodeavailability.""",
 Q + [node("node-a", gpus=1, gpu_mem=40000), node("node-b", gpus=1, gpu_mem=40000),
      podgroup("pg-old", "team-a", 1, t=-60), shared_running("old", "node-b", "0.5", G1)] +
 pgs("new") + [frac("new", "0.5")],
 pods={P("new"): B("node-b", gpuGroups=1, sameGpuGroupAs=P("old"))}, decisions=1, seed=7)

scenario("sharing/gpupack-picks-fuller-group.yaml",
 """node-1 has two shared groups: G1 with 0.3 used and G2 with 0.6 used. A 0.4 pod fits both;
 gpupack orders groups by used portion (higher first), so it joins G2.""",
 Q + [node("node-1", gpus=2, gpu_mem=40000),
      podgroup("pg-light", "team-a", 1, t=-60), podgroup("pg-heavy", "team-a", 1, t=-59),
      shared_running("light", "node-1", "0.3", G1), shared_running("heavy", "node-1", "0.6", G2, t=-59)] +
 pgs("new") + [frac("new", "0.4")],
 pods={P("new"): B("node-1", gpuGroups=1, sameGpuGroupAs=P("heavy"))}, decisions=1, seed=7)

scenario("sharing/whole-gpu-blocked-by-shared-device.yaml",
 """node-1's only GPU is half used by a running 0.5 pod. A whole-GPU pod cannot use a shared
 device (the group took the GPU out of the idle pool) and stays Pending; a later 0.5 fraction pod
 joins the shared device.""",
 Q + [node("node-1", gpus=1, gpu_mem=40000), podgroup("pg-old", "team-a", 1, t=-60),
      shared_running("old", "node-1", "0.5", G1),
      podgroup("pg-whole", "team-a", 1, t=0), pod("whole", "pg-whole", gpu=1, t=0)] +
 [podgroup("pg-half", "team-a", 1, t=5), frac("half", "0.5", t=5)],
 pods={P("whole"): PEND, P("half"): B("node-1", gpuGroups=1, sameGpuGroupAs=P("old"))},
 decisions=1, seed=7)

scenario("sharing/gpu-memory-converted-per-node.yaml",
 """Node GPU memory label 40000 MiB, one GPU. gpu-memory 20000 converts to fraction 0.5 on this
 node, so two such pods share the device; a third 20000 MiB pod does not fit and stays Pending.""",
 Q + [node("node-1", gpus=1, gpu_mem=40000)] + pgs("m-0", "m-1", "m-2") +
 [gmem("m-%d" % i, "20000", t=i) for i in range(3)],
 pods={P("m-0"): B("node-1", gpuGroups=1), P("m-1"): B("node-1", gpuGroups=1, sameGpuGroupAs=P("m-0")),
       P("m-2"): PEND}, decisions=2, seed=7)

scenario("sharing/gpu-memory-picks-node-with-enough-memory.yaml",
 """gpu-memory 30000 MiB: on node-a (20000 MiB GPUs) that is more than a whole device, on node-b
 (40000 MiB GPUs) it is 0.75. The pod goes to node-b although node-a sorts first by name.""",
 Q + [node("node-a", gpus=1, gpu_mem=20000), node("node-b", gpus=1, gpu_mem=40000)] + pgs("m") +
 [gmem("m", "30000")],
 pods={P("m"): B("node-b", gpuGroups=1)}, decisions=1, seed=7)

scenario("sharing/gpu-memory-joins-fraction-group.yaml",
 """A running pod holds gpu-fraction 0.5 of the single 40000 MiB GPU (group G1). A gpu-memory
 20000 pod converts to 0.5 on this node and joins G1.""",
 Q + [node("node-1", gpus=1, gpu_mem=40000), podgroup("pg-old", "team-a", 1, t=-60),
      shared_running("old", "node-1", "0.5", G1)] + pgs("m") + [gmem("m", "20000")],
 pods={P("m"): B("node-1", gpuGroups=1, sameGpuGroupAs=P("old"))}, decisions=1, seed=7)

scenario("sharing/gpu-memory-node-without-memory-label.yaml",
 """The GPU node has no nvidia.com/gpu.memory label, so its GPU memory is not synced and a
 gpu-memory pod cannot be placed there (Pending, with the not-synced message). A whole-GPU pod in
 the same cluster is unaffected.""",
 Q + [node("node-1", gpus=2)] + pgs("m") + [gmem("m", "10000")] +
 [podgroup("pg-whole", "team-a", 1, t=5), pod("whole", "pg-whole", gpu=1, t=5)],
 pods={P("m"): PEND, P("whole"): B("node-1")},
 podgroups={P("pg-m"): {"unschedulable": True, "reason": "PodSchedulingErrors",
                        "messageContains": "gpu memory count on the node was not synced yet"}},
 decisions=1, seed=7)

scenario("sharing/multi-device-fraction.yaml",
 """gpu-fraction 0.5 with gpu-fraction-num-devices 2 asks half of two devices: the pod gets two
 GPU groups on the 2-GPU node.""",
 Q + [node("node-1", gpus=2, gpu_mem=40000)] + pgs("multi") +
 [frac("multi", "0.5", annotations={"gpu-fraction-num-devices": "2"})],
 pods={P("multi"): B("node-1", gpuGroups=2)}, decisions=1, seed=7)

scenario("sharing/fraction-on-cpu-only-node.yaml",
 """A fraction pod in a cluster with only a CPU node has no GPU to share and stays Pending; a CPU
 pod is placed normally.""",
 Q + [node("node-1", cpu="8")] + pgs("f") + [frac("f", "0.5")] +
 [podgroup("pg-cpu", "team-a", 1, t=5), pod("cpu", "pg-cpu", t=5)],
 pods={P("f"): PEND, P("cpu"): B("node-1")},
 podgroups={P("pg-f"): {"unschedulable": True, "reason": "PodSchedulingErrors"}},
 decisions=1, seed=7)

scenario("sharing/new-group-needs-two-pod-slots.yaml",
 """node-1 allows only 1 pod. Opening a new shared GPU group needs 2 free pod slots (the pod plus
 its reservation pod), so the older fraction pod stays Pending; the newer whole-GPU pod needs
 only 1 slot and is placed.""",
 Q + [node("node-1", gpus=2, gpu_mem=40000, pods="1")] + pgs("f") + [frac("f", "0.5")] +
 [podgroup("pg-whole", "team-a", 1, t=5), pod("whole", "pg-whole", gpu=1, t=5)],
 pods={P("f"): PEND, P("whole"): B("node-1")}, decisions=1, seed=7)
