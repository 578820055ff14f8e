#pragma once
// A pod as a real API server sends it on a watch: managed fields, environment, volumes, container
// statuses, about 4 KB of JSON. The decoder's benchmark and its tests read the same object.

#include <nlohmann/json.hpp>
#include <string>

namespace kai::gen {

inline nlohmann::json api_server_pod(int index) {
  using nlohmann::json;
  const std::string n = std::to_string(index);
  json env = json::array();
  for (int i = 0; i < 32; ++i)
    env.push_back({{"name", "VAR" + std::to_string(i)}, {"value", "value-" + std::to_string(i)}});
  json pod = json::parse(R"({
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"namespace": "team-a", "generation": 1, "creationTimestamp": "2026-11-20T10:00:00Z",
      "labels": {"app": "train", "kai.scheduler/queue": "team-a", "training.kubeflow.org/replica-type": "worker"},
      "annotations": {"gpu-fraction": "0.5", "kubectl.kubernetes.io/last-applied-configuration": "{}"},
      "ownerReferences": [{"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "name": "train",
                           "uid": "0b1c2d3e-aaaa-bbbb-cccc-0123456789ab", "controller": true, "blockOwnerDeletion": true}],
      "managedFields": [{"manager": "kube-controller-manager", "operation": "Update", "apiVersion": "v1",
        "time": "2026-11-20T10:00:00Z", "fieldsType": "FieldsV1",
        "fieldsV1": {"f:metadata": {"f:labels": {".": {}, "f:app": {}, "f:kai.scheduler/queue": {}},
                                    "f:ownerReferences": {".": {}}},
                     "f:spec": {"f:containers": {"k:{\"name\":\"worker\"}": {".": {}, "f:env": {}, "f:image": {},
                                "f:resources": {".": {}, "f:limits": {}, "f:requests": {}}}}}}}]},
    "spec": {"schedulerName": "kai-scheduler", "priorityClassName": "train", "priority": 50,
      "nodeSelector": {"nvidia.com/gpu.product": "H100"},
      "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["a", "b"]}]}]}}},
      "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
                      {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
                       "tolerationSeconds": 300}],
      "containers": [{"name": "worker", "image": "nvcr.io/nvidia/pytorch:24.01-py3",
        "command": ["torchrun", "--nproc_per_node=8", "train.py"],
        "resources": {"requests": {"cpu": "8", "memory": "64Gi", "nvidia.com/gpu": "1"},
                      "limits": {"memory": "64Gi", "nvidia.com/gpu": "1"}},
        "ports": [{"containerPort": 29500, "protocol": "TCP"}],
        "volumeMounts": [{"name": "data", "mountPath": "/data"},
                         {"name": "kube-api-access", "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
                          "readOnly": true}],
        "terminationMessagePath": "/dev/termination-log", "imagePullPolicy": "IfNotPresent"}],
      "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}},
                  {"name": "kube-api-access", "projected": {"sources": [
                    {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                    {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}}]}}],
      "restartPolicy": "Never", "dnsPolicy": "ClusterFirst", "serviceAccountName": "default",
      "enableServiceLinks": true, "preemptionPolicy": "PreemptLowerPriority"},
    "status": {"phase": "Pending", "qosClass": "Burstable",
      "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                      "message": "0/5000 nodes are available"}],
      "containerStatuses": [{"name": "worker", "ready": false, "restartCount": 0, "started": false,
                             "image": "nvcr.io/nvidia/pytorch:24.01-py3", "imageID": ""}]}})");
  pod["metadata"]["name"] = "train-worker-" + n;
  pod["metadata"]["uid"] =
      "6f1c2a4e-1b2c-4d5e-8f90-" + std::string(12 - std::min<size_t>(12, n.size()), '0') + n;
  pod["metadata"]["resourceVersion"] = std::to_string(1000 + index);
  pod["metadata"]["labels"]["pod-group-name"] = "pg-train-" + n;
  pod["spec"]["containers"][0]["env"] = std::move(env);
  return pod;
}

}  // namespace kai::gen
