#pragma once
// The labels, annotations and names that KAI's components read and write on cluster objects, defined
// once (docs/kai-compatibility.md "Labels and annotations", docs/gpu-sharing.md). The scheduler, the
// binder, admission and the tools all spell them from here.

namespace kai::model {

// Grouping and queues (docs/pod-grouping.md).
inline constexpr const char* kPodGroupNameAnnotation = "pod-group-name";
inline constexpr const char* kQueueLabel = "kai.scheduler/queue";
inline constexpr const char* kSubGroupLabel = "kai.scheduler/subgroup-name";
inline constexpr const char* kPreemptibilityLabel = "kai.scheduler/preemptibility";
inline constexpr const char* kNodePoolLabel = "kai.scheduler/node-pool";
inline constexpr const char* kSkipPodGrouperAnnotation = "kai.scheduler/skip-podgrouper";
inline constexpr const char* kBatchMinMemberAnnotation = "kai.scheduler/batch-min-member";
inline constexpr const char* kTopOwnerMetadataAnnotation = "kai.scheduler/top-owner-metadata";
inline constexpr const char* kPreemptionDelayAnnotation = "kai.scheduler/preemption-delay";
inline constexpr const char* kStalenessGracePeriodAnnotation = "kai.scheduler/staleness-grace-period";
inline constexpr const char* kTopologyAnnotation = "kai.scheduler/topology";
inline constexpr const char* kTopologyRequiredAnnotation = "kai.scheduler/topology-required-placement";
inline constexpr const char* kTopologyPreferredAnnotation = "kai.scheduler/topology-preferred-placement";
// Segmented subgroups of a PyTorchJob's workers or a LeaderWorkerSet group (docs/pod-grouping.md "Segments").
inline constexpr const char* kSegmentSizeAnnotation = "kai.scheduler/segment-size";
inline constexpr const char* kSegmentTopologyRequiredAnnotation = "kai.scheduler/segment-topology-required-placement";
inline constexpr const char* kSegmentTopologyPreferredAnnotation = "kai.scheduler/segment-topology-preferred-placement";

// Job state the scheduler writes back on a PodGroup: when it last started, since when it is stale
// and when a pod of it was last evicted (the anchor of its preemptionDelay with its creation).
inline constexpr const char* kLastStartAnnotation = "kai.scheduler/last-start-timestamp";
inline constexpr const char* kStaleSinceAnnotation = "kai.scheduler/stale-podgroup-timestamp";
inline constexpr const char* kLastEvictionAnnotation = "kai.scheduler/last-eviction-timestamp";

// A pod's GPU request.
inline constexpr const char* kGpuResource = "nvidia.com/gpu";
inline constexpr const char* kGpuFractionAnnotation = "gpu-fraction";
inline constexpr const char* kGpuMemoryAnnotation = "gpu-memory";
inline constexpr const char* kGpuFractionNumDevicesAnnotation = "gpu-fraction-num-devices";
inline constexpr const char* kGpuFractionContainerAnnotation = "gpu-fraction-container-name";

// The GPU-sharing chain: reservation pods, the group label, the device a reservation pod reports.
inline constexpr const char* kReservationNamespace = "kai-resource-reservation";
inline constexpr const char* kReservationAppLabel = "kai-resource-reservation";
inline constexpr const char* kGpuGroupLabel = "runai-gpu-group";
inline constexpr const char* kGpuIndexAnnotation = "run.ai/reserve_for_gpu_index";

// What admission and the binder share: the configmap prefix and the variables in the configmaps.
inline constexpr const char* kSharedGpuConfigMapAnnotation = "runai/shared-gpu-configmap";
inline constexpr const char* kNvidiaVisibleDevices = "NVIDIA_VISIBLE_DEVICES";
inline constexpr const char* kGpuPortion = "GPU_PORTION";
/// Deprecated in KAI in favour of GPU_PORTION, still written for workloads that read it.
inline constexpr const char* kNumOfGpus = "RUNAI_NUM_OF_GPUS";

}  // namespace kai::model
