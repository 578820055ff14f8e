#include "k8s/admission/pod_admission.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <optional>

#include "k8s/admission/gpu_sharing_names.hpp"

namespace kai::admission {

using Json = nlohmann::json;

namespace {

constexpr const char* kMps = "mps";

const Json& member(const Json& object, const char* key) {
  static const Json kNull;
  if (!object.is_object()) return kNull;
  auto it = object.find(key);
  return it == object.end() ? kNull : *it;
}

std::optional<std::string> annotation(const Json& pod, const char* key) {
  const Json& v = member(member(pod, "metadata"), "annotations");
  if (!v.is_object()) return std::nullopt;
  auto it = v.find(key);
  if (it == v.end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

/// Whether any container or init container names `nvidia.com/gpu` in its limits or requests (the API
/// server makes requests of extended resources equal their limits).
bool has_whole_gpu(const Json& pod) {
  const Json& spec = member(pod, "spec");
  for (const char* list : {"containers", "initContainers"}) {
    const Json& containers = member(spec, list);
    if (!containers.is_array()) continue;
    for (const auto& c : containers) {
      const Json& resources = member(c, "resources");
      if (member(member(resources, "limits"), model::kGpuResource).is_null() &&
          member(member(resources, "requests"), model::kGpuResource).is_null()) {
        continue;
      }
      return true;
    }
  }
  return false;
}

/// A positive decimal integer with nothing after it.
bool positive_integer(const std::string& s) {
  if (s.empty() || s.size() > 18) return false;
  for (char ch : s) {
    if (ch < '0' || ch > '9') return false;
  }
  return std::strtoll(s.c_str(), nullptr, 10) > 0;
}

std::string pod_name(const Json& pod) {
  const Json& m = member(pod, "metadata");
  const Json& ns = member(m, "namespace");
  const Json& name = member(m, "name");
  const Json& generate = member(m, "generateName");
  std::string n = name.is_string() && !name.get<std::string>().empty() ? name.get<std::string>()
                  : generate.is_string()                              ? generate.get<std::string>() + "*"
                                                                      : std::string("(unnamed)");
  return (ns.is_string() ? ns.get<std::string>() + "/" : std::string()) + n;
}

bool ours(const Json& pod, const AdmissionOptions& options) {
  const Json& name = member(member(pod, "spec"), "schedulerName");
  return name.is_string() && name.get<std::string>() == options.scheduler_name;
}

/// The container that receives the shared GPU: `gpu-fraction-container-name` (searched among the
/// containers, then the init containers), else the first container.
std::optional<ContainerRef> gpu_container(const Json& pod, std::string* error) {
  const Json& spec = member(pod, "spec");
  const Json& containers = member(spec, "containers");
  if (!containers.is_array() || containers.empty()) {
    *error = "spec.containers: a pod needs at least one container";
    return std::nullopt;
  }
  auto wanted = annotation(pod, model::kGpuFractionContainerAnnotation);
  if (!wanted) return ContainerRef{false, 0};
  for (const auto& [list, init] : {std::pair{"containers", false}, std::pair{"initContainers", true}}) {
    const Json& cs = member(spec, list);
    if (!cs.is_array()) continue;
    for (size_t i = 0; i < cs.size(); ++i) {
      const Json& n = member(cs[i], "name");
      if (n.is_string() && n.get<std::string>() == *wanted) return ContainerRef{init, i};
    }
  }
  *error = std::string("annotation ") + model::kGpuFractionContainerAnnotation + "=\"" + *wanted + "\": the pod has no container of that name";
  return std::nullopt;
}

/// Sets env var `name` from key `name` of configmap `config_map`, replacing an entry of that name.
void set_env_from_config_map(Json& container, const std::string& name, const std::string& config_map) {
  Json env = Json::array();
  if (container.contains("env") && container["env"].is_array()) {
    for (auto& e : container["env"]) {
      if (!(e.is_object() && e.value("name", "") == name)) env.push_back(std::move(e));
    }
  }
  env.push_back({{"name", name},
                 {"valueFrom", {{"configMapKeyRef", {{"name", config_map}, {"key", name}}}}}});
  container["env"] = std::move(env);
}

void add_env_from(Json& container, const std::string& config_map) {
  Json& list = container["envFrom"];
  if (!list.is_array()) list = Json::array();
  for (const auto& e : list) {
    if (member(member(e, "configMapRef"), "name") == config_map) return;
  }
  list.push_back({{"configMapRef", {{"name", config_map}, {"optional", false}}}});
}

void set_config_map_volume(Json& spec, const std::string& config_map) {
  const std::string volume = config_map_volume(config_map);
  Json volumes = Json::array();
  if (spec.contains("volumes") && spec["volumes"].is_array()) {
    for (auto& v : spec["volumes"]) {
      if (!(v.is_object() && v.value("name", "") == volume)) volumes.push_back(std::move(v));
    }
  }
  volumes.push_back({{"name", volume}, {"configMap", {{"name", config_map}}}});
  spec["volumes"] = std::move(volumes);
}

}  // namespace

std::string validate_pod(const Json& pod, const AdmissionOptions& options) {
  if (!pod.is_object()) return "the object is not a JSON object";
  if (!ours(pod, options)) return "";
  const auto fraction = annotation(pod, model::kGpuFractionAnnotation);
  const auto memory = annotation(pod, model::kGpuMemoryAnnotation);
  const auto num_devices = annotation(pod, model::kGpuFractionNumDevicesAnnotation);
  const auto mps = annotation(pod, kMps);
  const bool whole = has_whole_gpu(pod);
  const bool shared = fraction.has_value() || memory.has_value();

  if (shared && !options.gpu_sharing) {
    return "pod " + pod_name(pod) +
           " requests a shared GPU (gpu-fraction / gpu-memory), but GPU sharing is disabled in this cluster";
  }
  if (!shared && mps == "true") return "annotation mps=\"true\": MPS is only supported with a GPU fraction request";
  if (fraction && whole) {
    return "annotation gpu-fraction cannot be combined with a whole-GPU resource request or limit "
           "(nvidia.com/gpu)";
  }
  if (memory && (fraction || whole)) {
    return "annotation gpu-memory cannot be combined with gpu-fraction or a whole-GPU resource (nvidia.com/gpu)";
  }
  if (num_devices && !shared) {
    return "annotation gpu-fraction-num-devices needs gpu-fraction or gpu-memory on the same pod";
  }
  if (memory && !positive_integer(*memory)) {
    return "annotation gpu-memory=\"" + *memory + "\": must be a positive integer (MiB)";
  }
  if (fraction) {
    errno = 0;
    char* end = nullptr;
    const double f = std::strtod(fraction->c_str(), &end);
    const bool parsed = !fraction->empty() && end == fraction->c_str() + fraction->size() && errno == 0;
    if (!parsed || !std::isfinite(f) || f <= 0.0 || f >= 1.0) {
      return "annotation gpu-fraction=\"" + *fraction + "\": must be a number greater than 0 and smaller than 1";
    }
  }
  if (num_devices && !positive_integer(*num_devices)) {
    return "annotation gpu-fraction-num-devices=\"" + *num_devices + "\": must be a positive integer";
  }
  if (shared) {
    std::string error;
    if (!gpu_container(pod, &error)) return error;
  }
  return "";
}

std::string mutate_pod(Json& pod, const AdmissionOptions& options, const RandomSuffix& random) {
  if (!pod.is_object() || !ours(pod, options)) return "";
  const bool shared = annotation(pod, model::kGpuFractionAnnotation).has_value() || annotation(pod, model::kGpuMemoryAnnotation).has_value();
  Json& spec = pod["spec"];
  if ((shared || has_whole_gpu(pod)) && !options.gpu_pod_runtime_class.empty() &&
      member(spec, "runtimeClassName").is_null()) {
    spec["runtimeClassName"] = options.gpu_pod_runtime_class;
  }
  if (!shared) return "";

  std::string error;
  auto ref = gpu_container(pod, &error);
  if (!ref) return error;
  std::string prefix = annotation(pod, model::kSharedGpuConfigMapAnnotation).value_or("");
  if (prefix.empty()) {
    const Json& owners = member(member(pod, "metadata"), "ownerReferences");
    std::string base;
    if (owners.is_array() && !owners.empty() && member(owners[0], "name").is_string()) {
      base = owners[0]["name"].get<std::string>();
    } else if (member(member(pod, "metadata"), "name").is_string()) {
      base = pod["metadata"]["name"].get<std::string>();
    }
    if (base.empty() && member(member(pod, "metadata"), "generateName").is_string()) {
      base = pod["metadata"]["generateName"].get<std::string>();
    }
    prefix = new_config_map_prefix(base, *ref, random(7));
    Json& annotations = pod["metadata"]["annotations"];
    if (!annotations.is_object()) annotations = Json::object();
    annotations[model::kSharedGpuConfigMapAnnotation] = prefix;
  }
  const std::string capabilities = capabilities_config_map(prefix, *ref);
  Json& container = spec[ref->init ? "initContainers" : "containers"][ref->index];
  for (const char* env : {model::kNvidiaVisibleDevices, model::kNumOfGpus, model::kGpuPortion}) {
    set_env_from_config_map(container, env, capabilities);
  }
  add_env_from(container, env_vars_config_map(prefix, *ref));
  set_config_map_volume(spec, capabilities);
  return "";
}

}  // namespace kai::admission
