#pragma once
// KAI's admission webhooks (docs/kai-compatibility.md "Admission", docs/gpu-sharing.md), as pure functions over the
// AdmissionReview JSON the API server posts: GPU-sharing validation and mutation of pods, runtime-
// class enforcement on GPU pods, Queue and PodGroup validation. The daemon serves them over HTTPS;
// tests call them directly. nlohmann stays inside this library (docs/build-and-ci.md "Translation units").

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace kai::admission {

/// Settings, with KAI's defaults.
struct AdmissionOptions {
  /// Pods of other schedulers are admitted unchanged. Default: "kai-scheduler".
  std::string scheduler_name = "kai-scheduler";
  /// KAI's `global.gpuSharing`. Off: gpu-fraction / gpu-memory pods are refused. Default: on.
  bool gpu_sharing = true;
  /// runtimeClassName given to GPU pods that name none (KAI operator's `gpuPodRuntimeClassName`);
  /// "" leaves pods alone. Default: "nvidia".
  std::string gpu_pod_runtime_class = "nvidia";
};

/// Lower-case alphanumeric characters for generated names; injectable so that tests are exact.
using RandomSuffix = std::function<std::string(size_t length)>;

/// A suffix from a non-deterministic source (the daemon's default).
RandomSuffix system_random_suffix();

/// The decision on one admission request.
struct Decision {
  bool allowed = true;
  std::string message;        ///< Why it was refused (empty when allowed).
  std::string patch;          ///< RFC 6902 JSON Patch (JSON text), "" for none.
  std::vector<std::string> warnings;
};

/// Which webhook a request came to (the daemon routes by URL path).
enum class Hook : uint8_t { kPodMutate, kPodValidate, kQueueValidate, kPodGroupValidate };

/// Decides on one object (the AdmissionReview's request.object). Never throws: an object that
/// cannot be read is refused with a message naming the field.
Decision decide(Hook hook, std::string_view operation, std::string_view object_json,
                const AdmissionOptions& options, const RandomSuffix& random);

/// Handles one `admission.k8s.io/v1` AdmissionReview request body and returns the response body.
/// A body that is not an AdmissionReview yields {"error": "..."} and `bad_request` = true, so the
/// server can answer 400.
std::string review(Hook hook, std::string_view body, const AdmissionOptions& options,
                   const RandomSuffix& random, bool* bad_request = nullptr);

}  // namespace kai::admission
