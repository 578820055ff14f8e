#pragma once
// Base64 as Kubernetes uses it (Secret data, caBundle, certificate-authority-data, AdmissionReview
// patches): the standard alphabet with padding, on OpenSSL's codec.

#include <string>

#include "k8s/model/status.hpp"

namespace kai::model {

std::string base64_encode(const std::string& bytes);

/// Decodes `text`, ignoring whitespace (kubeconfigs wrap long values). An error when it is not
/// base64.
Result<std::string> base64_decode(const std::string& text);

}  // namespace kai::model
