#include "actors/gpu_sharing/sharing_chain.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <set>

#include "k8s/admission/gpu_sharing_names.hpp"

namespace kai::gpu_sharing {

namespace {

/// Lower-cases and replaces what a pod name cannot hold, so that any node name gives a valid name.
std::string name_part(const std::string& s) {
  std::string out;
  for (char ch : s) {
    if (ch >= 'A' && ch <= 'Z') ch = static_cast<char>(ch - 'A' + 'a');
    out += ((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-' || ch == '.') ? ch : '-';
  }
  return out;
}

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

}  // namespace

SharingChain::SharingChain(SharingApi& api, ChainOptions options, std::function<std::string()> random5)
    : api_(api), options_(std::move(options)), random5_(std::move(random5)) {}

std::mutex& SharingChain::group_mutex(const std::string& group) {
  return group_mutexes_[std::hash<std::string>{}(group) % group_mutexes_.size()];
}

std::string SharingChain::format_portion(double portion) {
  char buf[32];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, portion);
    if (std::strtod(buf, nullptr) == portion) break;
  }
  return buf;
}

std::string SharingChain::reservation_name(const std::string& node) {
  // Pod names may have 253 characters; the random suffix must survive any cut.
  std::string base = "gpu-reservation-" + name_part(node);
  if (base.size() > 240) base.resize(240);
  while (!base.empty() && (base.back() == '-' || base.back() == '.')) base.pop_back();
  return base + "-" + random5_();
}

model::Result<std::string> SharingChain::reserve(const std::string& group, const SharedBind& bind, bool* created,
                                                 std::string* created_name) {
  const std::string& node = bind.node;
  *created = false;
  auto existing = api_.list_reservation_pods(group, "");
  if (!existing.is_ok()) return model::Status::error("listing reservation pods of group " + group + ": " + existing.message());
  for (const auto& r : existing.value()) {
    if (r.terminating) continue;
    if (r.node != node) {
      // A group lives on one device of one node; a reservation elsewhere is stale state from before
      // the group moved. It is not ours to use.
      continue;
    }
    if (!r.gpu_uuid.empty()) return r.gpu_uuid;
    // Created (by us, before a restart, or by a concurrent chain that gave up) but not yet reported:
    // wait for it rather than creating a second one (KAI #2153: double reservations).
    auto uuid = api_.wait_for_gpu_uuid(r.name, options_.reservation_timeout);
    if (uuid.is_ok()) return uuid;
    (void)api_.delete_pod(kReservationNamespace, r.name, r.uid);
    return model::Status::error("reservation pod " + r.name + " of GPU group " + group +
                                " did not report its GPU: " + uuid.message() + "; it was deleted");
  }
  ReservationPodSpec spec;
  spec.name = reservation_name(node);
  spec.node = node;
  spec.group = group;
  spec.image = options_.image;
  spec.runtime_class = options_.runtime_class;
  spec.tolerations = bind.tolerations;
  auto uid = api_.create_reservation_pod(spec);
  if (!uid.is_ok()) {
    return model::Status::error("creating reservation pod " + spec.name + " for GPU group " + group + " on node " +
                                node + ": " + uid.message());
  }
  *created = true;
  *created_name = spec.name;
  auto uuid = api_.wait_for_gpu_uuid(spec.name, options_.reservation_timeout);
  if (!uuid.is_ok()) {
    // A timeout frees the device: the reservation pod goes, and the next cycle decides again.
    (void)api_.delete_pod(kReservationNamespace, spec.name, uid.value());
    return model::Status::error("reservation pod " + spec.name + " for GPU group " + group + " on node " + node +
                                " did not report its GPU (" + uuid.message() + "); it was deleted");
  }
  return uuid;
}

ChainResult SharingChain::prepare(const SharedBind& bind) {
  ChainResult result;
  const std::string pod = bind.ns + "/" + bind.name;
  if (bind.groups.empty()) {
    result.status = model::Status::error("pod " + pod + ": a shared-GPU bind without a GPU group");
    return result;
  }
  for (const auto& group : bind.groups) {
    std::lock_guard lock(group_mutex(group));
    bool created = false;
    std::string created_name;
    auto uuid = reserve(group, bind, &created, &created_name);
    if (created) result.created_reservations.push_back(created_name);
    if (!uuid.is_ok()) {
      result.status = model::Status::error("pod " + pod + ": " + uuid.message());
      rollback(bind);
      return result;
    }
    result.gpu_uuids.push_back(uuid.value());
  }

  if (bind.config_map_prefix.empty()) {
    // Not mutated at admission (no webhook): the pod binds, but its containers will not see the
    // shared device through the configmaps; say so on the pod.
    api_.warn(bind.ns, bind.name, "GPUSharingNotConfigured",
              "pod was not prepared by the kai-scheduler admission webhook (no runai/shared-gpu-configmap "
              "annotation): it is bound to GPU " + join(result.gpu_uuids, ",") +
                  " but NVIDIA_VISIBLE_DEVICES and GPU_PORTION are not set for it");
  } else {
    admission::ContainerRef ref;
    ref.init = !bind.container_suffix.empty() && bind.container_suffix[0] == 'i';
    ref.index = static_cast<size_t>(std::atoi(bind.container_suffix.c_str() + (ref.init ? 1 : 0)));
    const std::string portion = format_portion(bind.portion);
    const std::string capabilities = admission::capabilities_config_map(bind.config_map_prefix, ref);
    const std::string env_vars = admission::env_vars_config_map(bind.config_map_prefix, ref);
    auto s = api_.upsert_config_map(bind.ns, capabilities, bind.name, bind.uid,
                                    {{admission::kNvidiaVisibleDevices, join(result.gpu_uuids, ",")},
                                     {admission::kGpuPortion, portion},
                                     {admission::kNumOfGpus, portion}});
    if (s.is_ok()) s = api_.upsert_config_map(bind.ns, env_vars, bind.name, bind.uid, {});
    if (!s.is_ok()) {
      result.status = model::Status::error("pod " + pod + ": GPU-sharing configmaps: " + s.message());
      rollback(bind);
      return result;
    }
  }

  std::map<std::string, std::optional<std::string>> labels;
  if (bind.groups.size() == 1) {
    labels[kGpuGroupLabel] = bind.groups[0];
  } else {
    for (const auto& g : bind.groups) labels[std::string(kGpuGroupLabel) + "/" + g] = g;
  }
  if (auto s = api_.patch_pod_labels(bind.ns, bind.name, labels); !s.is_ok()) {
    result.status = model::Status::error("pod " + pod + ": labelling with its GPU group: " + s.message());
    rollback(bind);
    return result;
  }
  return result;
}

void SharingChain::rollback(const SharedBind& bind) {
  std::map<std::string, std::optional<std::string>> labels;
  if (bind.groups.size() == 1) {
    labels[kGpuGroupLabel] = std::nullopt;
  } else {
    for (const auto& g : bind.groups) labels[std::string(kGpuGroupLabel) + "/" + g] = std::nullopt;
  }
  // Best effort: a pod that is gone has no labels to remove. Configmaps are owned by the pod and go
  // with it; on a retry they are overwritten.
  (void)api_.patch_pod_labels(bind.ns, bind.name, labels);
}

std::vector<std::string> SharingChain::resync_node(const std::string& node, const std::vector<std::string>& groups_in_use) {
  std::vector<std::string> deleted;
  auto pods = api_.list_reservation_pods("", node);
  if (!pods.is_ok()) return deleted;
  const std::set<std::string> live(groups_in_use.begin(), groups_in_use.end());
  // Per group, the reservation to keep: the first that reported its GPU (running pods use that UUID),
  // else the first. Every other one is a double reservation (KAI #2153) and goes.
  std::map<std::string, const ReservationPod*> keep;
  for (const auto& r : pods.value()) {
    if (r.terminating || !live.count(r.group)) continue;
    const ReservationPod*& k = keep[r.group];
    if (k == nullptr || (k->gpu_uuid.empty() && !r.gpu_uuid.empty())) k = &r;
  }
  for (const auto& r : pods.value()) {
    if (r.terminating) continue;
    auto k = keep.find(r.group);
    if (k != keep.end() && k->second == &r) continue;
    std::lock_guard lock(group_mutex(r.group));
    if (api_.delete_pod(kReservationNamespace, r.name, r.uid).is_ok()) deleted.push_back(r.name);
  }
  return deleted;
}

}  // namespace kai::gpu_sharing
