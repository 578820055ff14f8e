// Store: the kubelet stand-in. Bound pods start (Running, with conditions and container statuses),
// graceful deletions are confirmed, and reservation pods report the GPU they hold, after a delay.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <set>

#include "k8s/apiserver/store_internal.hpp"
#include "k8s/model/fnv1a.hpp"

namespace kai::apiserver {

void Store::schedule_locked(const std::string& kind, const Json& pod) {
  actions_.push_back(Action{std::chrono::steady_clock::now() + options_.kubelet_delay, kind,
                            str_at(pod, "metadata", "namespace"), str_at(pod, "metadata", "name"),
                            str_at(pod, "metadata", "uid")});
}

void Store::set_kubelet(bool on) {
  std::lock_guard lock(mu_);
  options_.kubelet = on;
  if (!on) return;
  for (const auto& [k, p] : objects_["/pods"]) {
    if (!str_at((*p)["spec"], "nodeName").empty()) {
      schedule_locked(p->at("metadata").contains("deletionTimestamp") ? "confirm" : "run", *p);
    }
  }
}

void Store::set_reserve_gpus(bool on) {
  std::lock_guard lock(mu_);
  options_.reserve_gpus = on;
  if (!on) return;
  // Reservation pods that started while reporting was off report now, as slow ones would.
  for (const auto& [k, p] : objects_["/pods"]) {
    const Json& m = (*p)["metadata"];
    if (m.value("labels", Json::object()).value("app", "") != "kai-resource-reservation") continue;
    if (m.contains("deletionTimestamp") || str_at(*p, "status", "phase") != "Running") continue;
    if (m.value("annotations", Json::object()).contains("run.ai/reserve_for_gpu_index")) continue;
    schedule_locked("reserve", *p);
  }
}

namespace {

/// A stable, UUID-shaped GPU id for device `index` of `node` (real ones come from NVML).
std::string gpu_uuid(const std::string& node, int64_t index) {
  const uint64_t h = model::fnv1a64(node + "#" + std::to_string(index), 1469598103934665603ULL);
  char buf[64];
  std::snprintf(buf, sizeof buf, "GPU-%08x-%04x-%04x-%04x-%012llx", static_cast<unsigned>(h >> 32),
                static_cast<unsigned>((h >> 16) & 0xffff), static_cast<unsigned>(h & 0xffff),
                static_cast<unsigned>(index & 0xffff), static_cast<unsigned long long>(h & 0xffffffffffffull));
  return buf;
}

}  // namespace

std::string Store::free_gpu_uuid_locked(const Json& pod) {
  constexpr const char* kAnnotation = "run.ai/reserve_for_gpu_index";
  const std::string node = str_at(pod["spec"], "nodeName");
  auto& nodes = objects_["/nodes"];
  auto n = nodes.find(obj_key("", node));
  if (n == nodes.end()) return "";
  int64_t gpus = 0;
  const Json& alloc = (*n->second)["status"].value("allocatable", Json::object());
  if (alloc.contains("nvidia.com/gpu")) {
    const Json& q = alloc["nvidia.com/gpu"];
    gpus = q.is_string() ? std::atoll(q.get<std::string>().c_str()) : q.is_number() ? q.get<int64_t>() : 0;
  }
  std::set<std::string> taken;
  for (const auto& [key, p] : objects_["/pods"]) {
    if (str_at((*p)["spec"], "nodeName") != node || str_at(*p, "metadata", "uid") == str_at(pod, "metadata", "uid")) {
      continue;
    }
    const Json& ann = (*p)["metadata"].value("annotations", Json::object());
    if (ann.contains(kAnnotation) && ann[kAnnotation].is_string()) taken.insert(ann[kAnnotation].get<std::string>());
  }
  for (int64_t i = 0; i < gpus; ++i) {
    std::string uuid = gpu_uuid(node, i);
    if (!taken.count(uuid)) return uuid;
  }
  return "";  // every device is held: the reservation pod waits, as it would on a full node
}

void Store::run_actions_locked(std::chrono::steady_clock::time_point now) {
  if (actions_.empty()) return;
  std::vector<Action> due;
  auto split =
      std::stable_partition(actions_.begin(), actions_.end(), [&](const Action& a) { return a.at > now; });
  due.assign(split, actions_.end());
  actions_.erase(split, actions_.end());
  const auto& pods_info = *resources_.at("/v1/pods");
  for (const Action& a : due) {
    auto& objs = objects_["/pods"];
    auto it = objs.find(obj_key(a.ns, a.name));
    if (it == objs.end() || str_at(*it->second, "metadata", "uid") != a.uid) continue;
    if (a.kind == "confirm") {
      if (it->second->at("metadata").contains("deletionTimestamp")) erase_locked(pods_info, it->first);
      continue;
    }
    if (a.kind == "reserve") {  // a running reservation pod reports its device late
      const Json& old = *it->second;
      if (old["metadata"].contains("deletionTimestamp") || !options_.reserve_gpus) continue;
      std::string uuid = free_gpu_uuid_locked(old);
      if (uuid.empty()) continue;
      Json next = old;
      next["metadata"]["annotations"]["run.ai/reserve_for_gpu_index"] = uuid;
      replace_pod_locked(it->second, std::move(next));
      continue;
    }
    const Json& old = *it->second;
    if (old["metadata"].contains("deletionTimestamp") || str_at(old, "status", "phase") != "Pending")
      continue;
    Json next = old;
    const std::string t = now_rfc3339();
    Json& st = next["status"];
    st["phase"] = "Running";
    st["startTime"] = t;
    st["hostIP"] = "10.0.0.1";
    st["podIP"] = "10.244.0." + std::to_string(1 + rng()() % 250);
    Json conds = Json::array();
    for (const char* type : {"Initialized", "Ready", "ContainersReady", "PodScheduled"}) {
      conds.push_back(
          {{"type", type}, {"status", "True"}, {"lastProbeTime", nullptr}, {"lastTransitionTime", t}});
    }
    st["conditions"] = conds;
    Json statuses = Json::array();
    for (const auto& c : old["spec"].value("containers", Json::array())) {
      statuses.push_back({{"name", c.value("name", "")},
                          {"image", c.value("image", "")},
                          {"ready", true},
                          {"started", true},
                          {"restartCount", 0},
                          {"imageID", ""},
                          {"containerID", ""},
                          {"state", {{"running", {{"startedAt", t}}}}}});
    }
    st["containerStatuses"] = statuses;
    const Json& labels = old["metadata"].value("labels", Json::object());
    if (options_.reserve_gpus && labels.value("app", "") == "kai-resource-reservation") {
      if (std::string uuid = free_gpu_uuid_locked(old); !uuid.empty()) {
        next["metadata"]["annotations"]["run.ai/reserve_for_gpu_index"] = uuid;
      }
    }
    replace_pod_locked(it->second, std::move(next));
  }
}

}  // namespace kai::apiserver
