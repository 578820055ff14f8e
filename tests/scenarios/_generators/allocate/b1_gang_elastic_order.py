from lib import *

Q = std_queues("team-a")

# ---------------- gang ----------------
scenario("gang/gang-fits-all-binding.yaml",
 """A gang of 3 one-GPU pods (minMember 3) on a node with 4 free GPUs: the whole gang fits,
 so all three pods are allocated (Binding) on that node in one statement.""",
 Q + [node("node-1", gpus=4), podgroup("pg-train", "team-a", 3)] +
 [pod("train-%d" % i, "pg-train", gpu=1, t=i) for i in range(3)],
 pods={P("train-%d" % i): B("node-1") for i in range(3)},
 podgroups={P("pg-train"): OK}, decisions=3)

scenario("gang/gang-three-room-for-two-all-pending.yaml",
 """A gang of 3 one-GPU pods (minMember 3) but only 2 free GPUs in the cluster: the first attempt
 asks for exactly minMember pods, the third pod fails, so the whole attempt is discarded and all
 pods stay Pending with a gang-scheduling fit error.""",
 Q + [node("node-1", gpus=1), node("node-2", gpus=1), podgroup("pg-train", "team-a", 3)] +
 [pod("train-%d" % i, "pg-train", gpu=1, t=i) for i in range(3)],
 pods={P("train-%d" % i): PEND for i in range(3)},
 podgroups={P("pg-train"): GANG_FAIL}, decisions=0)

scenario("gang/gang-spans-two-nodes-binpack.yaml",
 """A gang of 4 one-GPU pods on two empty 2-GPU nodes. The first pod ties on score and takes
 node-a (name order); binpack then keeps filling node-a until full, and the last two pods go to
 node-b. Tasks are placed in pod creation order.""",
 Q + [node("node-b", gpus=2), node("node-a", gpus=2), podgroup("pg-train", "team-a", 4)] +
 [pod("train-%d" % i, "pg-train", gpu=1, t=i) for i in range(4)],
 pods={P("train-0"): B("node-a"), P("train-1"): B("node-a"),
       P("train-2"): B("node-b"), P("train-3"): B("node-b")},
 decisions=4)

scenario("gang/gang-too-few-pods-not-ready.yaml",
 """A PodGroup with minMember 3 but only 2 pods exist. The job is not ready (alive pods <
 minAvailable) and is filtered out before allocation, so nothing is placed although GPUs are free.""",
 Q + [node("node-1", gpus=4), podgroup("pg-train", "team-a", 3)] +
 [pod("train-%d" % i, "pg-train", gpu=1, t=i) for i in range(2)],
 pods={P("train-0"): PEND, P("train-1"): PEND}, decisions=0)

scenario("gang/gang-with-gated-pod-not-ready.yaml",
 """A gang of 2 (minMember 2) where one pod still has a scheduling gate. Alive minus gated pods
 is 1 < minAvailable 2, so the job is unready and skipped; the gated pod stays Gated and the other
 Pending.""",
 Q + [node("node-1", gpus=4), podgroup("pg-train", "team-a", 2),
      pod("train-0", "pg-train", gpu=1, t=0),
      pod("train-1", "pg-train", gpu=1, t=1,
          spec_extra={"schedulingGates": [{"name": "example.com/wait"}]})],
 pods={P("train-0"): PEND, P("train-1"): {"status": "Gated"}}, decisions=0)

scenario("gang/failed-gang-does-not-block-smaller-job.yaml",
 """An older gang needing 3 GPUs fails on a 2-GPU node and is discarded; the next job in the same
 queue (a single 1-GPU pod) is still tried and allocated.""",
 Q + [node("node-1", gpus=2), podgroup("pg-big", "team-a", 3, t=0),
      podgroup("pg-small", "team-a", 1, t=5)] +
 [pod("big-%d" % i, "pg-big", gpu=1, t=i) for i in range(3)] +
 [pod("small-0", "pg-small", gpu=1, t=5)],
 pods={P("big-0"): PEND, P("big-1"): PEND, P("big-2"): PEND, P("small-0"): B("node-1")},
 podgroups={P("pg-big"): GANG_FAIL, P("pg-small"): OK}, decisions=1)

scenario("gang/multi-gpu-pods-gang.yaml",
 """A gang of 2 pods each asking 2 whole GPUs on two nodes with 3 and 2 free GPUs (node-a has 1
 used by a running pod of another job, leaving 2 free). Binpack puts the first pod on the node
 with fewer free GPUs (node-a, 2 free vs node-b 3 free); the second then only fits node-b.""",
 Q + [node("node-a", gpus=3), node("node-b", gpus=3),
      podgroup("pg-old", "team-a", 1, t=-50), running("old-0", "node-a", pg="pg-old", gpu=1, t=-50),
      podgroup("pg-train", "team-a", 2)] +
 [pod("train-%d" % i, "pg-train", gpu=2, t=i) for i in range(2)],
 pods={P("train-0"): B("node-a"), P("train-1"): B("node-b"), P("old-0"): RUN}, decisions=2)

# ---------------- elastic ----------------
scenario("elastic/elastic-grows-until-full.yaml",
 """Elastic job: minMember 2 with 4 one-GPU pods on a 3-GPU node. The first attempt allocates
 exactly minMember pods (train-0, train-1); the job is pushed back and grows one pod per attempt:
 train-2 fits, train-3 finds no room and stays Pending.""",
 Q + [node("node-1", gpus=3), podgroup("pg-train", "team-a", 2)] +
 [pod("train-%d" % i, "pg-train", gpu=1, t=i) for i in range(4)],
 pods={P("train-0"): B("node-1"), P("train-1"): B("node-1"), P("train-2"): B("node-1"),
       P("train-3"): PEND}, decisions=3)

scenario("elastic/elastic-full-allocation.yaml",
 """Elastic job (minMember 1) with 2 one-GPU pods on a 2-GPU node: first attempt takes 1 pod, the
 second attempt the other; both end Binding.""",
 Q + [node("node-1", gpus=2), podgroup("pg-train", "team-a", 1)] +
 [pod("train-%d" % i, "pg-train", gpu=1, t=i) for i in range(2)],
 pods={P("train-0"): B("node-1"), P("train-1"): B("node-1")}, decisions=2)

scenario("elastic/elastic-two-jobs-share-growth.yaml",
 """Two elastic jobs (minMember 1, 4 one-GPU pods each) in one queue, 5 GPUs. Job order puts jobs
 below min first, then jobs exactly at min before jobs above min, then older first. Sequence: old
 gets 1, new gets 1 (below min), old 2nd (both at min, older), new 2nd (at min beats above min),
 old 3rd (both above min, older); the 5 GPUs are then used, so old has 3 pods and new has 2.""",
 Q + [node("node-1", gpus=5), podgroup("pg-old", "team-a", 1, t=0),
      podgroup("pg-new", "team-a", 1, t=10)] +
 [pod("old-%d" % i, "pg-old", gpu=1, t=i) for i in range(4)] +
 [pod("new-%d" % i, "pg-new", gpu=1, t=10 + i) for i in range(4)],
 pods={P("old-0"): B("node-1"), P("old-1"): B("node-1"), P("old-2"): B("node-1"),
       P("old-3"): PEND, P("new-0"): B("node-1"), P("new-1"): B("node-1"),
       P("new-2"): PEND, P("new-3"): PEND}, decisions=5)

scenario("elastic/elastic-task-priority-label.yaml",
 """Elastic job (minMember 1) with 2 one-GPU pods and a single GPU. Task order puts the pod with
 the higher kai.scheduler/task-priority label first, even though it was created later, so it gets
 the GPU.""",
 Q + [node("node-1", gpus=1), podgroup("pg-train", "team-a", 1),
      pod("train-0", "pg-train", gpu=1, t=0, labels={"kai.scheduler/task-priority": "1"}),
      pod("train-1", "pg-train", gpu=1, t=1, labels={"kai.scheduler/task-priority": "2"})],
 pods={P("train-0"): PEND, P("train-1"): B("node-1")}, decisions=1)

scenario("elastic/elastic-partially-running-grows.yaml",
 """Elastic job (minMember 1) with one pod already Running and two Pending on a 2-GPU node. The job
 is at its minimum, so one more pod is added per attempt: train-1 takes the last free GPU and
 train-2 stays Pending.""",
 Q + [node("node-1", gpus=2), podgroup("pg-train", "team-a", 1, t=-30),
      running("train-0", "node-1", pg="pg-train", gpu=1, t=-30),
      pod("train-1", "pg-train", gpu=1, t=1), pod("train-2", "pg-train", gpu=1, t=2)],
 pods={P("train-0"): RUN, P("train-1"): B("node-1"), P("train-2"): PEND}, decisions=1)

scenario("elastic/elastic-stops-at-queue-limit.yaml",
 """Elastic job (minMember 1, 4 one-GPU pods) in a queue with a GPU limit of 2 on a 4-GPU node.
 Two pods are allocated; the third attempt would make allocated 3 > limit 2 (OverLimit), so the
 remaining pods stay Pending although GPUs are free.""",
 std_queues(("team-a", {"gpu": res(-1, 1, 2)})) +
 [node("node-1", gpus=4), podgroup("pg-train", "team-a", 1)] +
 [pod("train-%d" % i, "pg-train", gpu=1, t=i) for i in range(4)],
 pods={P("train-0"): B("node-1"), P("train-1"): B("node-1"), P("train-2"): PEND,
       P("train-3"): PEND}, decisions=2)

# ---------------- job order ----------------
PCS = [prioclass("low-prio", 10), prioclass("high-prio", 90)]
scenario("order/higher-priority-job-first.yaml",
 """Two single-pod jobs in one queue compete for 1 GPU. The newer one uses a PriorityClass of
 value 90, the older one value 10; job order is priority first, so the newer high-priority job
 gets the GPU.""",
 Q + PCS + [node("node-1", gpus=1),
      podgroup("pg-low", "team-a", 1, prio="low-prio", t=0),
      podgroup("pg-high", "team-a", 1, prio="high-prio", t=10),
      pod("low-0", "pg-low", gpu=1, t=0), pod("high-0", "pg-high", gpu=1, t=10)],
 pods={P("low-0"): PEND, P("high-0"): B("node-1")}, decisions=1)

scenario("order/same-priority-older-first.yaml",
 """Two single-pod jobs with the same priority compete for 1 GPU; the PodGroup with the older
 creationTimestamp is ordered first and wins (names are chosen so name order would pick the other).""",
 Q + [node("node-1", gpus=1),
      podgroup("pg-b-old", "team-a", 1, t=0), podgroup("pg-a-new", "team-a", 1, t=10),
      pod("a-new-0", "pg-a-new", gpu=1, t=10), pod("b-old-0", "pg-b-old", gpu=1, t=0)],
 pods={P("b-old-0"): B("node-1"), P("a-new-0"): PEND}, decisions=1)

scenario("order/missing-priority-class-defaults-to-50.yaml",
 """A PodGroup without priorityClassName gets the default priority 50 (no globalDefault
 PriorityClass exists); it beats an older PodGroup whose class has value 10.""",
 Q + PCS + [node("node-1", gpus=1),
      podgroup("pg-low", "team-a", 1, prio="low-prio", t=0),
      podgroup("pg-default", "team-a", 1, t=10),
      pod("low-0", "pg-low", gpu=1, t=0), pod("default-0", "pg-default", gpu=1, t=10)],
 pods={P("low-0"): PEND, P("default-0"): B("node-1")}, decisions=1)

scenario("order/global-default-priority-class.yaml",
 """A PodGroup without priorityClassName takes the value of the globalDefault PriorityClass (80),
 so it beats an older PodGroup whose class has value 60.""",
 Q + [prioclass("mid-prio", 60), prioclass("cluster-default", 80, global_default=True),
      node("node-1", gpus=1),
      podgroup("pg-mid", "team-a", 1, prio="mid-prio", t=0),
      podgroup("pg-default", "team-a", 1, t=10),
      pod("mid-0", "pg-mid", gpu=1, t=0), pod("default-0", "pg-default", gpu=1, t=10)],
 pods={P("mid-0"): PEND, P("default-0"): B("node-1")}, decisions=1)

scenario("order/priority-before-age-three-jobs.yaml",
 """Three single-pod jobs, 2 GPUs: two low-priority (value 10) jobs created first and one
 high-priority (90) job created last. Order: high first, then the older low job; the newest low
 job stays Pending.""",
 Q + PCS + [node("node-1", gpus=2),
      podgroup("pg-low-1", "team-a", 1, prio="low-prio", t=0),
      podgroup("pg-low-2", "team-a", 1, prio="low-prio", t=5),
      podgroup("pg-high", "team-a", 1, prio="high-prio", t=10),
      pod("low-1", "pg-low-1", gpu=1, t=0), pod("low-2", "pg-low-2", gpu=1, t=5),
      pod("high-0", "pg-high", gpu=1, t=10)],
 pods={P("high-0"): B("node-1"), P("low-1"): B("node-1"), P("low-2"): PEND}, decisions=2)
