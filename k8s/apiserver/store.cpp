// Store: construction, the background thread (bookmarks, kubelet stand-in), the output form of
// stored objects and the namespace check. The other members are defined by concern in store_*.cpp.
#include "k8s/apiserver/store.hpp"

#include "k8s/apiserver/event_versions.hpp"
#include "k8s/apiserver/store_internal.hpp"

namespace kai::apiserver {

// ------------------------------------------------------------------------------------ lifecycle

Store::Store(StoreOptions options) : options_(options) {
  register_builtins();
  for (const char* ns : {"default", "kube-system", "kube-public", "kube-node-lease"}) {
    create(*find("", "v1", "namespaces"), "", Json{{"metadata", {{"name", ns}}}});
  }
  for (auto [name, value] : {std::pair<const char*, int64_t>{"system-cluster-critical", 2000000000},
                             std::pair<const char*, int64_t>{"system-node-critical", 2000001000}}) {
    create(*find("scheduling.k8s.io", "v1", "priorityclasses"), "",
           Json{{"metadata", {{"name", name}}}, {"value", value}, {"description", "built in"}});
  }
}

Store::~Store() {
  stop();
}

void Store::start() {
  std::lock_guard lock(mu_);
  if (running_) return;
  running_ = true;
  stopping_ = false;
  thread_ = std::thread([this] { tick(); });
}

void Store::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    cv_.notify_all();
  }
  if (thread_.joinable()) thread_.join();
  std::lock_guard lock(mu_);
  running_ = false;
  for (auto& [id, w] : watchers_) w.sink.close();
  watchers_.clear();
}

void Store::tick() {
  auto next_bookmark = std::chrono::steady_clock::now() + options_.bookmark_interval;
  std::unique_lock lock(mu_);
  while (!stopping_) {
    cv_.wait_for(lock, std::chrono::milliseconds(10));
    if (stopping_) break;
    const auto now = std::chrono::steady_clock::now();
    run_actions_locked(now);
    if (now >= next_bookmark) {
      next_bookmark = now + options_.bookmark_interval;
      for (auto& [id, w] : watchers_) {
        if (!w.bookmarks) continue;
        Json ev = {{"type", "BOOKMARK"},
                   {"object",
                    {{"kind", w.kind},
                     {"apiVersion", w.api_version},
                     {"metadata", {{"resourceVersion", std::to_string(rv_)}}}}}};
        w.sink.push(std::make_shared<const std::string>(ev.dump() + "\n"));
      }
    }
  }
}

// ------------------------------------------------------------------------------------ helpers

Json Store::output(const ResourceInfo& r, const Json& stored) const {
  if (served_as_stored(r, stored)) return stored;
  if (r.group == "events.k8s.io") return event_from_core(stored);
  Json out = stored;
  out["apiVersion"] = r.api_version();
  out["kind"] = r.kind;
  return out;
}

void Store::check_namespace_locked(const ResourceInfo& r, const std::string& ns) const {
  if (!r.namespaced) return;
  const auto& nss = objects_.find("/namespaces");
  if (nss == objects_.end() || !nss->second.count(obj_key("", ns))) {
    throw not_found("", "namespaces", ns);
  }
}

size_t Store::object_count() const {
  std::lock_guard lock(mu_);
  size_t n = 0;
  for (const auto& [k, o] : objects_) n += o.size();
  return n;
}

}  // namespace kai::apiserver
