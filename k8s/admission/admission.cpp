#include "k8s/admission/admission.hpp"

#include <nlohmann/json.hpp>
#include <random>

#include "k8s/admission/crd_admission.hpp"
#include "k8s/admission/pod_admission.hpp"
#include "k8s/model/base64.hpp"

namespace kai::admission {

using Json = nlohmann::json;

namespace {

Decision refuse(std::string message) {
  Decision d;
  d.allowed = false;
  d.message = std::move(message);
  return d;
}

}  // namespace

RandomSuffix system_random_suffix() {
  return [](size_t length) {
    static constexpr char kAlphabet[] = "bcdfghjklmnpqrstvwxz2456789";  // as Kubernetes' generated names
    thread_local std::mt19937_64 engine{std::random_device{}()};
    std::uniform_int_distribution<size_t> pick(0, sizeof(kAlphabet) - 2);
    std::string s(length, ' ');
    for (auto& ch : s) ch = kAlphabet[pick(engine)];
    return s;
  };
}

namespace {

Decision decide_unchecked(Hook hook, std::string_view operation, std::string_view object_json,
                          const AdmissionOptions& options, const RandomSuffix& random) {
  Json object = Json::parse(object_json, nullptr, false);
  if (object.is_discarded() || !object.is_object()) return refuse("request.object is not a JSON object");
  // Deletions and connects carry no new object to check.
  if (operation != "CREATE" && operation != "UPDATE") return {};
  switch (hook) {
    case Hook::kPodValidate: {
      if (operation != "CREATE") return {};  // pod specs are immutable after creation
      std::string why = validate_pod(object, options);
      return why.empty() ? Decision{} : refuse(std::move(why));
    }
    case Hook::kPodMutate: {
      if (operation != "CREATE") return {};
      // Mutation runs before validation in the API server: refuse here too, so a bad request is not
      // mutated into something misleading.
      if (std::string why = validate_pod(object, options); !why.empty()) return refuse(std::move(why));
      const Json original = object;
      if (std::string why = mutate_pod(object, options, random); !why.empty()) return refuse(std::move(why));
      Decision d;
      const Json patch = Json::diff(original, object);
      if (!patch.empty()) d.patch = patch.dump();
      return d;
    }
    case Hook::kQueueValidate: {
      std::string why = validate_queue(object);
      return why.empty() ? Decision{} : refuse(std::move(why));
    }
    case Hook::kPodGroupValidate: {
      std::string why = validate_pod_group(object);
      return why.empty() ? Decision{} : refuse(std::move(why));
    }
  }
  return {};
}

}  // namespace

Decision decide(Hook hook, std::string_view operation, std::string_view object_json,
                const AdmissionOptions& options, const RandomSuffix& random) {
  try {
    return decide_unchecked(hook, operation, object_json, options, random);
  } catch (const nlohmann::json::exception& e) {
    // A field of an unexpected type deep inside the object (a container that is not an object, a
    // metadata list, ...): the API server's own validation would refuse it too.
    return refuse(std::string("request.object has a field of the wrong type: ") + e.what());
  }
}

std::string review(Hook hook, std::string_view body, const AdmissionOptions& options, const RandomSuffix& random,
                   bool* bad_request) {
  if (bad_request != nullptr) *bad_request = false;
  Json in = Json::parse(body, nullptr, false);
  auto fail = [&](const std::string& message) {
    if (bad_request != nullptr) *bad_request = true;
    return Json{{"error", message}}.dump();
  };
  if (in.is_discarded() || !in.is_object()) return fail("the body is not JSON");
  if (in.value("kind", "") != "AdmissionReview") return fail("kind: expected AdmissionReview");
  if (!in.contains("request") || !in["request"].is_object()) return fail("request: missing");
  const Json& request = in["request"];
  if (!request.contains("uid") || !request["uid"].is_string()) return fail("request.uid: missing");

  const std::string operation = request.value("operation", "");
  Decision d;
  if (request.contains("object") && request["object"].is_object()) {
    d = decide(hook, operation, request["object"].dump(), options, random);
  } else if (operation == "CREATE" || operation == "UPDATE") {
    d = refuse("request.object: missing");
  }

  Json response = {{"uid", request["uid"]}, {"allowed", d.allowed}};
  if (!d.allowed) {
    response["status"] = {{"code", 403}, {"reason", "Forbidden"}, {"message", d.message}};
  }
  if (!d.patch.empty()) {
    response["patchType"] = "JSONPatch";
    response["patch"] = model::base64_encode(d.patch);
  }
  if (!d.warnings.empty()) response["warnings"] = d.warnings;
  // Answer in the version the request came in (admission.k8s.io/v1; v1beta1 has the same shape).
  return Json{{"apiVersion", in.value("apiVersion", "admission.k8s.io/v1")},
              {"kind", "AdmissionReview"},
              {"response", response}}
      .dump();
}

}  // namespace kai::admission
