#pragma once
// The object store of the test API server: every object kept as a JSON tree per resource, one global
// resourceVersion counter, a bounded event history for watches, and the real server's admission and
// validation traps (docs/build-and-ci.md "The test API server"). Internal to kai_apiserver: it is the library's codec unit, so
// nlohmann appears here and nowhere in the public header (api_server.hpp).
//
// Storage layout (all in memory, guarded by one mutex):
//   resources_   "group/version/plural" -> ResourceInfo (what is served, from built-ins and CRDs)
//   objects_     "group/plural" (storage key) -> ordered map "namespace/name" -> object
//   history_     the last `history_limit` events, in resourceVersion order, for watches

#include <boost/core/noncopyable.hpp>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "k8s/apiserver/api_error.hpp"
#include "k8s/apiserver/selectors.hpp"
#include "k8s/http/http_message.hpp"

namespace kai::apiserver {

/// One resource served at one group/version (built in or from a CustomResourceDefinition).
// bugprone-exception-escape is silenced here: the implicit moves are noexcept; the check counts the
// invariant assertion inside nlohmann::json's move constructor as a throw.
struct ResourceInfo {  // NOLINT(bugprone-exception-escape)
  std::string group;     ///< "" for core.
  std::string version;   ///< "v1", "v2alpha2"...
  std::string resource;  ///< Plural: "pods".
  std::string singular;
  std::string kind;
  std::string list_kind;
  std::vector<std::string> short_names;
  bool namespaced = true;
  bool has_status = false;      ///< Has a status subresource.
  bool has_generation = false;  ///< metadata.generation is kept and bumped on spec changes.
  bool custom = false;          ///< Served from a CRD (no strategic merge patch).
  bool read_only = false;       ///< Only subresource-style kinds (Binding), never stored.
  Json schema;                  ///< openAPIV3Schema of a CRD version (for pruning); null otherwise.
  Json printer_columns;         ///< additionalPrinterColumns of a CRD version; null otherwise.
  std::string api_version() const { return group.empty() ? version : group + "/" + version; }
  /// Where the objects live: events.k8s.io/v1 Events share core/v1's storage, as on a real server.
  std::string storage_key() const {
    return (group == "events.k8s.io" ? std::string() : group) + "/" + resource;
  }
  /// "pods" or "deployments.apps": the name used in error messages.
  std::string qualified() const { return group.empty() ? resource : resource + "." + group; }
};

/// Options of a list or a watch, from the query string.
struct ListOptions {
  std::string label_selector;
  std::string field_selector;
  std::string resource_version;  ///< "" = most recent; "0" = any (unpaginated).
  int64_t limit = 0;
  std::string continue_token;
  bool allow_bookmarks = false;
  int64_t timeout_seconds = 0;  ///< Watch only; 0 = no timeout.
  bool table = false;           ///< Watch only: send each object as a meta.k8s.io Table (kubectl get -w).
};

/// Where a watch's events go, one event + '\n' per chunk. Called with the store's lock held, in
/// resourceVersion order: must not block or call back into the store.
using WatchSink = http::StreamSink;

/// Settings of the store. Every field can be changed before start().
struct StoreOptions {
  /// Events kept for watches that resume from a resourceVersion. Default: 10000.
  size_t history_limit = 10000;
  /// Period of BOOKMARK events to watchers that allow them. Default: 1 s (the real server: ~1 min).
  std::chrono::milliseconds bookmark_interval{1000};
  /// Kubelet stand-in: bound pods become Running and graceful deletions are confirmed. Default: off.
  bool kubelet = false;
  /// Delay of the kubelet stand-in's actions. Default: 50 ms.
  std::chrono::milliseconds kubelet_delay{50};
  /// Kubelet stand-in: a reservation pod (label app=kai-resource-reservation) that starts gets the
  /// UUID of a GPU of its node in `run.ai/reserve_for_gpu_index`, as KAI's reservation image writes
  /// it. Off: the annotation never comes (reservation timeouts). Default: on.
  bool reserve_gpus = true;
};

/// The in-memory API object store. Thread-safe; every method takes the one lock.
class Store : private boost::noncopyable {
 public:
  explicit Store(StoreOptions options);
  ~Store();

  /// Starts the background thread (bookmarks, kubelet stand-in).
  void start();
  /// Stops the background thread and closes every watch.
  void stop();

  /// Loads a CustomResourceDefinition (as parsed from a file) and serves its kinds.
  void create_crd(const Json& crd);

  /// The resource served at group/version/plural, or null.
  std::shared_ptr<const ResourceInfo> find(const std::string& group, const std::string& version,
                                           const std::string& resource) const;
  /// Every resource served now, for discovery.
  std::vector<std::shared_ptr<const ResourceInfo>> resources() const;

  /// The write methods take `dry_run` (query dryRun=All): validated and answered, never stored.
  Json create(const ResourceInfo& r, const std::string& ns, Json body, bool dry_run = false);
  Json get(const ResourceInfo& r, const std::string& ns, const std::string& name) const;
  Json list(const ResourceInfo& r, const std::string& ns, const ListOptions& opt) const;
  /// The same list, serialized: its items are written from the stored objects, not copied first.
  std::string list_body(const ResourceInfo& r, const std::string& ns, const ListOptions& opt) const;
  /// PUT of the main resource (subresource "") or of "status".
  Json update(const ResourceInfo& r, const std::string& ns, const std::string& name, Json body,
              const std::string& subresource, bool dry_run = false);
  /// PATCH; `content_type` selects merge, JSON or strategic merge patch.
  Json patch(const ResourceInfo& r, const std::string& ns, const std::string& name,
             const std::string& content_type, const std::string& body, const std::string& subresource,
             bool dry_run = false);
  /// DELETE with DeleteOptions (preconditions, gracePeriodSeconds). Returns the object.
  Json remove(const ResourceInfo& r, const std::string& ns, const std::string& name, const Json& options,
              bool dry_run = false);
  /// POST pods/binding.
  Json bind(const std::string& ns, const std::string& pod, const Json& binding);
  /// POST pods/eviction.
  Json evict(const std::string& ns, const std::string& pod, const Json& eviction);

  /// Starts a watch; initial events are pushed before this returns. Returns its id, or throws
  /// ApiError 410 when the resourceVersion is older than the history (the caller turns that into
  /// an ERROR event, as the real server does).
  uint64_t watch(const ResourceInfo& r, const std::string& ns, const ListOptions& opt, WatchSink sink);
  /// Ends a watch (the client went away). Unknown ids are ignored.
  void unwatch(uint64_t id);
  /// Closes every open watch (fault injection "drop watches").
  void drop_watches();
  /// Number of open watches.
  size_t watch_count() const;

  /// The current global resourceVersion.
  uint64_t resource_version() const;
  /// Events kept in the history now.
  size_t history_size() const;
  /// Forgets the history, so that any watch from an older resourceVersion gets 410.
  void compact_history();
  /// Turns the kubelet stand-in on or off.
  void set_kubelet(bool on);
  /// Turns the reservation pods' GPU annotation on or off (see StoreOptions::reserve_gpus).
  void set_reserve_gpus(bool on);
  /// Number of stored objects of all kinds.
  size_t object_count() const;

 private:
  struct Event {
    uint64_t rv = 0;
    std::string storage_key;
    std::string type;  // ADDED, MODIFIED, DELETED
    std::shared_ptr<const Json> object;
    std::shared_ptr<const Json> old;  // the previous state, for selector transitions
  };
  struct Watcher {
    std::string storage_key;
    std::string ns;
    std::string api_version;
    std::string kind;
    LabelSelector labels;
    FieldSelector fields;
    bool bookmarks = false;
    bool table = false;
    std::shared_ptr<const ResourceInfo> info;
    WatchSink sink;
  };
  struct Action {
    std::chrono::steady_clock::time_point at;
    std::string kind;  // "run" or "confirm"
    std::string ns, name, uid;
  };
  using Objects = std::map<std::string, std::shared_ptr<const Json>>;
  /// One page of a list as read under the lock: the stored objects (shared, not copied) and what
  /// the list's metadata says. `list` and `list_body` render it outside the lock.
  struct ListPage {
    std::vector<std::shared_ptr<const Json>> items;
    uint64_t resource_version = 0;
    std::string continue_token;     ///< empty: the last page
    int64_t remaining_items = -1;   ///< remainingItemCount; -1: not told (a filtered list)
    Json metadata() const;
  };
  ListPage list_page(const ResourceInfo& r, const std::string& ns, const ListOptions& opt) const;

  void register_builtins();
  void register_crd_locked(const Json& crd);
  void unregister_crd_locked(const Json& crd);
  void add_resource_locked(std::shared_ptr<ResourceInfo> info);
  const ResourceInfo* find_any_version_locked(const std::string& storage_key) const;

  Json create_locked(const ResourceInfo& r, const std::string& ns, Json body);
  Json update_locked(const ResourceInfo& r, const std::string& ns, const std::string& name, Json body,
                     const std::string& subresource);
  Json remove_locked(const ResourceInfo& r, const std::string& ns, const std::string& name,
                     const Json& options);
  void erase_locked(const ResourceInfo& r, const std::string& key);
  void emit_locked(const std::string& storage_key, const std::string& type, std::shared_ptr<const Json> obj,
                   std::shared_ptr<const Json> old);
  using LineCache = std::map<std::string, std::shared_ptr<const std::string>>;
  /// Sends `e` to `w` if it matches; `cache` shares one serialized line among watchers of an event.
  void deliver_locked(Watcher& w, const Event& e, LineCache& cache);
  std::shared_ptr<const std::string> line_locked(const Watcher& w, const std::string& type, const Json& obj);
  Json output(const ResourceInfo& r, const Json& stored) const;
  void check_namespace_locked(const ResourceInfo& r, const std::string& ns) const;
  void admit_pod_locked(Json& pod, const Json* old);
  void schedule_locked(const std::string& kind, const Json& pod);
  void tick();
  void run_actions_locked(std::chrono::steady_clock::time_point now);
  /// A GPU UUID of `pod`'s node that no other pod there holds as its reservation, or "".
  std::string free_gpu_uuid_locked(const Json& pod);
  std::string next_rv_locked() { return std::to_string(++rv_); }
  /// Stores `next` as the new version of the pod in `slot` (a new resourceVersion) and tells the
  /// watchers (MODIFIED); returns it. For the server's own pod changes: binding, kubelet stand-in.
  std::shared_ptr<const Json> replace_pod_locked(std::shared_ptr<const Json>& slot, Json next);

  StoreOptions options_;
  mutable std::mutex mu_;
  uint64_t rv_ = 0;
  std::map<std::string, std::shared_ptr<const ResourceInfo>> resources_;
  std::map<std::string, Objects> objects_;
  std::deque<Event> history_;
  uint64_t history_start_ = 0;  // every event with rv > history_start_ is in history_
  std::map<uint64_t, Watcher> watchers_;
  uint64_t next_watch_ = 1;
  std::vector<Action> actions_;
  std::thread thread_;
  std::condition_variable cv_;
  bool stopping_ = false;
  bool running_ = false;
  bool dry_run_ = false;  // set for the duration of one dry-run request
};

}  // namespace kai::apiserver
