#pragma once
// The GPU request of a pod: whole devices, a fraction of a device, an amount of device memory, or MIG
// instances (docs/kai-compatibility.md "GPU sharing"), parsed from resources and the GPU-sharing annotations.

#include <cstdint>
#include <string>

#include "k8s/model/objects.hpp"
#include "k8s/model/status.hpp"
#include "k8s/model/well_known_names.hpp"

namespace kai::core {

enum class GpuRequestKind : uint8_t { kNone, kWhole, kFraction, kMemory, kMig };

struct GpuRequest {
  GpuRequestKind kind = GpuRequestKind::kNone;
  int64_t whole_milli = 0;     ///< kWhole: devices x 1000.
  int64_t fraction_milli = 0;  ///< kFraction: portion of each device in (0, 1000].
  int64_t memory_mib = 0;      ///< kMemory: MiB of each device.
  int32_t num_devices = 1;     ///< kFraction / kMemory: devices, each with that portion or memory.

  bool is_shared() const { return kind == GpuRequestKind::kFraction || kind == GpuRequestKind::kMemory; }
  bool operator==(const GpuRequest&) const = default;
};


/// Parses the pod's GPU request. `whole_gpu_milli` is the pod's summed `nvidia.com/gpu` request.
/// Errors name the annotation and the value, e.g. `annotation gpu-fraction="1.5": must be in (0, 1]`.
model::Result<GpuRequest> parse_gpu_request(const model::Pod& pod, int64_t whole_gpu_milli,
                                            bool has_mig_request);

/// Portion (milli) of one device that `memory_mib` takes on a device of `device_memory_mib`:
/// ceil(mem / device * 100) / 100, as KAI rounds (docs/kai-compatibility.md "GPU sharing").
int64_t memory_to_fraction_milli(int64_t memory_mib, int64_t device_memory_mib);

}  // namespace kai::core
