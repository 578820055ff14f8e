#pragma once
// The owner kinds KAI's pod grouper reads (docs/pod-grouping.md "Per kind"), as "Kind.group": the
// daemon watches those the API server serves (k8s/client/owner_discovery.hpp), so that every pod's
// owner chain is in the log. An owner of any other kind is known by its reference alone.

#include <set>
#include <string>

namespace kai::model {

inline const std::set<std::string, std::less<>>& grouped_owner_kinds() {
  static const std::set<std::string, std::less<>> kinds = {
      "Deployment.apps",
      "ReplicaSet.apps",
      "StatefulSet.apps",
      "Job.batch",
      "CronJob.batch",
      "JobSet.jobset.x-k8s.io",
      "PyTorchJob.kubeflow.org",
      "TFJob.kubeflow.org",
      "XGBoostJob.kubeflow.org",
      "JAXJob.kubeflow.org",
      "PaddleJob.kubeflow.org",
      "MPIJob.kubeflow.org",
      "Notebook.kubeflow.org",
      "ScheduledWorkflow.kubeflow.org",
      "TrainJob.trainer.kubeflow.org",
      "RayCluster.ray.io",
      "RayJob.ray.io",
      "RayService.ray.io",
      "LeaderWorkerSet.leaderworkerset.x-k8s.io",
      "Service.serving.knative.dev",
      "Configuration.serving.knative.dev",
      "Revision.serving.knative.dev",
      "Workflow.argoproj.io",
      "SparkApplication.sparkoperator.k8s.io",
  };
  return kinds;
}

}  // namespace kai::model
