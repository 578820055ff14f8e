#pragma once
// The AdmissionReview that the webhook tests post (tests/endpoints/endpoints_test.cpp,
// tests/daemon/webhook_test.cpp): the CREATE of a pod asking for half a GPU, which
// k8s/admission/admission.hpp refuses where GPU sharing is off.

#include <nlohmann/json.hpp>
#include <string>

namespace kai::webhook_fixtures {

inline nlohmann::json fraction_pod_review(const std::string& uid) {
  using Json = nlohmann::json;
  return {
      {"apiVersion", "admission.k8s.io/v1"},
      {"kind", "AdmissionReview"},
      {"request",
       {{"uid", uid},
        {"operation", "CREATE"},
        {"object",
         {{"metadata", {{"name", "p"}, {"namespace", "n"}, {"annotations", {{"gpu-fraction", "0.5"}}}}},
          {"spec", {{"schedulerName", "kai-scheduler"}, {"containers", Json::array({{{"name", "c"}}})}}}}}}}};
}

}  // namespace kai::webhook_fixtures
