#pragma once
// Pod admission: GPU-sharing validation, and the mutation that prepares a fraction pod for the
// binder's sharing chain (docs/kai-compatibility.md "Admission"). Works on the pod's JSON so that every field the
// scheduler does not model survives untouched.

#include <nlohmann/json.hpp>
#include <string>

#include "k8s/admission/admission.hpp"

namespace kai::admission {

/// "" when the pod may be created, else why not (KAI's rules, docs/kai-compatibility.md "Admission").
std::string validate_pod(const nlohmann::json& pod, const AdmissionOptions& options);

/// The pod as admission leaves it: a fraction or gpu-memory pod gets the configmap annotation, the
/// env / envFrom entries on its GPU container and the configmap volume; a GPU pod without a runtime
/// class gets the configured one. Returns "" or why the pod cannot be mutated.
std::string mutate_pod(nlohmann::json& pod, const AdmissionOptions& options, const RandomSuffix& random);

}  // namespace kai::admission
