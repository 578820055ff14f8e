// Store: watches. Every change is recorded in the bounded history and fanned out to the matching
// watchers, one serialized line shared among the watchers of an event.
#include <exception>
#include <stdexcept>

#include "k8s/apiserver/event_versions.hpp"
#include "k8s/apiserver/store_internal.hpp"
#include "k8s/apiserver/table.hpp"

namespace kai::apiserver {

void Store::emit_locked(const std::string& storage_key, const std::string& type,
                        std::shared_ptr<const Json> obj, std::shared_ptr<const Json> old) {
  Event e{rv_, storage_key, type, std::move(obj), std::move(old)};
  LineCache cache;
  for (auto& [id, w] : watchers_) deliver_locked(w, e, cache);
  history_.push_back(std::move(e));
  while (history_.size() > options_.history_limit) {
    history_start_ = history_.front().rv;
    history_.pop_front();
  }
}

std::shared_ptr<const std::string> Store::line_locked(const Watcher& w, const std::string& type,
                                                      const Json& obj) {
  Json ev = {{"type", type}, {"object", nullptr}};
  if (w.table && w.info) {
    ev["object"] = to_table(*w.info, output(*w.info, obj));
  } else if (w.api_version == "events.k8s.io/v1") {
    ev["object"] = event_from_core(obj);
  } else if (str_at(obj, "apiVersion") == w.api_version) {
    ev["object"] = obj;
  } else {
    Json o = obj;
    o["apiVersion"] = w.api_version;
    ev["object"] = std::move(o);
  }
  return std::make_shared<const std::string>(ev.dump() + "\n");
}

void Store::deliver_locked(Watcher& w, const Event& e, LineCache& cache) {
  if (e.storage_key != w.storage_key) return;
  auto matches = [&](const Json* o) {
    if (o == nullptr) return false;
    if (!w.ns.empty() && str_at(*o, "metadata", "namespace") != w.ns) return false;
    return w.labels.matches(*o) && w.fields.matches(*o);
  };
  std::string type = e.type;
  if (e.type == "MODIFIED") {
    const bool now = matches(e.object.get());
    const bool before = matches(e.old.get());
    if (!now && !before) return;
    if (now && !before) type = "ADDED";
    if (!now && before) type = "DELETED";
  } else if (!matches(e.object.get())) {
    return;
  }
  auto& line = cache[w.api_version + "|" + type + (w.table ? "|table" : "")];
  if (!line) line = line_locked(w, type, *e.object);
  w.sink.push(line);
}

uint64_t Store::watch(const ResourceInfo& r, const std::string& ns, const ListOptions& opt, WatchSink sink) {
  Watcher w;
  w.storage_key = r.storage_key();
  w.ns = r.namespaced ? ns : "";
  w.api_version = r.api_version();
  w.kind = r.kind;
  w.labels = LabelSelector::parse(opt.label_selector);
  w.fields = FieldSelector::parse(opt.field_selector, r.kind);
  w.bookmarks = opt.allow_bookmarks;
  w.table = opt.table;
  w.info = std::make_shared<const ResourceInfo>(r);
  w.sink = std::move(sink);
  std::lock_guard lock(mu_);
  const uint64_t id = next_watch_++;
  if (stopping_) {
    // The server is shutting down: a watch registered now would outlive the HTTP transport its sink
    // writes to (stop() has already closed the others). End it at once.
    w.sink.close();
    return id;
  }
  if (opt.resource_version.empty() || opt.resource_version == "0") {
    auto objs = objects_.find(w.storage_key);
    if (objs != objects_.end()) {
      for (const auto& [k, o] : objs->second) {
        if (!w.ns.empty() && str_at(*o, "metadata", "namespace") != w.ns) continue;
        if (!w.labels.matches(*o) || !w.fields.matches(*o)) continue;
        w.sink.push(line_locked(w, "ADDED", *o));
      }
    }
  } else {
    uint64_t from = 0;
    try {
      size_t used = 0;
      from = std::stoull(opt.resource_version, &used);
      if (used != opt.resource_version.size()) throw std::invalid_argument("rv");
    } catch (const std::exception&) {
      throw bad_request("resourceVersion: Invalid value: \"" + opt.resource_version + "\": must be a number");
    }
    if (from > rv_) {
      // A point this server has not reached (a client's resourceVersion from another server, or one
      // whose store was reset): the real server waits a few seconds for its cache, then answers so.
      throw ApiError(504, "Timeout",
                     "Too large resource version: " + std::to_string(from) + ", current: " + std::to_string(rv_),
                     Json{{"causes", Json::array({{{"reason", "ResourceVersionTooLarge"},
                                                   {"message", "Too large resource version"}}})},
                          {"retryAfterSeconds", 1}});
    }
    if (from < history_start_) {
      throw ApiError(410, "Expired",
                     "too old resource version: " + std::to_string(from) + " (" +
                         std::to_string(history_start_ + 1) + ")");
    }
    for (const Event& e : history_) {
      LineCache cache;
      if (e.rv > from) deliver_locked(w, e, cache);
    }
  }
  watchers_.emplace(id, std::move(w));
  return id;
}

void Store::unwatch(uint64_t id) {
  std::lock_guard lock(mu_);
  watchers_.erase(id);
}

void Store::drop_watches() {
  std::lock_guard lock(mu_);
  for (auto& [id, w] : watchers_) w.sink.close();
  watchers_.clear();
}

size_t Store::watch_count() const {
  std::lock_guard lock(mu_);
  return watchers_.size();
}

uint64_t Store::resource_version() const {
  std::lock_guard lock(mu_);
  return rv_;
}

size_t Store::history_size() const {
  std::lock_guard lock(mu_);
  return history_.size();
}

void Store::compact_history() {
  std::lock_guard lock(mu_);
  history_.clear();
  history_start_ = rv_;
}

}  // namespace kai::apiserver
