#pragma once
// "namespace/name" spelt into one string reserved once: the key a session build makes for every pod
// and group (150,000 of each at 5,000 nodes), so it builds no temporaries.

#include <string>
#include <string_view>

namespace kai::model {

/// `ns` + "/" + `name`, the slash kept when `ns` is empty (unlike object_key in kinds.hpp): the
/// session's task and group keys have always been spelt so.
inline std::string namespaced_key(std::string_view ns, std::string_view name) {
  std::string key;
  key.reserve(ns.size() + 1 + name.size());
  key.append(ns).push_back('/');
  key.append(name);
  return key;
}

}  // namespace kai::model
