#pragma once
// Helpers shared by the files that implement Store (store*.cpp): fields and keys of stored objects,
// the clock and the random numbers the server stamps objects with, the Conflict error, and the scope
// of one dry-run request. Internal to kai_apiserver, like store.hpp.

#include <ctime>
#include <random>
#include <string>

#include "k8s/apiserver/store.hpp"
#include "k8s/model/time.hpp"

namespace kai::apiserver {

/// The current time as an RFC 3339 timestamp (creationTimestamp, conditions).
inline std::string now_rfc3339() {
  return model::format_rfc3339(static_cast<int64_t>(std::time(nullptr)));
}

/// The random numbers of this thread (uids, generated names, pod IPs).
inline std::mt19937_64& rng() {
  static thread_local std::mt19937_64 gen{std::random_device{}()};
  return gen;
}

/// The key of an object within its resource: "namespace/name" ("/name" when cluster-scoped).
inline std::string obj_key(const std::string& ns, const std::string& name) {
  return ns + "/" + name;
}

/// The string at `j[a]` (or `j[a][b]`), or "" when absent or not a string.
inline std::string str_at(const Json& j, const char* a, const char* b = nullptr) {
  auto it = j.find(a);
  if (it == j.end()) return "";
  if (b == nullptr) return it->is_string() ? it->get<std::string>() : "";
  if (!it->is_object()) return "";
  auto jt = it->find(b);
  return (jt != it->end() && jt->is_string()) ? jt->get<std::string>() : "";
}

/// Whether `stored` reads as resource `r` as it is (Store::output answers it unchanged): not an Event
/// asked for as events.k8s.io, and of `r`'s apiVersion and kind.
inline bool served_as_stored(const ResourceInfo& r, const Json& stored) {
  return r.group != "events.k8s.io" && str_at(stored, "apiVersion") == r.api_version() &&
         str_at(stored, "kind") == r.kind;
}

/// 409 Conflict on `name` of resource `r`, worded as the real server does.
inline ApiError conflict(const ResourceInfo& r, const std::string& name, const std::string& why) {
  return {409, "Conflict", "Operation cannot be fulfilled on " + r.qualified() + " \"" + name + "\": " + why,
          Json{{"name", name}, {"group", r.group}, {"kind", r.resource}}};
}

/// Sets a flag for one scope.
struct FlagScope {
  bool& flag;
  FlagScope(bool& f, bool v) : flag(f) { flag = v; }
  ~FlagScope() { flag = false; }
};

}  // namespace kai::apiserver
