#include "k8s/admission/gpu_sharing_names.hpp"

namespace kai::admission {

namespace {
constexpr size_t kMaxVolumeName = 63;
constexpr std::string_view kSharedGpu = "shared-gpu";
constexpr size_t kRandomChars = 7;
}  // namespace

std::string new_config_map_prefix(std::string_view base, const ContainerRef& c, std::string_view random7) {
  // Budget: the volume name (`<prefix>-vol`) may not exceed 63 characters; the prefix spends the
  // random part, two hyphens and "-vol" (13), "shared-gpu", "-<index>", and "-evar" for the envFrom
  // configmap, the longest name derived from it.
  const size_t fixed = kRandomChars + 6 + kSharedGpu.size() + std::to_string(c.index).size() + 1 + 5;
  const size_t max_base = kMaxVolumeName - fixed;
  if (base.size() > max_base) base = base.substr(0, max_base);
  // A cut may leave a trailing '-' or '.'; the hyphen that follows would then make an invalid or
  // doubled separator, so trim it.
  while (!base.empty() && (base.back() == '-' || base.back() == '.')) base.remove_suffix(1);
  if (base.empty()) base = "pod";  // a name must start with an alphanumeric character
  return std::string(base) + "-" + std::string(random7) + "-" + std::string(kSharedGpu);
}

}  // namespace kai::admission
