#include "actors/daemon/owner_watch.hpp"

#include <spdlog/spdlog.h>

#include <utility>

#include "k8s/model/log_redaction.hpp"

namespace kai::daemon {

OwnerWatch::OwnerWatch(k8s::KubeClient& client, Deliver deliver) : client_(client), deliver_(std::move(deliver)) {}

OwnerWatch::~OwnerWatch() {
  stop();
}

std::vector<std::string> OwnerWatch::discover() {
  std::vector<std::string> warnings;
  auto found = k8s::discover_owner_kinds(client_, warnings);
  for (const auto& w : warnings) spdlog::warn("{}", w);
  std::lock_guard lock(mu_);
  if (!found) {
    spdlog::warn("owner kinds not discovered: {}", found.message());
  } else {
    for (const auto& r : *found) {
      bool known = false;
      for (const auto& had : resources_) known = known || had.group_kind == r.group_kind;
      if (known) continue;
      resources_.push_back(r);
      if (started_) {
        spdlog::info("owner kind {} is served now: watching {}", r.group_kind, r.list_path);
        start_kind_locked(r, {});
      }
    }
  }
  std::vector<std::string> kinds;
  for (const auto& r : resources_) kinds.push_back(r.group_kind);
  return kinds;
}

void OwnerWatch::start_kind_locked(const k8s::OwnerResource& r, Known known, const std::string& resume_from) {
  k8s::ReflectorOptions ro;
  ro.kind = r.group_kind;
  ro.list_path = r.list_path;
  auto reflector = std::make_unique<k8s::Reflector>(
      client_, ro,
      [this, r](k8s::ReflectorEvent ev) {
        if (ev.type != k8s::ReflectorEventType::kBookmark) {
          ev.object_json = model::owner_for_log(ev.object_json, r.group_kind, r.api_version);
        }
        deliver_(std::move(ev));
      },
      [kind = r.group_kind](const std::string& message) { spdlog::warn("reflector {}: {}", kind, message); });
  reflector->start(resume_from, std::move(known));
  reflectors_[r.group_kind] = std::move(reflector);
}

void OwnerWatch::start(std::map<std::string, Known>& known, const std::map<std::string, std::string>& positions) {
  {
    std::lock_guard lock(mu_);
    started_ = true;
    for (const auto& r : resources_) {
      const auto at = positions.find(r.group_kind);
      start_kind_locked(r, std::move(known[r.group_kind]), at == positions.end() ? std::string() : at->second);
    }
  }
  k8s::ReflectorOptions ro;
  ro.kind = "CustomResourceDefinition";
  ro.list_path = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
  crd_watch_ = std::make_unique<k8s::Reflector>(
      client_, ro, [this](const k8s::ReflectorEvent& ev) { on_crd_event(ev); },
      [](const std::string& message) { spdlog::warn("reflector CustomResourceDefinition: {}", message); });
  crd_watch_->start();
}

void OwnerWatch::on_crd_event(const k8s::ReflectorEvent& ev) {
  if (ev.type == k8s::ReflectorEventType::kBookmark) {
    crds_listed_ = crds_listed_ || ev.from_list;
    return;
  }
  // The first list shows the CRDs discovery already saw; a change after it may serve a new kind.
  if (crds_listed_) discover();
}

bool OwnerWatch::relist(const std::string& kind, Known known) {
  std::lock_guard lock(mu_);
  auto it = reflectors_.find(kind);
  if (it == reflectors_.end()) return false;
  it->second->relist(std::move(known));
  return true;
}

void OwnerWatch::stop() {
  if (crd_watch_) crd_watch_->stop();  // first: no discovery starts a reflector after this
  std::lock_guard lock(mu_);
  for (auto& [kind, r] : reflectors_) r->stop();
}

}  // namespace kai::daemon
