#include "actors/gpu_sharing/sharing_chain.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>

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

bool ChainState::ready() const {
  if (groups.empty()) return false;
  for (const auto& g : groups) {
    if (g.gpu_uuid.empty()) return false;
  }
  return true;
}

std::vector<std::string> ChainState::gpu_uuids() const {
  std::vector<std::string> out;
  for (const auto& g : groups) out.push_back(g.gpu_uuid);
  return out;
}

model::Status SharingChain::find_or_create(const std::string& group, const SharedBind& bind, ChainState& state,
                                           ChainState::Group& g) {
  const std::string& node = bind.node;
  auto existing = api_.list_reservation_pods(group, "");
  if (!existing.is_ok()) return existing.status().with_context("listing reservation pods of group " + group);
  for (const auto& r : existing.value()) {
    // A group lives on one device of one node; a reservation elsewhere is stale state from before the
    // group moved, and a terminating one is going: neither is ours to use.
    if (r.terminating || r.node != node) continue;
    // Made by an earlier bind (one abandoned by a crash, a concurrent one): used rather than doubled
    // (KAI #2153), reported or not.
    g.reservation = r.name;
    g.reservation_uid = r.uid;
    g.gpu_uuid = r.gpu_uuid;
    return model::Status::ok();
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
    return uid.status().with_context("creating reservation pod " + spec.name + " for GPU group " + group +
                                     " on node " + node);
  }
  g.reservation = spec.name;
  g.reservation_uid = uid.value();
  g.created = true;
  state.created_reservations.push_back(spec.name);
  return model::Status::ok();
}

StepResult SharingChain::advance(const SharedBind& bind, ChainState& state) {
  const std::string pod = bind.ns + "/" + bind.name;
  if (bind.groups.empty()) {
    return {ChainStep::kFailed,
            model::Status::error(model::Code::kInvalid, "pod " + pod + ": a shared-GPU bind without a GPU group")};
  }
  state.groups.resize(bind.groups.size());
  bool waiting = false;
  for (size_t i = 0; i < bind.groups.size(); ++i) {
    const std::string& group = bind.groups[i];
    ChainState::Group& g = state.groups[i];
    if (!g.gpu_uuid.empty()) continue;
    if (g.reservation.empty()) {
      std::lock_guard lock(group_mutex(group));
      if (auto s = find_or_create(group, bind, state, g); !s.is_ok()) {
        return {ChainStep::kFailed, s.with_context("pod " + pod)};
      }
      if (!g.gpu_uuid.empty()) continue;
    }
    auto uuid = api_.reported_gpu_uuid(g.reservation);
    if (!uuid.is_ok()) {
      // An API server that does not answer now may answer at the next step; the wait is bounded by
      // the reservation timeout all the same.
      if (uuid.status().code() == model::Code::kUnavailable) {
        waiting = true;
        continue;
      }
      return {ChainStep::kFailed, uuid.status().with_context("pod " + pod + ": reservation pod " + g.reservation +
                                                             " of GPU group " + group)};
    }
    if (uuid.value().empty()) {
      waiting = true;
    } else {
      g.gpu_uuid = uuid.value();
    }
  }
  return {waiting ? ChainStep::kWaiting : ChainStep::kReady, model::Status::ok()};
}

model::Status SharingChain::give_up(const SharedBind& bind, ChainState& state) {
  std::vector<std::string> gone;
  for (size_t i = 0; i < state.groups.size() && i < bind.groups.size(); ++i) {
    ChainState::Group& g = state.groups[i];
    if (!g.gpu_uuid.empty() || g.reservation.empty()) continue;
    // A reservation pod that did not report in the whole timeout is stuck: it goes, and with it the
    // device it may hold; the next cycle decides again.
    std::lock_guard lock(group_mutex(bind.groups[i]));
    (void)api_.delete_pod(model::kReservationNamespace, g.reservation, g.reservation_uid);
    gone.push_back(g.reservation + " (GPU group " + bind.groups[i] + ")");
  }
  return model::Status::error(
      model::Code::kTimedOut,
      "pod " + bind.ns + "/" + bind.name + ": reservation pod " + join(gone, ", ") + " on node " + bind.node +
          " did not report its GPU within " + std::to_string(options_.reservation_timeout.count() / 1000) +
          " s; it was deleted");
}

model::Status SharingChain::finish(const SharedBind& bind, const ChainState& state) {
  const std::string pod = bind.ns + "/" + bind.name;
  const std::string devices = join(state.gpu_uuids(), ",");
  if (bind.config_map_prefix.empty()) {
    // Not mutated at admission (no webhook): the pod binds, but its containers will not see the
    // shared device through the configmaps; say so on the pod.
    api_.warn(bind.ns, bind.name, "GPUSharingNotConfigured",
              "pod was not prepared by the kai-scheduler admission webhook (no runai/shared-gpu-configmap "
              "annotation): it is bound to GPU " + devices +
                  " but NVIDIA_VISIBLE_DEVICES and GPU_PORTION are not set for it");
  } else {
    admission::ContainerRef ref;
    ref.init = !bind.container_suffix.empty() && bind.container_suffix[0] == 'i';
    ref.index = static_cast<size_t>(std::atoi(bind.container_suffix.c_str() + (ref.init ? 1 : 0)));
    const std::string portion = format_portion(bind.portion);
    const std::string capabilities = admission::capabilities_config_map(bind.config_map_prefix, ref);
    const std::string env_vars = admission::env_vars_config_map(bind.config_map_prefix, ref);
    auto s = api_.upsert_config_map(bind.ns, capabilities, bind.name, bind.uid,
                                    {{model::kNvidiaVisibleDevices, devices},
                                     {model::kGpuPortion, portion},
                                     {model::kNumOfGpus, portion}});
    if (s.is_ok()) s = api_.upsert_config_map(bind.ns, env_vars, bind.name, bind.uid, {});
    if (!s.is_ok()) {
      rollback(bind);
      return s.with_context("pod " + pod + ": GPU-sharing configmaps");
    }
  }

  std::map<std::string, std::optional<std::string>> labels;
  if (bind.groups.size() == 1) {
    labels[model::kGpuGroupLabel] = bind.groups[0];
  } else {
    for (const auto& g : bind.groups) labels[std::string(model::kGpuGroupLabel) + "/" + g] = g;
  }
  if (auto s = api_.patch_pod_labels(bind.ns, bind.name, labels); !s.is_ok()) {
    rollback(bind);
    return s.with_context("pod " + pod + ": labelling with its GPU group");
  }
  return model::Status::ok();
}

void SharingChain::rollback(const SharedBind& bind) {
  std::map<std::string, std::optional<std::string>> labels;
  if (bind.groups.size() == 1) {
    labels[model::kGpuGroupLabel] = std::nullopt;
  } else {
    for (const auto& g : bind.groups) labels[std::string(model::kGpuGroupLabel) + "/" + g] = std::nullopt;
  }
  // Best effort: a pod that is gone has no labels to remove. Configmaps are owned by the pod and go
  // with it; on a retry they are overwritten.
  (void)api_.patch_pod_labels(bind.ns, bind.name, labels);
}

}  // namespace kai::gpu_sharing
