#pragma once
// The demo's cluster and workloads: KAI's quick-start queues and GPU-sharing guide, on two GPU nodes.
// Plain YAML so that a reader can copy them into a real cluster.

namespace kai::demo {

/// Two nodes with 4 GPUs of 40 GiB each, the namespaces, KAI's priority classes, and the queue tree
/// default -> {test, team-b}: each team is guaranteed 4 GPUs and may borrow the rest.
inline constexpr const char* kCluster = R"(
apiVersion: v1
kind: Namespace
metadata: {name: team-a}
---
apiVersion: v1
kind: Namespace
metadata: {name: team-b}
---
apiVersion: v1
kind: Namespace
metadata: {name: kai-resource-reservation}
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: train}
value: 50
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: inference}
value: 125
---
apiVersion: v1
kind: Node
metadata:
  name: gpu-node-1
  labels: {nvidia.com/gpu.memory: "40960", nvidia.com/gpu.count: "4"}
status:
  allocatable: {cpu: "32", memory: 256Gi, pods: "110", nvidia.com/gpu: "4"}
  capacity: {cpu: "32", memory: 256Gi, pods: "110", nvidia.com/gpu: "4"}
  conditions: [{type: Ready, status: "True"}]
---
apiVersion: v1
kind: Node
metadata:
  name: gpu-node-2
  labels: {nvidia.com/gpu.memory: "40960", nvidia.com/gpu.count: "4"}
status:
  allocatable: {cpu: "32", memory: 256Gi, pods: "110", nvidia.com/gpu: "4"}
  capacity: {cpu: "32", memory: 256Gi, pods: "110", nvidia.com/gpu: "4"}
  conditions: [{type: Ready, status: "True"}]
---
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: default}
spec:
  resources:
    gpu: {quota: -1, limit: -1, overQuotaWeight: 1}
    cpu: {quota: -1, limit: -1, overQuotaWeight: 1}
    memory: {quota: -1, limit: -1, overQuotaWeight: 1}
---
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: test}
spec:
  parentQueue: default
  resources:
    gpu: {quota: 4, limit: -1, overQuotaWeight: 1}
    cpu: {quota: -1, limit: -1, overQuotaWeight: 1}
    memory: {quota: -1, limit: -1, overQuotaWeight: 1}
---
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: team-b}
spec:
  parentQueue: default
  resources:
    gpu: {quota: 4, limit: -1, overQuotaWeight: 1}
    cpu: {quota: -1, limit: -1, overQuotaWeight: 1}
    memory: {quota: -1, limit: -1, overQuotaWeight: 1}
)";

/// Step 1 (KAI's GPU-sharing guide): two inference servers asking for 0.7 and 0.2 of a GPU.
inline constexpr const char* kFractionPods = R"(
apiVersion: v1
kind: Pod
metadata:
  name: vllm-large
  namespace: team-a
  labels: {kai.scheduler/queue: test}
  annotations: {gpu-fraction: "0.7"}
spec:
  schedulerName: kai-scheduler
  priorityClassName: inference
  containers: [{name: server, image: vllm/vllm-openai, resources: {requests: {cpu: "2", memory: 8Gi}}}]
---
apiVersion: v1
kind: Pod
metadata:
  name: vllm-small
  namespace: team-a
  labels: {kai.scheduler/queue: test}
  annotations: {gpu-fraction: "0.2"}
spec:
  schedulerName: kai-scheduler
  priorityClassName: inference
  containers: [{name: server, image: vllm/vllm-openai, resources: {requests: {cpu: "2", memory: 8Gi}}}]
)";

/// Step 2: a pod asking for 10 GiB of GPU memory (a quarter of a 40 GiB device).
inline constexpr const char* kMemoryPod = R"(
apiVersion: v1
kind: Pod
metadata:
  name: notebook
  namespace: team-a
  labels: {kai.scheduler/queue: test}
  annotations: {gpu-memory: "10240"}
spec:
  schedulerName: kai-scheduler
  priorityClassName: inference
  containers: [{name: jupyter, image: jupyter/base-notebook, resources: {requests: {cpu: "1", memory: 4Gi}}}]
)";

/// Step 3: a gang of two 3-GPU workers that runs only when both fit.
inline constexpr const char* kGang = R"(
apiVersion: scheduling.run.ai/v2alpha2
kind: PodGroup
metadata: {name: train-gang, namespace: team-a}
spec: {minMember: 2, queue: test, priorityClassName: train}
---
apiVersion: v1
kind: Pod
metadata:
  name: train-gang-0
  namespace: team-a
  labels: {kai.scheduler/queue: test}
  annotations: {pod-group-name: train-gang}
spec:
  schedulerName: kai-scheduler
  priorityClassName: train
  containers: [{name: worker, image: pytorch/pytorch, resources: {limits: {nvidia.com/gpu: "3"}}}]
---
apiVersion: v1
kind: Pod
metadata:
  name: train-gang-1
  namespace: team-a
  labels: {kai.scheduler/queue: test}
  annotations: {pod-group-name: train-gang}
spec:
  schedulerName: kai-scheduler
  priorityClassName: train
  containers: [{name: worker, image: pytorch/pytorch, resources: {limits: {nvidia.com/gpu: "3"}}}]
)";

/// Step 4: the second team claims its guaranteed 4 GPUs on a full cluster.
inline constexpr const char* kTeamB = R"(
apiVersion: v1
kind: Pod
metadata:
  name: team-b-train-0
  namespace: team-b
  labels: {kai.scheduler/queue: team-b}
spec:
  schedulerName: kai-scheduler
  priorityClassName: train
  containers: [{name: worker, image: pytorch/pytorch, resources: {limits: {nvidia.com/gpu: "2"}}}]
---
apiVersion: v1
kind: Pod
metadata:
  name: team-b-train-1
  namespace: team-b
  labels: {kai.scheduler/queue: team-b}
spec:
  schedulerName: kai-scheduler
  priorityClassName: train
  containers: [{name: worker, image: pytorch/pytorch, resources: {limits: {nvidia.com/gpu: "2"}}}]
)";

}  // namespace kai::demo
