#pragma once
// GPU-group ids: the value of the runai-gpu-group label that names the shared device a fraction pod
// and its reservation pod hold (docs/gpu-sharing.md). Version-4 UUIDs, as KAI's.

#include <cstddef>
#include <cstdint>
#include <string>

namespace kai::core {

/// The UUID text of the 128 bits hi:lo, with the version (4) and variant bits set.
std::string format_gpu_group_id(uint64_t hi, uint64_t lo);

/// The group of device `index` of a running shared pod that names none (no runai-gpu-group label),
/// made from the pod's uid and the index: the same pod has the same one in every cycle, and the
/// seeded ids of new groups (Session::new_gpu_group_id) do not depend on how many such pods were
/// listed before them.
std::string unnamed_gpu_group_id(const std::string& pod_uid, size_t index);

}  // namespace kai::core
