#pragma once
// A reflector for one kind: LIST (paginated), then WATCH from the list's resourceVersion with
// bookmarks, resuming after a dropped stream (a watch answered 429 comes back after its Retry-After,
// bounded). Every list (the first, and the one after a 410 Gone) is handed on as the difference from
// what the reflector delivered before: synthetic ADDED and MODIFIED for new and changed objects,
// DELETED for the ones the list lacks, then a BOOKMARK at the list's resourceVersion; so a consumer
// that only applies events stays consistent, and a relist of 150,000 pods is never one giant record.
// Only that BOOKMARK carries the list's resourceVersion (the events before it carry none): a
// consumer's last resourceVersion is a point it holds everything up to, even when it stopped
// half-way through a list, so that a restart may watch on from it instead of listing
// (start(resume_from)). Such a resumed watch is caught up once the changes the server kept since
// that point have come (ReflectorOptions::catch_up_quiet); a BOOKMARK marked from_list says so, as
// the end of a list does. A point the server no longer keeps (410), or a watch it does not open, lists instead.
// Malformed lines are reported and skipped without ending the stream. Runs on its own thread; the
// callbacks run there.

#include <atomic>
#include <boost/core/noncopyable.hpp>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "k8s/client/kube_client.hpp"

namespace kai::k8s {

enum class ReflectorEventType : uint8_t { kAdded, kModified, kDeleted, kBookmark };

struct ReflectorEvent {
  ReflectorEventType type = ReflectorEventType::kAdded;
  std::string kind;
  /// The object as received (JSON). A synthetic DELETED carries the name, namespace and last known
  /// resourceVersion only.
  std::string object_json;
  /// The stream position after this event: the object's resourceVersion for a watch event, the
  /// list's for the BOOKMARK that ends a list, "" for the events of a list (the position is not
  /// reached until the list ends).
  std::string resource_version;
  /// Made from a LIST rather than received on the watch; a BOOKMARK with it ends the list, or says a
  /// resumed watch has caught up: the consumer then holds the kind as the server has it.
  bool from_list = false;
};

struct ReflectorOptions {
  std::string kind;       ///< "Pod"
  std::string list_path;  ///< "/api/v1/pods"
  int64_t page_size = 500;
  /// The server ends each watch after this long; the reflector then watches again from where it was.
  int64_t watch_timeout_seconds = 300;
  /// Largest accepted object; larger ones are reported and skipped. Default: 3 MiB (etcd's limit).
  size_t max_object_bytes = 3 * 1024 * 1024;
  /// Pause before retrying after an error (doubles up to 10 s).
  std::chrono::milliseconds retry_backoff{200};
  /// Longest wait a watch answered 429 waits for its Retry-After before watching again (stop() cuts
  /// it short). Default: 60 s.
  std::chrono::milliseconds max_retry_after{60000};
  /// A kind whose CustomResourceDefinition a cluster may lack (Topology): a list answered 404 is an
  /// empty list (the kind is synced with no objects) and is tried again every few seconds, so that
  /// installing the CRD later is noticed. Default: false (a 404 is an error retried until it lists).
  bool absent_is_empty = false;
  /// A watch resumed from a restart's resourceVersion is caught up when, after the server answered,
  /// no line came for `catch_up_quiet`, or a BOOKMARK came (the server sent everything before it), or
  /// `catch_up_limit` passed: the server sends the changes it kept since that point at once, so
  /// only a cluster changing without pause keeps the stream busy that long (and those changes are
  /// the present, not the backlog). The history a server keeps is bounded (beyond it: 410, a list).
  std::chrono::milliseconds catch_up_quiet{100};
  std::chrono::milliseconds catch_up_limit{1000};
};

class Reflector : private boost::noncopyable {
 public:
  using OnEvent = std::function<void(ReflectorEvent)>;
  using OnError = std::function<void(const std::string& message)>;

  Reflector(KubeClient& client, ReflectorOptions options, OnEvent on_event, OnError on_error);
  ~Reflector();

  /// Starts listing and watching. `resume_from`: a resourceVersion to watch from without listing
  /// (after a restart: the consumer holds every object up to it); "" lists first. `known`: key
  /// ("namespace/name") -> resourceVersion of the objects the consumer already holds, so that a
  /// later list is diffed against them.
  void start(const std::string& resume_from = "", std::map<std::string, std::string> known = {});
  void stop();
  /// Lists again as soon as possible, diffed against `known` instead of what the reflector delivered:
  /// for a consumer that could not keep some delivered events (its log was full) and holds `known`.
  /// The watch running now is ended; what it delivered after `known` was taken comes again or as a
  /// no-op, so the consumer ends up with the list's state either way. Thread-safe.
  void relist(std::map<std::string, std::string> known);
  /// True once the first list was delivered, or a resumed watch caught up.
  bool synced() const { return synced_; }
  /// Relists done (initial one included), for tests.
  int lists() const { return lists_; }
  /// Resumed watches that caught up without a list, for tests.
  int resumes() const { return resumes_; }

 private:
  void run(std::string resume_from);
  /// Lists every page and delivers the difference from `known_`. Returns the list's
  /// resourceVersion, "" on failure.
  std::string list_all();
  /// The list of a kind not served (ReflectorOptions::absent_is_empty): "" (nothing to watch).
  std::string list_absent();
  /// Delivers a DELETED event for each known object whose key is not in `listed`.
  void deliver_deleted_unless(const std::set<std::string>& listed);
  void deliver(ReflectorEventType type, bool from_list, std::string object_json,
               std::string resource_version);
  /// Watches from `rv` until the stream ends. Returns the last resourceVersion seen, or "" when the
  /// server answered 410 (relist needed).
  std::string watch_from(const std::string& rv, bool* gone);
  /// A resumed watch has delivered what the server kept since the resume point, up to `rv`.
  void caught_up(const std::string& rv);

  KubeClient& client_;
  ReflectorOptions options_;
  OnEvent on_event_;
  OnError on_error_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> synced_{false};
  std::atomic<int> lists_{0};
  std::atomic<int> resumes_{0};
  /// Watching from a restart's resourceVersion, not caught up yet (reflector thread only).
  bool catching_up_ = false;
  bool absent_ = false;  ///< The last list found the kind not served (reported once).
  /// key -> resourceVersion of every object delivered and not deleted (the reflector thread's own).
  std::map<std::string, std::string> known_;
  std::mutex stream_mu_;
  std::shared_ptr<http::WatchStream> stream_;
  /// A relist asked by relist() and not begun, with the consumer's objects (guarded by stream_mu_, so
  /// that a watch starting as it is asked is ended too).
  bool relist_asked_ = false;
  std::map<std::string, std::string> relist_known_;
  /// Takes an asked relist: known_ becomes the consumer's map. True when there was one.
  bool take_relist();
  bool relist_pending();
  /// The Retry-After of a watch answered 429, set by watch_from and waited out by run() (reflector
  /// thread only); 0 when the server named no time.
  std::chrono::milliseconds watch_retry_after_{0};
};

}  // namespace kai::k8s
