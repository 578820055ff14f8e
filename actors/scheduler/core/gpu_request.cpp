#include "actors/scheduler/core/gpu_request.hpp"

#include <cctype>
#include <string>

#include "actors/scheduler/core/workload_groupers.hpp"

namespace kai::core {
namespace {

using model::Result;
using model::Status;

// A plain decimal ("0.5", ".25", "1") to milli-units, rounded to nearest. KAI reads these annotations
// with strconv.ParseFloat; exponents and suffixes are refused here to keep the error message clear.
bool parse_decimal_milli(const std::string& text, int64_t& out) {
  if (text.empty() || text.size() > 32) return false;
  size_t i = 0;
  bool negative = false;
  if (text[i] == '-' || text[i] == '+') negative = text[i++] == '-';
  __int128 whole = 0;
  int64_t frac_digits[4] = {0, 0, 0, 0};
  int nfrac = 0;
  bool any_digit = false;
  for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i) {
    whole = whole * 10 + (text[i] - '0');
    any_digit = true;
    if (whole > 1'000'000'000) return false;
  }
  if (i < text.size() && text[i] == '.') {
    ++i;
    for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i) {
      if (nfrac < 4) frac_digits[nfrac] = text[i] - '0';
      ++nfrac;
      any_digit = true;
    }
  }
  if (!any_digit || i != text.size()) return false;
  int64_t milli = static_cast<int64_t>(whole) * 1000 + frac_digits[0] * 100 + frac_digits[1] * 10 +
                  frac_digits[2] + (frac_digits[3] >= 5 ? 1 : 0);
  out = negative ? -milli : milli;
  return true;
}

bool parse_positive_int(const std::string& text, int64_t& out) {
  if (text.empty() || text.size() > 12) return false;
  int64_t v = 0;
  for (char c : text) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    v = v * 10 + (c - '0');
  }
  if (v <= 0) return false;
  out = v;
  return true;
}

/// Looked up without spelling the key as a std::string: every pod of a session build asks for three.
const std::string* annotation(const model::Pod& pod, const char* key) {
  return find_in(pod.meta.annotations, key);
}

Status invalid(const char* key, const std::string& value, const std::string& why) {
  return Status::error(std::string("annotation ") + key + "=\"" + value + "\": " + why);
}

}  // namespace

Result<GpuRequest> parse_gpu_request(const model::Pod& pod, int64_t whole_gpu_milli, bool has_mig_request) {
  GpuRequest r;
  const std::string* fraction = annotation(pod, model::kGpuFractionAnnotation);
  const std::string* memory = annotation(pod, model::kGpuMemoryAnnotation);
  const std::string* devices = annotation(pod, model::kGpuFractionNumDevicesAnnotation);

  if (fraction && memory) {
    return Status::error("annotations gpu-fraction and gpu-memory cannot be used together");
  }
  if ((fraction || memory) && whole_gpu_milli > 0) {
    return Status::error(std::string("annotation ") +
                         (fraction ? model::kGpuFractionAnnotation : model::kGpuMemoryAnnotation) +
                         " cannot be combined with a " + model::kGpuResource + " request");
  }
  if (fraction) {
    int64_t milli = 0;
    if (!parse_decimal_milli(*fraction, milli)) {
      return invalid(model::kGpuFractionAnnotation, *fraction, "not a number");
    }
    if (milli <= 0 || milli > 1000) {
      return invalid(model::kGpuFractionAnnotation, *fraction, "must be greater than 0 and at most 1");
    }
    r.kind = GpuRequestKind::kFraction;
    r.fraction_milli = milli;
  } else if (memory) {
    int64_t mib = 0;
    if (!parse_positive_int(*memory, mib)) {
      return invalid(model::kGpuMemoryAnnotation, *memory, "must be a positive integer number of MiB");
    }
    r.kind = GpuRequestKind::kMemory;
    r.memory_mib = mib;
  }
  if (devices) {
    int64_t n = 0;
    if (!parse_positive_int(*devices, n) || n > 1024) {
      return invalid(model::kGpuFractionNumDevicesAnnotation, *devices, "must be a positive integer");
    }
    if (!r.is_shared()) {
      return invalid(model::kGpuFractionNumDevicesAnnotation, *devices,
                     "is only allowed with gpu-fraction or gpu-memory");
    }
    r.num_devices = static_cast<int32_t>(n);
  }
  if (r.is_shared()) return r;
  if (whole_gpu_milli > 0) {
    if (whole_gpu_milli % 1000 != 0) {
      return Status::error(
          "resource nvidia.com/gpu must be a whole number of devices (use annotation "
          "gpu-fraction for a part of a device)");
    }
    if (has_mig_request) return Status::error("nvidia.com/gpu cannot be combined with MIG instance requests");
    r.kind = GpuRequestKind::kWhole;
    r.whole_milli = whole_gpu_milli;
  } else if (has_mig_request) {
    r.kind = GpuRequestKind::kMig;
  }
  return r;
}

int64_t memory_to_fraction_milli(int64_t memory_mib, int64_t device_memory_mib) {
  if (device_memory_mib <= 0) return 1000;
  // ceil(mem / device * 100) / 100, in integers.
  const int64_t hundredths = (memory_mib * 100 + device_memory_mib - 1) / device_memory_mib;
  return hundredths * 10;
}

}  // namespace kai::core
