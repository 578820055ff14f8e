#pragma once
// Shared helpers of the Kubernetes client tests: an in-process kai-apiserver with KAI's CRDs and a
// KubeClient built from the kubeconfig it writes (so every call is verified HTTPS with the bearer
// token), a consumer that rebuilds a store from reflector events while checking their invariants,
// polling with a deadline, temporary directories and environment guards.

#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "k8s/apiserver/api_server.hpp"
#include "k8s/client/cluster_config.hpp"
#include "k8s/client/kube_client.hpp"
#include "k8s/client/reflector.hpp"
#include "k8s/model/base64.hpp"

namespace kai::k8s::test {

using Json = nlohmann::json;
using namespace std::chrono_literals;

inline std::string source_dir() {
  const char* env = std::getenv("KAI_SOURCE_DIR");
  return env != nullptr ? env : KAI_DEFAULT_SOURCE_DIR;
}

/// Polls `done` every `every` until it holds or `timeout` passed; returns its last value. Tests wait
/// with this instead of sleeping blindly.
inline bool eventually(const std::function<bool()>& done, std::chrono::milliseconds timeout = 30s,
                       std::chrono::milliseconds every = 20ms) {
  const auto until = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < until) {
    if (done()) return true;
    std::this_thread::sleep_for(every);
  }
  return done();
}

inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

inline bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

inline std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

/// "ns/name" for namespaced objects, "name" for cluster-scoped ones.
inline std::string key_of(const Json& object) {
  const Json meta = object.value("metadata", Json::object());
  const std::string ns = meta.value("namespace", "");
  const std::string name = meta.value("name", "");
  return ns.empty() ? name : ns + "/" + name;
}

inline std::string rv_of(const Json& object) {
  return object.value("metadata", Json::object()).value("resourceVersion", "");
}

/// A resourceVersion as a number (the test server's are decimal counters); nullopt if it is not one.
inline std::optional<uint64_t> rv_number(const std::string& rv) {
  if (rv.empty() || rv.size() > 19) return std::nullopt;
  uint64_t n = 0;
  for (char c : rv) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + static_cast<uint64_t>(c - '0');
  }
  return n;
}

using model::base64_encode;

inline std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void write_text(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream out(path, std::ios::trunc);
  out << text;
  ASSERT_TRUE(static_cast<bool>(out)) << "cannot write " << path;
}

/// A fresh directory under $TMPDIR, removed with its contents by the destructor.
class TempDir {
 public:
  TempDir() {
    std::error_code ec;
    std::string tmpl = (std::filesystem::temp_directory_path(ec) / "kai-client-test-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) != nullptr) path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& rel) const { return path_ + "/" + rel; }

 private:
  std::string path_;
};

/// Sets (or with nullptr unsets) an environment variable and restores it on destruction. Tests only
/// touch the environment on their own thread, before any client reads it.
class EnvGuard {
 public:
  EnvGuard(std::string name, const char* value) : name_(std::move(name)) {
    if (const char* old = std::getenv(name_.c_str()); old != nullptr) old_ = old;
    if (value != nullptr) {
      ::setenv(name_.c_str(), value, 1);
    } else {
      ::unsetenv(name_.c_str());
    }
  }
  ~EnvGuard() {
    if (old_) {
      ::setenv(name_.c_str(), old_->c_str(), 1);
    } else {
      ::unsetenv(name_.c_str());
    }
  }
  EnvGuard(const EnvGuard&) = delete;
  EnvGuard& operator=(const EnvGuard&) = delete;

 private:
  std::string name_;
  std::optional<std::string> old_;
};

/// Rebuilds the objects of one kind from reflector events as a consumer must: ADDED / MODIFIED set
/// the object, DELETED removes it, BOOKMARK only moves the stream position. A list arrives as events
/// marked from_list (the difference from what was delivered before) ended by a from_list BOOKMARK.
/// While doing so it records every violation of the reflector's contract:
///  - per object, the resourceVersions delivered by watch events strictly increase (no duplicated
///    or reordered state), and a list never takes an object back to an older one;
///  - per stream, watch events come after the last position (list rv or BOOKMARK rv);
///  - ADDED only for an object not held, MODIFIED / DELETED only for one held (no lost ADDED);
///  - a list's events carry no resourceVersion (the position is reached at its end), the BOOKMARK
///    ending it the list's; no object newer than that, no unchanged one.
/// Thread-safe: the reflector calls it on its own thread, the test reads it on the main thread.
class StoreConsumer {
 public:
  explicit StoreConsumer(std::string kind) : kind_(std::move(kind)) {}

  Reflector::OnEvent on_event() {
    return [this](ReflectorEvent ev) { apply(std::move(ev)); };
  }
  Reflector::OnError on_error() {
    return [this](const std::string& message) {
      std::lock_guard lock(mu_);
      errors_.push_back(message);
    };
  }

  void apply(ReflectorEvent ev) {
    std::lock_guard lock(mu_);
    if (ev.kind != kind_) violation("event of kind \"" + ev.kind + "\" on the " + kind_ + " reflector");
    if (ev.from_list && ev.type != ReflectorEventType::kBookmark) {
      if (!ev.resource_version.empty()) violation(type_name(ev.type) + " of a list carries a resourceVersion");
      return listed(ev);
    }
    const auto rv = rv_number(ev.resource_version);
    if (!rv) {
      violation(type_name(ev.type) + " with a non-numeric resourceVersion \"" + ev.resource_version + "\"");
      return;
    }
    if (ev.from_list) return list_ended(ev, *rv);
    if (ev.type == ReflectorEventType::kBookmark) {
      ++bookmarks_;
      if (*rv < position_) violation("BOOKMARK " + ev.resource_version + " before the position " + std::to_string(position_));
      position_ = std::max(position_, *rv);
      return;
    }
    const Json obj = Json::parse(ev.object_json, nullptr, false);
    if (!obj.is_object()) {
      violation(type_name(ev.type) + " carries no object");
      return;
    }
    const std::string key = key_of(obj);
    if (obj.value("kind", "") != kind_) violation(key + ": object kind \"" + obj.value("kind", "") + "\"");
    if (rv_of(obj) != ev.resource_version) violation(key + ": event rv differs from the object's");
    const std::string what = type_name(ev.type) + " " + key + "@" + ev.resource_version;
    if (*rv <= position_) violation(what + " not after the stream position " + std::to_string(position_));
    if (auto last = last_seen_.find(key); last != last_seen_.end() && *rv <= last->second) {
      violation(what + ": not newer than the state already seen (" + std::to_string(last->second) +
                "): a duplicated or reordered state");
    }
    const bool held = store_.count(key) > 0;
    if (ev.type == ReflectorEventType::kAdded && held) violation(what + " for an object already held");
    if (ev.type != ReflectorEventType::kAdded && !held) violation(what + " for an object not held (a lost ADDED)");
    if (ev.type == ReflectorEventType::kDeleted) {
      store_.erase(key);
    } else {
      store_[key] = ev.resource_version;
    }
    last_seen_[key] = std::max(last_seen_[key], *rv);
    seen_.insert({key, ev.resource_version});
    position_ = std::max(position_, *rv);
    ++changes_;
  }

  /// key -> resourceVersion of every object held now.
  std::map<std::string, std::string> versions() const {
    std::lock_guard lock(mu_);
    return store_;
  }
  std::vector<std::string> violations() const {
    std::lock_guard lock(mu_);
    return violations_;
  }
  std::vector<std::string> errors() const {
    std::lock_guard lock(mu_);
    return errors_;
  }
  size_t errors_containing(const std::string& part) const {
    std::lock_guard lock(mu_);
    return static_cast<size_t>(
        std::count_if(errors_.begin(), errors_.end(), [&](const std::string& e) { return contains(e, part); }));
  }
  /// True when the state `key`@`rv` was delivered (by a watch event or inside a RELIST).
  bool saw(const std::string& key, const std::string& rv) const {
    std::lock_guard lock(mu_);
    return seen_.count({key, rv}) > 0;
  }
  /// Object counts of the RELISTs delivered, in order.
  std::vector<size_t> relist_sizes() const {
    std::lock_guard lock(mu_);
    return relist_sizes_;
  }
  /// key -> resourceVersion of the first RELIST.
  std::map<std::string, std::string> first_relist() const {
    std::lock_guard lock(mu_);
    return first_relist_;
  }
  int bookmarks() const {
    std::lock_guard lock(mu_);
    return bookmarks_;
  }
  int changes() const {
    std::lock_guard lock(mu_);
    return changes_;
  }

 private:
  static std::string type_name(ReflectorEventType t) {
    switch (t) {
      case ReflectorEventType::kAdded:
        return "ADDED";
      case ReflectorEventType::kModified:
        return "MODIFIED";
      case ReflectorEventType::kDeleted:
        return "DELETED";
      case ReflectorEventType::kBookmark:
        return "BOOKMARK";
    }
    return "?";
  }

  void violation(const std::string& what) { violations_.push_back(what); }

  /// The BOOKMARK that ends a list (or says a resumed watch caught up) at `rv`.
  void list_ended(const ReflectorEvent& ev, uint64_t rv) {
    const std::string where = "list@" + ev.resource_version;
    if (rv < position_) violation(where + " older than the position " + std::to_string(position_));
    if (newest_listed_ > rv) violation(where + " delivered an object @" + std::to_string(newest_listed_) + ", newer than it");
    newest_listed_ = 0;
    position_ = std::max(position_, rv);
    if (relist_sizes_.empty()) first_relist_ = store_;
    relist_sizes_.push_back(store_.size());
  }

  /// An event of a list: the difference it makes.
  void listed(const ReflectorEvent& ev) {
    const std::string where = "list";
    const Json obj = Json::parse(ev.object_json, nullptr, false);
    if (!obj.is_object()) {
      violation(where + ": " + type_name(ev.type) + " carries no object");
      return;
    }
    const std::string key = key_of(obj);
    const std::string item_rv = rv_of(obj);
    const auto n = rv_number(item_rv);
    const std::string what = where + ": " + type_name(ev.type) + " " + key + "@" + item_rv;
    if (obj.value("kind", "") != kind_) violation(what + " has kind \"" + obj.value("kind", "") + "\"");
    if (!n) {
      violation(what + " without a numeric resourceVersion");
      return;
    }
    newest_listed_ = std::max(newest_listed_, *n);
    if (auto last = last_seen_.find(key); last != last_seen_.end() && *n < last->second) {
      violation(what + " takes the object back from " + std::to_string(last->second));
    }
    const auto held = store_.find(key);
    if (ev.type == ReflectorEventType::kAdded && held != store_.end()) violation(what + " for an object already held");
    if (ev.type != ReflectorEventType::kAdded && held == store_.end()) violation(what + " for an object not held");
    if (ev.type == ReflectorEventType::kModified && held != store_.end() && held->second == item_rv) {
      violation(what + " for an unchanged object");
    }
    if (ev.type == ReflectorEventType::kDeleted) {
      if (held != store_.end() && held->second != item_rv) violation(what + " but the object held is @" + held->second);
      store_.erase(key);
      return;
    }
    store_[key] = item_rv;
    last_seen_[key] = std::max(last_seen_[key], *n);
    seen_.insert({key, item_rv});
    ++changes_;
  }

  const std::string kind_;
  mutable std::mutex mu_;
  std::map<std::string, std::string> store_;
  std::map<std::string, uint64_t> last_seen_;
  std::set<std::pair<std::string, std::string>> seen_;
  uint64_t position_ = 0;
  uint64_t newest_listed_ = 0;  ///< inside a list: the newest object delivered so far
  std::vector<std::string> violations_;
  std::vector<std::string> errors_;
  std::vector<size_t> relist_sizes_;
  std::map<std::string, std::string> first_relist_;
  int bookmarks_ = 0;
  int changes_ = 0;
};

inline std::string dump(const std::map<std::string, std::string>& m) {
  std::string s = "{";
  for (const auto& [k, v] : m) s += (s.size() > 1 ? ", " : "") + k + "@" + v;
  return s + "}";
}

inline std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += "\n  " + x;
  return s;
}

/// A pod of this scheduler (no node) in `ns`.
inline Json pod(const std::string& name, const std::string& ns = "default", Json labels = Json{{"app", "demo"}}) {
  return Json{{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", name}, {"namespace", ns}, {"labels", std::move(labels)}}},
              {"spec",
               {{"schedulerName", "kai-scheduler"},
                {"containers", Json::array({{{"name", "main"}, {"image", "busybox"}}})}}}};
}

/// A KAI PodGroup (scheduling.run.ai/v2alpha2, a CRD kind with a status subresource).
inline Json pod_group(const std::string& name, const std::string& ns = "default") {
  return Json{{"apiVersion", "scheduling.run.ai/v2alpha2"},
              {"kind", "PodGroup"},
              {"metadata", {{"name", name}, {"namespace", ns}}},
              {"spec", {{"queue", "team-a"}, {"minMember", 1}}}};
}

/// An in-process kai-apiserver (KAI's CRDs, bookmarks every 100 ms) and a KubeClient configured from
/// the kubeconfig it wrote: TLS verified against the server's CA, bearer token.
/// A Pod reflector's options over `list_path` (the cluster-wide pod list by default).
inline ReflectorOptions pod_reflector_options(const std::string& list_path = "/api/v1/pods") {
  ReflectorOptions ro;
  ro.kind = "Pod";
  ro.list_path = list_path;
  return ro;
}

class ClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    apiserver::ServerOptions o;
    o.crd_dir = source_dir() + "/deploy/crds";
    o.bookmark_interval = 100ms;
    customize(o);
    server_ = std::make_unique<apiserver::ApiServer>(o);
    auto s = server_->start();
    ASSERT_TRUE(s.is_ok()) << s.message();
    auto cfg = load_kubeconfig(server_->kubeconfig_path());
    ASSERT_TRUE(cfg.is_ok()) << cfg.message();
    config_ = cfg.value();
    ASSERT_TRUE(config_.endpoint.tls);
    ASSERT_FALSE(config_.endpoint.insecure_skip_verify);
    ASSERT_FALSE(config_.endpoint.ca_pem.empty());
    client_ = make_client(fast_retries());
  }
  void TearDown() override {
    client_.reset();
    server_.reset();
  }
  /// Server options before it starts.
  virtual void customize(apiserver::ServerOptions&) {}

  /// Default client options with a short first backoff, so that retry tests stay quick.
  static ClientOptions fast_retries() {
    ClientOptions o;
    o.initial_backoff = 20ms;
    return o;
  }
  std::unique_ptr<KubeClient> make_client(ClientOptions o) const { return std::make_unique<KubeClient>(config_, o); }

  /// Creates an object without HTTP; returns it as stored (null on failure, which is reported).
  Json create(const Json& object) {
    auto r = server_->create_object(object.dump());
    if (!r.is_ok()) {
      ADD_FAILURE() << object.dump() << ": " << r.message();
      return nullptr;
    }
    return Json::parse(r.value());
  }

  Json items(const std::string& api_version, const std::string& kind, const std::string& ns = "") const {
    auto list = server_->list_objects(api_version, kind, ns);
    if (!list.is_ok()) {
      ADD_FAILURE() << list.message();
      return Json::array();
    }
    return Json::parse(list.value())["items"];
  }
  /// The stored object, or null.
  Json find(const std::string& api_version, const std::string& kind, const std::string& ns,
            const std::string& name) const {
    for (const auto& o : items(api_version, kind, ns)) {
      if (o["metadata"].value("name", "") == name) return o;
    }
    return nullptr;
  }
  /// key -> resourceVersion of every stored object of `kind`, as the server lists them.
  std::map<std::string, std::string> versions(const std::string& api_version, const std::string& kind) const {
    std::map<std::string, std::string> out;
    for (const auto& o : items(api_version, kind)) out[key_of(o)] = rv_of(o);
    return out;
  }
  /// The server's counter "verb resource" ("get pods"); 0 when absent.
  uint64_t served(const std::string& key) const {
    const auto counts = server_->request_counts();
    auto it = counts.find(key);
    return it == counts.end() ? 0 : it->second;
  }
  /// Every request on the cluster-wide pod list waits `delay` (pages arrive slowly); counts reset.
  void delay_pod_lists(std::chrono::milliseconds delay) {
    apiserver::Faults slow;
    slow.match = "/api/v1/pods";
    slow.delay = delay;
    server_->set_faults(slow);
    server_->reset_request_counts();
  }

  std::unique_ptr<apiserver::ApiServer> server_;
  ClusterConfig config_;
  std::unique_ptr<KubeClient> client_;
};

}  // namespace kai::k8s::test
