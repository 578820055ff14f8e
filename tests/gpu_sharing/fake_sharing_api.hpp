#pragma once
// An in-memory SharingApi (actors/gpu_sharing/sharing_api.hpp) for the chain's tests and the binder's
// (tests/daemon/): the cluster state the chain touches, with reservation pods that report a GPU UUID
// after a while, or never.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "actors/gpu_sharing/sharing_chain.hpp"

namespace kai::gpu_sharing::fakes {

/// The cluster state the chain touches, behind a mutex; reservation pods get their UUID
/// `report_after` after creation unless `never_report`.
class FakeCluster : public SharingApi {
 public:
  std::chrono::milliseconds report_after{5};
  bool never_report = false;
  bool fail_config_maps = false;
  bool api_down = false;
  std::atomic<int> reads{0};

  model::Result<std::vector<ReservationPod>> list_reservation_pods(const std::string& group,
                                                                   const std::string& node) override {
    std::lock_guard lock(mu_);
    std::vector<ReservationPod> out;
    for (auto& [name, r] : reservations_) {
      refresh(r);
      if ((!group.empty() && r.pod.group == group) || (!node.empty() && r.pod.node == node)) out.push_back(r.pod);
    }
    return out;
  }
  model::Result<std::string> create_reservation_pod(const ReservationPodSpec& spec) override {
    std::lock_guard lock(mu_);
    if (reservations_.count(spec.name)) return model::Status::error("409 AlreadyExists");
    Reservation r;
    r.pod = {spec.name, "uid-" + spec.name, spec.node, spec.group, "", false};
    r.created = std::chrono::steady_clock::now();
    r.spec = spec;
    reservations_[spec.name] = r;
    ++creates;
    return r.pod.uid;
  }
  model::Result<std::string> reported_gpu_uuid(const std::string& name) override {
    std::lock_guard lock(mu_);
    ++reads;
    if (api_down) return model::Status::error(model::Code::kUnavailable, "no answer: connection refused");
    auto it = reservations_.find(name);
    if (it == reservations_.end()) return model::Status::error(model::Code::kNotFound, "the reservation pod is gone");
    refresh(it->second);
    return it->second.pod.gpu_uuid;
  }
  /// Deletes a reservation pod as someone else would.
  void remove(const std::string& name) {
    std::lock_guard lock(mu_);
    reservations_.erase(name);
  }
  model::Status delete_pod(const std::string& ns, const std::string& name, const std::string& uid) override {
    std::lock_guard lock(mu_);
    EXPECT_EQ(ns, model::kReservationNamespace);
    auto it = reservations_.find(name);
    if (it == reservations_.end() || it->second.pod.uid != uid) return model::Status::error("404 / uid precondition");
    reservations_.erase(it);
    deleted.push_back(name);
    return model::Status::ok();
  }
  model::Status upsert_config_map(const std::string& ns, const std::string& name, const std::string& owner_name,
                                  const std::string& owner_uid, const std::map<std::string, std::string>& data) override {
    std::lock_guard lock(mu_);
    if (fail_config_maps) return model::Status::error("403 forbidden");
    auto& cm = config_maps[ns + "/" + name];
    cm.owner = owner_name + "/" + owner_uid;
    for (const auto& [k, v] : data) cm.data[k] = v;
    return model::Status::ok();
  }
  model::Status patch_pod_labels(const std::string& ns, const std::string& name,
                                 const std::map<std::string, std::optional<std::string>>& labels) override {
    std::lock_guard lock(mu_);
    auto& l = pod_labels[ns + "/" + name];
    for (const auto& [k, v] : labels) {
      if (v) {
        l[k] = *v;
      } else {
        l.erase(k);
      }
    }
    return model::Status::ok();
  }
  void warn(const std::string& ns, const std::string& name, const std::string& reason, const std::string&) override {
    std::lock_guard lock(mu_);
    warnings.push_back(ns + "/" + name + " " + reason);
  }

  size_t reservations_on(const std::string& node) {
    std::lock_guard lock(mu_);
    size_t n = 0;
    for (const auto& [name, r] : reservations_) n += r.pod.node == node;
    return n;
  }
  const ReservationPodSpec& spec_of(const std::string& name) { return reservations_.at(name).spec; }
  /// A reservation pod left behind (e.g. by a crashed binder).
  void add_reservation(const std::string& name, const std::string& node, const std::string& group,
                       const std::string& uuid) {
    std::lock_guard lock(mu_);
    Reservation r;
    r.pod = {name, "uid-" + name, node, group, uuid, false};
    r.created = std::chrono::steady_clock::now();
    r.reported = !uuid.empty();
    reservations_[name] = r;
  }

  struct ConfigMap {
    std::string owner;
    std::map<std::string, std::string> data;
  };
  std::map<std::string, ConfigMap> config_maps;
  std::map<std::string, std::map<std::string, std::string>> pod_labels;
  std::vector<std::string> warnings;
  std::vector<std::string> deleted;
  std::atomic<int> creates{0};

 private:
  struct Reservation {
    ReservationPod pod;
    ReservationPodSpec spec;
    std::chrono::steady_clock::time_point created;
    bool reported = false;
  };
  void refresh(Reservation& r) {
    if (r.reported || never_report || std::chrono::steady_clock::now() - r.created < report_after) return;
    r.reported = true;
    r.pod.gpu_uuid = "GPU-" + r.pod.node + "-" + std::to_string(next_gpu_++);
  }
  std::mutex mu_;
  std::map<std::string, Reservation> reservations_;
  int next_gpu_ = 0;
};

inline std::function<std::string()> counter_suffix() {
  auto n = std::make_shared<std::atomic<int>>(0);
  return [n] {
    char buf[8];
    std::snprintf(buf, sizeof buf, "%05d", n->fetch_add(1));
    return std::string(buf);
  };
}

}  // namespace kai::gpu_sharing::fakes
